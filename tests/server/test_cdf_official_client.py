"""The official ``delta-sharing`` client reading our change data feed, in both formats.

Tables without deletion vectors are compared with deltalake's ``load_cdf``; tables with
deletion vectors or column mapping (delta format only; deltalake cannot read them right)
are checked by replaying the feed over the client's own snapshots: the rows of version
``e`` must be those of ``s - 1`` plus inserts and post-images, minus deletes and pre-images.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corpus import corpus_table
from history_tables import (
    deltalake_change_rows,
    history_config,
    run_official_client,
    write_cdf_table,
    write_token_profile,
)
from sharing_server import RunningServer, start_server, stop_server

COMPARED = {
    "cdf": None,
    "drs_cdf": "drs__cdf-table",
    "drs_cdf_np": "drs__cdf-table-non-partitioned",
}
REPLAYED = {
    "cdf_dv": ("krs__cdf-table-with-dv", 0, 6),
    "cdc_dv": ("drs__cdf-table-with-cdc-and-dvs", 0, 25),
    "cm_name": ("krs__cdf-column-mapping-name-mode", 1, 4),
}
CHANGE_COLUMNS = ("_change_type", "_commit_version")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    own = {"cdf": write_cdf_table(tmp_path_factory.mktemp("official-cdf") / "cdf")}
    corpus = {n: corpus_table(c).path for n, c in COMPARED.items() if c is not None}
    replayed = {n: corpus_table(c).path for n, (c, _, _) in REPLAYED.items()}
    return own | corpus | replayed


@pytest.fixture(scope="module")
def server(
    tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_server(history_config(tables), tmp_path_factory.mktemp("official-server"))
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def results(
    server: RunningServer, official_client_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[tuple[Any, ...], dict[str, Any]]:
    profile = write_token_profile(tmp_path_factory.mktemp("profile"), server.url)
    jobs: list[dict[str, Any]] = []
    for name in COMPARED:
        for fmt in ("parquet", "delta"):
            jobs.append({"kind": "changes", "table": name, "format": fmt, "start": 0})
    for name, (_, start, end) in REPLAYED.items():
        jobs.append({"kind": "changes", "table": name, "format": "delta", "start": start})
        jobs.append({"kind": "snapshot", "table": name, "format": "delta", "version": end})
        if start > 0:
            jobs.append(
                {"kind": "snapshot", "table": name, "format": "delta", "version": start - 1}
            )
    outputs = run_official_client(official_client_python, [j | {"profile": profile} for j in jobs])
    return {_job_key(job): out for job, out in zip(jobs, outputs, strict=True)}


def _job_key(job: dict[str, Any]) -> tuple[Any, ...]:
    return (job["kind"], job["table"], job["format"], job.get("start", job.get("version")))


def _rows(out: dict[str, Any]) -> list[str]:
    assert "rows" in out, out.get("error")
    return list(out["rows"])


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
@pytest.mark.parametrize("name", list(COMPARED))
def test_changes_match_deltalake(
    results: dict[tuple[Any, ...], dict[str, Any]], tables: dict[str, Path], name: str, fmt: str
) -> None:
    rows = _rows(results[("changes", name, fmt, 0)])
    assert rows == deltalake_change_rows(tables[name], 0)


@pytest.mark.parametrize("name", list(REPLAYED))
def test_replaying_the_feed_gives_the_snapshot(
    results: dict[tuple[Any, ...], dict[str, Any]], name: str
) -> None:
    _, start, end = REPLAYED[name]
    feed = [json.loads(r) for r in _rows(results[("changes", name, "delta", start)])]
    assert feed, "the feed is empty"
    before = Counter(_rows(results[("snapshot", name, "delta", start - 1)])) if start else Counter()
    after = Counter(_rows(results[("snapshot", name, "delta", end)]))
    replayed = Counter(before)
    for row in feed:
        change = row.pop("_change_type")
        del row["_commit_version"]
        key = json.dumps(row)
        if change in ("insert", "update_postimage"):
            replayed[key] += 1
        else:
            replayed[key] -= 1
    assert +replayed == after and not -replayed
