"""Our client's asynchronous queries against a real server: polled until ready, paged,
refreshed, read; the fallback to a synchronous answer; the default that asks only for
tables known to be large; a failed query raised with its errorCode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import deltaport.client.remote.async_query as async_query
from async_support import FILES, Gate, Lake, make_lake, running
from deltaport.client import SharingClient, SharingError
from deltaport.client.base.models import Table
from deltaport.client.remote.async_query import AsyncQuery
from deltaport.client.remote.planning import capabilities, response_formats
from deltaport.client.remote.rest import table_path

MANY = Table("many", "s", "sc")


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    yield make_lake(tmp_path_factory.mktemp("client-async"))


def test_the_client_polls_until_the_files_are_ready(lake: Lake) -> None:
    gate = Gate()
    with running(lake, gate=gate) as server, SharingClient(server.profile()) as client:
        headers = {"delta-sharing-capabilities": capabilities(response_formats(None))}
        # the first poll finds the query pending: the client waits, and the test opens the
        # gate while it does
        query = AsyncQuery(
            client.rest, table_path(MANY), headers, sleep=lambda _: gate.opened.set()
        )
        answer = query.first_page({"maxFiles": 1000})
        assert query.query_id is not None
        assert query.polls >= 2
        assert b'"file"' in answer.lines[2]


def test_an_async_plan_equals_the_sync_plan_and_refreshes(lake: Lake) -> None:
    with running(lake) as server, SharingClient(server.profile()) as client:
        table = client.table("s.sc.many")
        sync_plan = table.snapshot(async_query=False, max_files=700).plan()
        async_plan = table.snapshot(async_query=True, max_files=700).plan()
        assert server.queries.count("alice") == 1
        assert len(async_plan.files) == FILES
        assert [f.id for f in async_plan.files] == [f.id for f in sync_plan.files]
        one_page = table.snapshot(async_query=True).plan()
        assert one_page.refresh_token is not None
        refreshed = client.refresh_plan(one_page)
        assert [f.id for f in refreshed.files] == [f.id for f in one_page.files]


def test_async_rows_equal_sync_rows(lake: Lake) -> None:
    with running(lake) as server, SharingClient(server.profile()) as client:
        table = client.table("s.sc.basic")
        rows = table.snapshot(async_query=True).to_arrow()
        assert rows.sort_by("letter").equals(
            table.snapshot(async_query=False).to_arrow().sort_by("letter")
        )
        assert server.queries.count("alice") == 1


def test_a_server_without_async_answers_and_the_client_falls_back(lake: Lake) -> None:
    with running(lake, enabled=False) as server, SharingClient(server.profile()) as client:
        plan = client.table("s.sc.many").snapshot(async_query=True, max_files=1000).plan()
        assert len(plan.files) == FILES
        assert server.queries.count() == 0


def test_by_default_only_tables_known_to_be_large_are_queried_async(
    lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(async_query, "ASYNC_MIN_FILES", FILES)
    with running(lake) as server, SharingClient(server.profile()) as client:
        client.table("s.sc.basic").metadata()
        client.table("s.sc.basic").snapshot().plan()
        many = client.table("s.sc.many")
        many.snapshot().plan()  # its size is not known yet: synchronous
        assert server.queries.count() == 0
        many.snapshot().plan()  # the first answer said how many files it has
        assert server.queries.count() == 1


def test_a_failed_async_query_is_raised_with_its_code(lake: Lake) -> None:
    with running(lake) as server, SharingClient(server.profile()) as client:
        with pytest.raises(SharingError) as failed:
            client.table("s.sc.broken").snapshot(async_query=True).plan()
        assert failed.value.error_code == "TABLE_CORRUPT"
        assert "asynchronous query failed" in str(failed.value)
