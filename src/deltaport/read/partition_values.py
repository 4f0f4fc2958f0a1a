"""Typed partition values from the strings Delta stores in ``add.partitionValues``.

Partition values are serialised as strings (not URL-encoded: only file paths are); a
missing, ``null`` or empty value is a null for every type. Timestamps come as
``2021-01-01 00:00:00[.ffffff]`` (UTC for ``timestamp``) or as ISO 8601 with a zone
(``2021-01-01T00:00:00.000000Z``). Parsing is vectorised over all files of a file table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.protocol.schema import (
    TIMESTAMP_NTZ_TYPE,
    TIMESTAMP_TYPE,
    DataType,
    DecimalType,
    PrimitiveType,
    StructField,
    to_arrow_type,
)

_ZONE_SUFFIX = r"(Z|[+-]\d\d(:?\d\d)?)$"


def parse_partition_values(values: pa.Array, data_type: DataType) -> pa.Array:
    """Convert a string array of serialised partition values to ``data_type``'s Arrow type."""
    if not isinstance(data_type, PrimitiveType | DecimalType):
        raise ValueError(f"partition columns must have a primitive type, not {data_type}")
    strings = pc.cast(values, pa.string())
    strings = pc.if_else(pc.equal(strings, ""), pa.scalar(None, pa.string()), strings)
    target = to_arrow_type(data_type)
    if data_type.name == "timestamp":
        return _parse_timestamps(strings, utc=True)
    if data_type.name == "timestamp_ntz":
        return _parse_timestamps(strings, utc=False)
    if pa.types.is_boolean(target):
        return pc.cast(pc.utf8_lower(strings), target)
    try:
        return pc.cast(strings, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"invalid partition value for type {data_type}: {exc}") from exc


def _parse_timestamps(strings: pa.Array, *, utc: bool) -> pa.Array:
    """Values with a zone are converted to UTC; values without one are taken as UTC
    (``timestamp``) or as wall-clock time (``timestamp_ntz``)."""
    trimmed = pc.utf8_trim_whitespace(strings)
    has_zone = pc.fill_null(pc.match_substring_regex(trimmed, _ZONE_SUFFIX), False)
    null_str = pa.scalar(None, pa.string())
    zoned = pc.cast(pc.if_else(has_zone, trimmed, null_str), pa.timestamp("us", tz="UTC"))
    naive = pc.cast(pc.if_else(has_zone, null_str, trimmed), pa.timestamp("us"))
    target = TIMESTAMP_TYPE if utc else TIMESTAMP_NTZ_TYPE
    zoned_values = zoned.cast(pa.int64())
    naive_values = naive.cast(pa.int64())
    return pc.if_else(has_zone, zoned_values, naive_values).cast(target)


def partition_columns(
    partition_values: pa.Array, fields: list[StructField], *, physical: bool
) -> dict[str, pa.Array]:
    """Typed partition columns for every file of a file table.

    ``partition_values`` is the ``map<string, string>`` column of the file table; its keys
    are physical names under column mapping (``physical=True``). Returns logical name ->
    typed array with one value per file.
    """
    out: dict[str, pa.Array] = {}
    chunked = (
        partition_values.combine_chunks()
        if isinstance(partition_values, pa.ChunkedArray)
        else partition_values
    )
    for f in fields:
        key = f.physical_name if physical else f.name
        if len(chunked) == 0:
            strings = pa.array([], pa.string())
        else:
            strings = pc.map_lookup(chunked, pa.scalar(key, pa.string()), "first")
        out[f.name] = parse_partition_values(strings, f.type)
    return out


def serialised_values(
    values: Mapping[str, str | None], fields: Iterable[StructField]
) -> dict[str, str | None]:
    """The serialised value of each of ``fields`` by logical name, from a file action's
    values keyed by physical name (under column mapping) or logical name."""
    return {f.name: values.get(f.physical_name, values.get(f.name)) for f in fields}
