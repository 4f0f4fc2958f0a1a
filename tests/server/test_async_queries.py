"""Asynchronous queries by raw HTTP: ``asyncquery=true`` answered with a query id, Get
Query Info polled while the preparation is held back, then pages and refresh; idempotency,
other recipients, restarts, abandoned queries and the per-recipient bounds."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import httpx
import pytest

from async_support import (
    ASYNC,
    FILES,
    TABLE,
    Clock,
    Gate,
    Lake,
    end_action,
    file_ids,
    lines,
    make_lake,
    poll,
    poll_until_ready,
    query_id,
    running,
    submit,
)
from deltaport.server.tables.async_queries import AsyncQueries
from waiting import wait_until


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    yield make_lake(tmp_path_factory.mktemp("async"))


def _sync_ids(client: httpx.Client, **body: object) -> list[str]:
    response = client.post(TABLE + "/query", json=body)
    assert response.status_code == 200
    return file_ids(response)


def test_the_first_poll_finds_the_query_pending_then_pages_it(lake: Lake) -> None:
    gate = Gate()
    with running(lake, gate=gate) as server, server.client() as client:
        submitted = submit(client, idempotencyKey="k1", includeRefreshToken=True)
        assert "asyncquery=true" in submitted.headers["delta-sharing-capabilities"]
        assert submitted.headers["content-type"].startswith("application/x-ndjson")
        qid = query_id(submitted)
        first = poll(client, qid, maxFiles=1000)
        assert lines(first) == [{"queryStatus": {"queryId": qid, "status": "pending"}}]
        assert first.headers["delta-table-version"] == "0"  # as the reference client needs
        gate.opened.set()
        page = poll_until_ready(client, qid, maxFiles=1000)
        assert page.headers["delta-table-version"] == "0"
        assert list(lines(page)[0]) == ["protocol"] and list(lines(page)[1]) == ["metaData"]
        seen = file_ids(page)
        end = end_action(page)
        refresh = end["refreshToken"]
        while end.get("nextPageToken"):
            page = poll(client, qid, maxFiles=1000, pageToken=end["nextPageToken"])
            seen += file_ids(page)
            end = end_action(page)
        assert len(seen) == FILES
        assert seen == _sync_ids(client)
        # the refresh token refreshes the same files synchronously, as for a sync query
        refreshed = client.post(TABLE + "/query", json={"refreshToken": refresh})
        assert file_ids(refreshed) == seen
        # and asynchronously, paged; the query id (logged with each poll) keeps no token
        again = query_id(submit(client, idempotencyKey="k2", refreshToken=refresh))
        body = again.split(".")[0]
        assert refresh.encode() not in base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        page = poll_until_ready(client, again, maxFiles=1000)
        renewed = file_ids(page)
        while end_action(page).get("nextPageToken"):
            token = end_action(page)["nextPageToken"]
            page = poll(client, again, maxFiles=1000, pageToken=token)
            assert page.status_code == 200, page.text
            renewed += file_ids(page)
        assert renewed == seen


def test_the_same_idempotency_key_gets_the_same_query(lake: Lake) -> None:
    with running(lake, gate=Gate()) as server, server.client() as alice:
        one = query_id(submit(alice, idempotencyKey="same"))
        assert query_id(submit(alice, idempotencyKey="same")) == one
        # the reference Spark client's spelling of the key
        assert query_id(submit(alice, idempotency_key="same")) == one
        assert query_id(submit(alice, idempotencyKey="other")) != one
        assert query_id(submit(alice, idempotencyKey="same", limitHint=5)) != one
        with server.client("bob") as bob:
            assert query_id(submit(bob, idempotencyKey="same")) != one
        assert server.queries.count("alice") == 3


def test_a_query_id_replayed_by_another_recipient_is_unknown(lake: Lake) -> None:
    gate = Gate()
    with running(lake, gate=gate) as server, server.client() as alice:
        qid = query_id(submit(alice, idempotencyKey="mine"))
        gate.opened.set()
        poll_until_ready(alice, qid)
        with server.client("bob") as bob:
            replayed = poll(bob, qid)
            made_up = poll(bob, qid[:-4] + "AAAA")
        for answer in (replayed, made_up):
            assert answer.status_code == 404
            assert answer.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
        assert replayed.json() == made_up.json()
        assert "file" not in replayed.text
        assert server.queries.count("bob") == 0


def test_a_query_survives_a_restart_with_the_same_key_only(lake: Lake) -> None:
    with running(lake, gate=Gate()) as first, first.client() as client:
        qid = query_id(submit(client, idempotencyKey="restart"))
        expected = _sync_ids(client)
    gate = Gate()
    with running(lake, gate=gate) as second, second.client() as client:
        assert lines(poll(client, qid))[0]["queryStatus"]["status"] == "pending"
        gate.opened.set()
        assert file_ids(poll_until_ready(client, qid)) == expected
    with running(lake, key="another-key") as third, third.client() as client:
        unknown = poll(client, qid)
        assert unknown.status_code == 404
        assert unknown.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"


def test_a_query_started_on_one_replica_is_polled_on_another(lake: Lake) -> None:
    gate = Gate()
    with (
        running(lake, gate=gate) as first,
        running(lake) as second,
        first.client() as on_first,
        second.client() as on_second,
    ):
        qid = query_id(submit(on_first, idempotencyKey="replicas", maxFiles=1000))
        page = poll_until_ready(on_second, qid, maxFiles=1000)
        assert first.queries.count() == 1 and second.queries.count() == 1
        seen = file_ids(page)
        token = end_action(page)["nextPageToken"]
        gate.opened.set()
        # the next page on the first replica, once it has prepared the query too
        page = poll_until_ready(on_first, qid, maxFiles=5000, pageToken=token)
        assert seen + file_ids(page) == _sync_ids(on_second)


def test_an_abandoned_query_is_cleaned_up(lake: Lake) -> None:
    clock = Clock()
    gate = Gate()
    with (
        running(lake, gate=gate, clock=clock, idle_seconds=60) as server,
        server.client() as client,
    ):
        gate.opened.set()
        qid = query_id(submit(client, idempotencyKey="left"))
        poll_until_ready(client, qid)
        assert server.queries.count("alice") == 1
        assert server.queries.held_bytes("alice") > 0
        clock.now += 59
        poll(client, qid)  # a poll keeps it
        clock.now += 59
        other = query_id(submit(client, idempotencyKey="new"))
        assert server.queries.count("alice") == 2
        clock.now += 61
        with server.client("bob") as bob:
            query_id(submit(bob, idempotencyKey="sweeps"))
        assert server.queries.count("alice") == 0
        assert server.queries.held_bytes("alice") == 0
        # the same key now starts a new query, and the dropped id is prepared again
        assert query_id(submit(client, idempotencyKey="new")) != other
        assert file_ids(poll_until_ready(client, qid)) == _sync_ids(client)


def test_an_abandoned_query_is_dropped_while_no_request_comes(lake: Lake) -> None:
    clock = Clock()
    with (
        running(lake, clock=clock, idle_seconds=60, sweep_every=0.01) as server,
        server.client() as client,
    ):
        left = query_id(submit(client, idempotencyKey="quiet"))
        poll_until_ready(client, left)
        clock.now += 31
        kept = query_id(submit(client, idempotencyKey="kept"))
        assert server.queries.count("alice") == 2
        clock.now += 30  # ``left`` idle for 61 s, ``kept`` for 30 s; no request from now on
        _swept(server.queries, left)
        assert server.queries.known(kept)  # it swept, and kept the query still in use
        clock.now += 31
        _swept(server.queries, kept)
        assert server.queries.count() == 0


def _swept(queries: AsyncQueries, query: str) -> None:
    """Wait for the sweeper to drop ``query``."""
    wait_until(lambda: not queries.known(query), 10, "the sweeper to drop the idle query", 0.01)


def test_a_recipient_past_its_bound_is_answered_429(lake: Lake) -> None:
    with (
        running(lake, gate=Gate(), max_per_recipient=2) as server,
        server.client() as alice,
        server.client("bob") as bob,
    ):
        query_id(submit(alice, idempotencyKey="a"))
        query_id(submit(alice, idempotencyKey="b"))
        refused = submit(alice, idempotencyKey="c")
        assert refused.status_code == 429
        assert refused.json()["errorCode"] == "TOO_MANY_REQUESTS"
        assert int(refused.headers["retry-after"]) >= 1
        # a retry of a kept query is not a new one; other recipients are not bound
        assert submit(alice, idempotencyKey="a").status_code == 200
        assert submit(bob, idempotencyKey="c").status_code == 200


def test_a_selection_over_the_memory_bound_is_answered_without_being_held(lake: Lake) -> None:
    gate = Gate()
    with running(lake, gate=gate, max_bytes_per_recipient=1) as server, server.client() as c:
        qid = query_id(submit(c, idempotencyKey="big"))
        gate.opened.set()
        assert file_ids(poll_until_ready(c, qid)) == _sync_ids(c)
        assert server.queries.held_bytes("alice") == 0


def test_a_failed_preparation_is_a_failed_status(lake: Lake) -> None:
    broken = TABLE.replace("/many", "/broken")
    gate = Gate()
    with running(lake, gate=gate) as server, server.client() as client:
        qid = query_id(submit(client, broken, idempotencyKey="fails"))
        gate.opened.set()
        status = lines(poll(client, qid, broken))[0]["queryStatus"]
        for _ in range(1000):
            if status["status"] != "pending":
                break
            status = lines(poll(client, qid, broken))[0]["queryStatus"]
        assert status["status"] == "failed"
        assert status["errorCode"] == "TABLE_CORRUPT"
        assert str(lake.table.parent) not in status["errorMessage"]
        # the id is bound to its table too
        assert poll(client, qid).status_code == 404


def test_range_queries_and_servers_without_async_answer_at_once(lake: Lake) -> None:
    with running(lake) as server, server.client() as client:
        ranged = client.post(TABLE + "/query", json={"startingVersion": 0}, headers=ASYNC)
        assert ranged.status_code == 400  # history is not shared: a sync answer's error
    with running(lake, enabled=False) as server, server.client() as client:
        answer = client.post(TABLE + "/query", json={"idempotencyKey": "x"}, headers=ASYNC)
        assert "asyncquery" not in answer.headers["delta-sharing-capabilities"]
        assert len(file_ids(answer)) == FILES
