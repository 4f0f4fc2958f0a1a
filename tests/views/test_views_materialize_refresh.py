"""Refreshing a materialized view: a new source version (written by deltalake into a
copy in tmp_path) costs engine runs only for the files it added, and gives the rows of a
full materialization; statistics come from the output (a masked sentinel appears in no
byte of the materialized table); a crash between the data files and the commit leaves the
visible version as it was, and the cleanup removes what it left."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

import deltalake
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from corpus import corpus_table
from deltaport.delta import DeltaTable
from deltaport.read import table_arrow_schema
from deltaport.storage import ObjectExistsError, Storage
from deltaport.views import DuckDBEngine, ViewDefinition, bind, define_view
from deltaport.views.engine import ArrowSource
from deltaport.views.materialize import (
    CommitConflictError,
    log,
    materialize,
    remove_unreferenced,
)

SOURCE = "raw.sales.orders"
LOW_SENTINEL = "!sentinel-low-7f3a@leak.example"  # sorts before every other e-mail
HIGH_SENTINEL = "~sentinel-high-9b2c@leak.example"  # sorts after
FILTERED_SENTINEL = "filtered-out-5d1e@leak.example"  # in a row of another region
VIEW = (
    f"SELECT id, region, sha2(email, 256) AS email, amount FROM {SOURCE} "
    "WHERE region = current_recipient('region')"
)


class CountingEngine:
    dialect = "duckdb"

    def __init__(self) -> None:
        self.runs = 0
        self._engine = DuckDBEngine(memory_limit="256MB")

    def run(self, sql: str, sources: Mapping[str, ArrowSource]) -> pa.RecordBatchReader:
        self.runs += 1
        return self._engine.run(sql, sources)


def _orders(ids: range, emails: list[str] | None = None) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "region": pa.array(["eu" if i % 3 else "us" for i in ids]),
            "email": pa.array(emails or [f"user{i}@example.com" for i in ids]),
            "amount": pa.array([float(i) * 1.5 for i in ids]),
        }
    )


def _source(path: Path) -> DeltaTable:
    return DeltaTable(str(path))


def _view(source: DeltaTable, sql: str = VIEW) -> ViewDefinition:
    schema = table_arrow_schema(source.snapshot().metadata)
    return define_view(sql, lambda name: schema if name == SOURCE else None)


def _rows(location: str) -> list[str]:
    return sorted(repr(r) for r in deltalake.DeltaTable(location).to_pyarrow_table().to_pylist())


def _full(view: ViewDefinition, properties: dict[str, str], path: Path, root: Path) -> str:
    done = materialize(
        view, bind(view, properties), {SOURCE: _source(path)}, str(root), engine=CountingEngine()
    )
    return done.location


def _seed(tmp_path: Path) -> Path:
    path = tmp_path / "orders"
    write_deltalake(str(path), _orders(range(0, 6)))
    write_deltalake(str(path), _orders(range(6, 12)), mode="append")
    return path


def test_a_refresh_computes_only_the_files_a_commit_added(tmp_path: Path) -> None:
    path = _seed(tmp_path)
    view = _view(_source(path))
    binding = bind(view, {"region": "eu"})
    engine = CountingEngine()
    first = materialize(view, binding, {SOURCE: _source(path)}, str(tmp_path / "m"), engine=engine)
    assert (first.version, first.computed, engine.runs) == (0, 2, 2)

    write_deltalake(str(path), _orders(range(12, 20)), mode="append")
    engine.runs = 0
    second = materialize(view, binding, {SOURCE: _source(path)}, str(tmp_path / "m"), engine=engine)
    assert (second.version, second.source_version, second.computed, second.removed) == (1, 2, 1, 0)
    assert engine.runs == 1
    assert deltalake.DeltaTable(second.location).version() == 1
    full = _full(view, {"region": "eu"}, path, tmp_path / "full")
    assert _rows(second.location) == _rows(full)
    assert len(_rows(full)) == sum(1 for i in range(20) if i % 3)

    engine.runs = 0
    again = materialize(view, binding, {SOURCE: _source(path)}, str(tmp_path / "m"), engine=engine)
    assert (again.version, engine.runs) == (1, 0)


def test_a_rewrite_removes_the_outputs_of_the_removed_files(tmp_path: Path) -> None:
    path = _seed(tmp_path)
    view = _view(_source(path))
    binding = bind(view, {"region": "eu"})
    engine = CountingEngine()
    materialize(view, binding, {SOURCE: _source(path)}, str(tmp_path / "m"), engine=engine)
    deltalake.DeltaTable(str(path)).delete("id = 4")  # rewrites the first file
    added = len(deltalake.DeltaTable(str(path)).file_uris()) - 1  # all but the untouched one
    engine.runs = 0
    done = materialize(view, binding, {SOURCE: _source(path)}, str(tmp_path / "m"), engine=engine)
    assert (done.computed, done.removed, engine.runs) == (added, 1, added)
    assert _rows(done.location) == _rows(_full(view, {"region": "eu"}, path, tmp_path / "full"))
    assert "4" not in {
        repr(r["id"]) for r in deltalake.DeltaTable(done.location).to_pyarrow_table().to_pylist()
    }


def test_a_new_deletion_vector_recomputes_that_file(tmp_path: Path) -> None:
    """The corpus table's later versions delete rows through deletion vectors: refreshing
    from an early version recomputes fewer files than a full materialization, and ends
    with the rows at the latest version."""
    path = tmp_path / "dv"
    shutil.copytree(corpus_table("golden__dv-partitioned-with-checkpoint").path, path)
    source = _source(path)
    sql = f"SELECT part, col1, upper(col2) AS col2 FROM {SOURCE} WHERE part <> 0"
    view = _view(source, sql)
    binding = bind(view, {})
    engine = CountingEngine()
    early = materialize(
        view, binding, {SOURCE: source}, str(tmp_path / "m"), engine=engine, source_version=8
    )
    assert early.source_version == 8
    engine.runs = 0
    latest = materialize(view, binding, {SOURCE: source}, str(tmp_path / "m"), engine=engine)
    full = CountingEngine()
    whole = materialize(view, binding, {SOURCE: source}, str(tmp_path / "full"), engine=full)
    assert 0 < engine.runs < full.runs
    assert latest.version == 1
    assert _rows(latest.location) == _rows(whole.location)


def _all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_statistics_of_a_masked_column_come_from_the_output(tmp_path: Path) -> None:
    path = tmp_path / "orders"
    emails = [f"user{i}@example.com" for i in range(12)]
    emails[1], emails[2], emails[3] = LOW_SENTINEL, HIGH_SENTINEL, FILTERED_SENTINEL
    write_deltalake(str(path), _orders(range(12), emails))
    source_log = _all_bytes(path / "_delta_log")
    assert LOW_SENTINEL.encode() in source_log  # the source's stats hold it
    assert HIGH_SENTINEL.encode() in source_log
    source = _source(path)
    view = _view(source)
    done = materialize(
        view,
        bind(view, {"region": "eu"}),
        {SOURCE: source},
        str(tmp_path / "m"),
        engine=CountingEngine(),
    )
    written = _all_bytes(tmp_path / "m")
    decoded = repr(
        [pq.read_table(p).to_pylist() for p in sorted((tmp_path / "m").rglob("*.parquet"))]
    )
    for sentinel in (LOW_SENTINEL, HIGH_SENTINEL, FILTERED_SENTINEL):
        assert sentinel.encode() not in written
        assert sentinel not in decoded
    actions = pa.table(deltalake.DeltaTable(done.location).get_add_actions(flatten=True))
    hashes = [
        r["email"] for r in deltalake.DeltaTable(done.location).to_pyarrow_table().to_pylist()
    ]
    assert actions.column("min.email").to_pylist() == [min(hashes)]
    assert actions.column("max.email").to_pylist() == [max(hashes)]
    assert actions.column("num_records").to_pylist() == [len(hashes)] == [8]


def test_a_crash_before_the_commit_leaves_the_visible_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _seed(tmp_path)
    view = _view(_source(path))
    binding = bind(view, {"region": "eu"})
    root = str(tmp_path / "m")
    first = materialize(view, binding, {SOURCE: _source(path)}, root, engine=CountingEngine())
    before = _rows(first.location)
    write_deltalake(str(path), _orders(range(12, 20)), mode="append")

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("killed between the data files and the commit")

    monkeypatch.setattr(log, "commit", crash)
    with pytest.raises(RuntimeError, match="killed"):
        materialize(view, binding, {SOURCE: _source(path)}, root, engine=CountingEngine())
    monkeypatch.undo()
    assert deltalake.DeltaTable(first.location).version() == 0
    assert _rows(first.location) == before
    on_disk = {p.name for p in Path(first.location).glob("*.parquet")}
    listed = {Path(uri).name for uri in deltalake.DeltaTable(first.location).file_uris()}
    stray = on_disk - listed
    assert len(stray) == 1

    assert remove_unreferenced(first.location) == sorted(stray)
    assert {p.name for p in Path(first.location).glob("*.parquet")} == listed
    assert _rows(first.location) == before
    done = materialize(view, binding, {SOURCE: _source(path)}, root, engine=CountingEngine())
    assert done.version == 1
    assert _rows(done.location) == _rows(_full(view, {"region": "eu"}, path, tmp_path / "full"))


def test_a_commit_is_written_only_if_its_version_is_free(tmp_path: Path) -> None:
    storage = Storage(str(tmp_path / "t"))
    log.commit(storage, 0, timestamp_ms=0, source_version=0, metadata=None, added=[], removed=[])
    with pytest.raises(CommitConflictError):
        log.commit(
            storage, 0, timestamp_ms=1, source_version=1, metadata=None, added=[], removed=[]
        )
    with pytest.raises(ObjectExistsError):
        storage.write_new(storage.resolve("_delta_log/00000000000000000000.json"), b"{}")
    assert not list((tmp_path / "t" / "_delta_log").glob("*.partial"))
