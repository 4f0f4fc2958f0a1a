"""The one memory budget: least recently used entries dropped by size whichever cache
holds them, the open tables under it, and its use in ``/metrics`` of a real server whose
``snapshotCacheBytes`` holds fewer tables than it serves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from prometheus_client.parser import text_string_to_metric_families

from deltaport.delta import DeltaTable
from deltaport.delta.cache import TABLE_BUDGET, MemoryBudget, clear_table_cache, open_table
from sharing_server import free_port, start_server, stop_server, table_entry
from waiting import wait_until

ADMIN_TOKEN = "budget-admin-token-4e2a"


def test_the_least_recently_used_go_first_by_size() -> None:
    budget = MemoryBudget(100)
    dropped: list[str] = []
    budget.hold("a", 60, lambda: dropped.append("a"))
    budget.hold("b", 30, lambda: dropped.append("b"))
    budget.touch("a")
    budget.hold("c", 30, lambda: dropped.append("c"))  # 120 > 100: b, the least recent
    assert dropped == ["b"] and budget.held_bytes == 90 and budget.evictions == 1
    budget.hold("d", 150, lambda: dropped.append("d"))  # bigger than all: it alone stays
    assert dropped == ["b", "a", "c"] and budget.held_bytes == 150
    budget.release("d")
    assert budget.held_bytes == 0


def test_without_a_limit_nothing_is_tracked() -> None:
    budget = MemoryBudget()
    budget.hold("a", 10**12, lambda: None)
    assert budget.held_bytes == 0 and budget.evictions == 0


def write_tables(root: Path, count: int, rows: int) -> list[Path]:
    paths = []
    for i in range(count):
        path = root / f"t{i}"
        for part in range(4):
            data = pa.table({"id": list(range(rows)), "part": [f"p{part}"] * rows})
            write_deltalake(path, data, mode="append", partition_by=["part"])
        paths.append(path)
    return paths


@pytest.fixture
def limited() -> Iterator[MemoryBudget]:
    clear_table_cache()
    before = TABLE_BUDGET.limit
    try:
        yield TABLE_BUDGET
    finally:
        TABLE_BUDGET.limit = before
        clear_table_cache()


def test_open_tables_are_forgotten_past_the_budget(tmp_path: Path, limited: MemoryBudget) -> None:
    paths = write_tables(tmp_path, 6, 3)
    alone = DeltaTable(str(paths[0]))  # outside the cache: what one table holds
    alone.snapshot()
    size = alone.held_bytes()
    assert size > 0
    limited.limit = 2 * size + size // 2  # two tables fit, not three
    evictions = limited.evictions
    one = open_table(str(paths[0]))
    for path in paths:
        open_table(str(path)).snapshot()
    assert limited.held_bytes <= limited.limit
    assert limited.evictions - evictions >= 3
    assert open_table(str(paths[-1])) is open_table(str(paths[-1]))  # the latest is kept
    assert open_table(str(paths[0])) is not one  # the first was forgotten, opened afresh


def scraped(admin: httpx.Client) -> dict[str, float]:
    text = admin.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).text
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name.startswith("deltaport_snapshot_cache_")
    }


def test_metrics_report_the_budget_of_a_server(tmp_path: Path) -> None:
    paths = write_tables(tmp_path / "tables", 4, 200)
    port = free_port()
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "budget-tests",
        "snapshotCacheBytes": 4096,  # about one of these tables
        "admin": {"port": port, "tokens": [ADMIN_TOKEN]},
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {"name": "d", "tables": [table_entry(p.name, p) for p in paths]},
                ],
            }
        ],
    }
    server = start_server(config, tmp_path / "server")
    admin = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    try:
        wait_until(
            lambda: admin.get("/livez", timeout=1),
            30,
            "the admin listener",
            ignore=(httpx.HTTPError,),
        )
        assert scraped(admin)["deltaport_snapshot_cache_evictions_total"] == 0
        with server.client() as client:
            for path in paths:
                answer = client.post(f"/shares/s/schemas/d/tables/{path.name}/query", json={})
                assert answer.status_code == 200, answer.text
        use = scraped(admin)
        assert 0 < use["deltaport_snapshot_cache_bytes"] <= 4096 * 2
        assert use["deltaport_snapshot_cache_evictions_total"] >= 3
    finally:
        admin.close()
        stop_server(server)
