"""One view materialized for one binding at one source version: the output files it
lacks computed and written, those it no longer needs removed, then one commit."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from deltaport.delta import DeltaTable, Snapshot
from deltaport.storage import Storage
from deltaport.views.binding import Binding
from deltaport.views.definition import Shape, ViewDefinition
from deltaport.views.engine import ArrowSource, Engine
from deltaport.views.materialize import log
from deltaport.views.materialize.naming import row_local_name, whole_name
from deltaport.views.materialize.sources import deletion_vector_id, file_rows, snapshot_rows
from deltaport.views.materialize.stats import file_stats
from deltaport.views.running import run_view

Clock = Callable[[], float]


@dataclass(frozen=True)
class Materialized:
    """The materialized table's version after the call, the source version it reflects,
    and how many output files were computed, added and removed by it."""

    location: str
    version: int
    source_version: int
    computed: int
    removed: int


def table_location(root: str, binding: Binding) -> str:
    """Where one binding's table lies under ``root`` (a directory kept for one view)."""
    return os.path.join(root, binding.digest)


def materialize(
    definition: ViewDefinition,
    binding: Binding,
    sources: Mapping[str, DeltaTable],
    root: str,
    *,
    engine: Engine,
    source_version: int | None = None,
    clock: Clock = time.time,
) -> Materialized:
    """Bring ``binding``'s table under ``root`` to ``source_version`` (default: the
    latest) of the view's sources (``DeltaTable``s by `share.schema.table`). Nothing is
    committed, and nothing changes, when it is there already. A whole view of several
    sources is keyed by the version of its first source."""
    location = table_location(root, binding)
    storage = Storage(location)
    state = log.read_state(location)
    snapshots = {name: table.snapshot(source_version) for name, table in sources.items()}
    first = snapshots[definition.sources[0]]
    if definition.shape is Shape.ROW_LOCAL:
        wanted = _row_local(definition, binding, first, sources, storage, state, engine)
    else:
        wanted = _whole(definition, binding, snapshots, sources, storage, state, engine)
    added, names = wanted
    removed = sorted(state.files - names)
    if not added and not removed and state.version >= 0:
        return Materialized(location, state.version, first.version, 0, 0)
    version = state.version + 1
    metadata = None
    if version == 0:
        metadata = log.view_metadata(definition.output_schema, log.table_id(binding.digest))
    log.commit(
        storage,
        version,
        timestamp_ms=int(clock() * 1000),
        source_version=first.version,
        metadata=metadata,
        added=added,
        removed=removed,
    )
    return Materialized(location, version, first.version, len(added), len(removed))


Wanted = tuple[list[log.AddedFile], frozenset[str]]


def _row_local(
    definition: ViewDefinition,
    binding: Binding,
    snapshot: Snapshot,
    sources: Mapping[str, DeltaTable],
    storage: Storage,
    state: log.TableState,
    engine: Engine,
) -> Wanted:
    (name,) = definition.sources
    source_storage = sources[name].storage
    paths = snapshot.files.column("path").to_pylist()
    vectors = snapshot.files.column("deletion_vector").to_pylist()
    added: list[log.AddedFile] = []
    names: set[str] = set()
    for index, (path, vector) in enumerate(zip(paths, vectors, strict=True)):
        output = row_local_name(str(path), deletion_vector_id(vector), binding)
        names.add(output)
        if output in state.files:
            continue
        rows = file_rows(snapshot, source_storage, index)
        added.append(_write(definition, binding, {name: rows}, storage, output, engine))
    return added, frozenset(names)


def _whole(
    definition: ViewDefinition,
    binding: Binding,
    snapshots: Mapping[str, Snapshot],
    sources: Mapping[str, DeltaTable],
    storage: Storage,
    state: log.TableState,
    engine: Engine,
) -> Wanted:
    output = whole_name(snapshots[definition.sources[0]].version, binding)
    if output in state.files:
        return [], frozenset({output})
    rows: dict[str, ArrowSource] = {
        name: snapshot_rows(snapshot, sources[name].storage) for name, snapshot in snapshots.items()
    }
    return [_write(definition, binding, rows, storage, output, engine)], frozenset({output})


def _write(
    definition: ViewDefinition,
    binding: Binding,
    rows: Mapping[str, ArrowSource],
    storage: Storage,
    name: str,
    engine: Engine,
) -> log.AddedFile:
    """One output file written (not yet part of any version)."""
    table = run_view(engine, definition, binding, rows).read_all()
    table = table.cast(definition.output_schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    storage.write(storage.resolve(name), data)
    return log.AddedFile(name, len(data), file_stats(table))
