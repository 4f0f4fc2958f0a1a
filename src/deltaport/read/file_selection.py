"""Which files of a snapshot may hold the rows a predicate or a limit asks for.

Shared by the server (``/query`` answers predicate and limit hints with it) and by the
client reading in directory mode (which must select the same files itself). Both are best
effort: a file is dropped only when its partition values or stats prove that no row of it
can match, or when the files before it already hold ``limit`` live rows.
"""

from __future__ import annotations

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.delta.model import Metadata
from deltaport.protocol.predicates import Expr, file_mask
from deltaport.protocol.predicates.columns import skipping_columns


class _NumRecords(msgspec.Struct):
    numRecords: int | None = None


_STATS_DECODER = msgspec.json.Decoder(list[_NumRecords | None])


def matching_files(files: pa.Table, metadata: Metadata, expr: Expr) -> pa.Table:
    """The files (FILE_SCHEMA) that may hold rows matching ``expr``."""
    if not files.num_rows:
        return files
    types, physical = skipping_columns(metadata.schema_string)
    mask = file_mask(expr, files, types, metadata.partition_columns, physical)
    return files.filter(mask)


def apply_limit_hint(files: pa.Table, limit: int) -> pa.Table:
    """The shortest prefix of ``files`` holding at least ``limit`` live rows by their stats.

    A file without ``numRecords`` could hold any number of rows, so from the first such
    file on every file is kept.
    """
    if files.num_rows == 0:
        return files
    texts = files.column("stats").to_pylist()
    try:
        parsed = _STATS_DECODER.decode(
            ("[" + ",".join("null" if t is None else t for t in texts) + "]").encode()
        )
    except msgspec.DecodeError:
        return files
    cardinality = pc.struct_field(files.column("deletion_vector"), "cardinality")
    deleted = pc.fill_null(cardinality, 0).to_pylist()
    total = 0
    for i, (stats, gone) in enumerate(zip(parsed, deleted, strict=True)):
        if total >= limit:
            return files.slice(0, i)
        if stats is None or stats.numRecords is None:
            return files
        total += stats.numRecords - gone
    return files
