"""An asynchronous query follows the recipient's access as it is at each poll: once a
partition filter binds other properties, or the table gets a filter or stops sharing its
history, a poll of a query prepared before (on this replica or another) and a resubmission
with its idempotency key never list a file the recipient may no longer see; they answer
as a new submission would."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from async_support import Gate, Lake, lines, poll, poll_until_ready, query_id, running, submit
from deltaport.catalog.rows import RecipientChange
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from waiting import wait_until

TABLE = "/shares/s/schemas/sc/tables/people"
OPEN = "/shares/s/schemas/sc/tables/open"
FILTER = "country = CURRENT_RECIPIENT('country')"
FOLLOW_SECONDS = 30
"""How long a server on the catalog may take to see a change (it polls every second)."""


def _cli(url: str, *args: str) -> None:
    assert cli([*args, "--catalog", url]) == 0


@pytest.fixture
def lake(tmp_path: Path) -> Lake:
    """Two tables of one FR and one DE file each (``people`` filtered by the recipient's
    ``country``, ``open`` not), history shared; ``alice`` is in FR."""
    url = f"sqlite:///{tmp_path}/catalog.db"
    _cli(url, "catalog", "init")
    _cli(url, "share", "create", "s")
    for name, extra in (("people", ["--partition-filter", FILTER]), ("open", [])):
        root = tmp_path / name
        for country in ("FR", "DE"):
            data = pa.table({"id": [len(country)], "country": [country]})
            write_deltalake(str(root), data, mode="append", partition_by=["country"])
        _cli(url, "table", "add", f"s.sc.{name}", str(root), "--history", *extra)
    profile = tmp_path / "alice.share"
    created = ["recipient", "create", "alice", "--property", "country=FR"]
    _cli(url, *created, "--endpoint", "http://unused", "-o", str(profile))
    _cli(url, "share", "grant", "s", "--to", "alice")
    token = json.loads(profile.read_text())["bearerToken"]
    return Lake(url, {"alice": token}, tmp_path / "people")


def _countries(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    files = [line["file"] for line in lines(response) if "file" in line]
    found = [file["partitionValues"]["country"] for file in files]
    assert found, response.text
    return sorted(found)


def _sync(client: httpx.Client, table: str = TABLE, **body: Any) -> httpx.Response:
    return client.post(table + "/query", json=body)


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, FOLLOW_SECONDS, "the change to be seen")


def _move_to_de(lake: Lake, *clients: httpx.Client) -> None:
    SqlCatalog(lake.catalog).update_recipient(
        "alice", RecipientChange(properties={"country": "DE"})
    )
    for client in clients:
        _eventually(functools.partial(_lists_only_de, client))


def _lists_only_de(client: httpx.Client) -> bool:
    return _countries(_sync(client)) == ["DE"]


@pytest.fixture
def server(lake: Lake) -> Iterator[Any]:
    with running(lake) as server:
        yield server


def test_a_ready_query_follows_a_changed_property(lake: Lake, server: Any) -> None:
    with server.client() as client:
        qid = query_id(submit(client, TABLE, idempotencyKey="k"))
        assert _countries(poll_until_ready(client, qid, TABLE)) == ["FR"]
        _move_to_de(lake, client)
        assert _countries(poll_until_ready(client, qid, TABLE)) == ["DE"]
        # the query prepared under FR is gone: one query, prepared again under DE
        assert server.queries.count("alice") == 1


def test_a_resubmission_after_a_change_is_a_new_query(lake: Lake, server: Any) -> None:
    with server.client() as client:
        qid = query_id(submit(client, TABLE, idempotencyKey="again"))
        assert _countries(poll_until_ready(client, qid, TABLE)) == ["FR"]
        _move_to_de(lake, client)
        renewed = query_id(submit(client, TABLE, idempotencyKey="again"))
        assert renewed != qid
        assert _countries(poll_until_ready(client, renewed, TABLE)) == ["DE"]
        assert server.queries.count("alice") == 1  # the stale one was dropped, not kept


def test_a_query_follows_a_filter_added_to_its_table(lake: Lake, server: Any) -> None:
    with server.client() as client:
        qid = query_id(submit(client, OPEN, idempotencyKey="open"))
        assert _countries(poll_until_ready(client, qid, OPEN)) == ["DE", "FR"]
        _update(lake.catalog, "open", history_shared=True, partition_filter=FILTER)
        _eventually(lambda: _countries(_sync(client, OPEN)) == ["FR"])
        assert _countries(poll_until_ready(client, qid, OPEN)) == ["FR"]


def test_a_time_travel_query_gets_a_new_querys_error_once_history_stops(
    lake: Lake, server: Any
) -> None:
    with server.client() as client:
        qid = query_id(submit(client, TABLE, idempotencyKey="old", version=1))
        assert _countries(poll_until_ready(client, qid, TABLE)) == ["FR"]
        _update(lake.catalog, "people", history_shared=False, partition_filter=FILTER)
        _eventually(lambda: _sync(client, version=1).status_code == 400)
        refused = submit(client, TABLE, idempotencyKey="new", version=1)
        assert refused.status_code == 400
        polled = poll(client, qid, TABLE)
        assert polled.status_code == 400
        assert polled.json() == refused.json()


def test_replicas_each_drop_what_they_prepared_before_a_change(lake: Lake) -> None:
    gate = Gate()
    with (
        running(lake) as first,
        running(lake, gate=gate) as second,
        first.client() as on_first,
        second.client() as on_second,
    ):
        qid = query_id(submit(on_first, TABLE, idempotencyKey="replicas"))
        assert _countries(poll_until_ready(on_first, qid, TABLE)) == ["FR"]
        assert lines(poll(on_second, qid, TABLE))[0]["queryStatus"]["status"] == "pending"
        _move_to_de(lake, on_first, on_second)
        assert _countries(poll_until_ready(on_first, qid, TABLE)) == ["DE"]
        # the second replica's preparation, started under FR and held back until now
        gate.opened.set()
        assert _countries(poll_until_ready(on_second, qid, TABLE)) == ["DE"]


def _update(catalog: str, name: str, *, history_shared: bool, partition_filter: str) -> None:
    """Change how ``s.sc.<name>`` is read, keeping the rest of how it is shared."""
    store = SqlCatalog(catalog)
    (row,) = [t for t in store.contents().tables if t.name == name]
    spec = replace(row.spec, history_shared=history_shared, partition_filter=partition_filter)
    store.update_table("s", "sc", name, spec)
