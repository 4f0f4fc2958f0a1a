"""JSON text of file lines built column-wise with Arrow compute kernels.

A file line is constant JSON pieces joined with per-file pieces (id, URL, partition values,
size, stats, ...). The pieces are built for a whole column at once, and the encoded lines
of a slice are the data buffer of one Arrow string array: no Python object per file. The
text is byte-identical to encoding the protocol structs with msgspec (which escapes only
``"``, ``\\`` and control characters, and writes other characters as UTF-8).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_FIRST_NOT_CONTROL = 0x20

Pieces = tuple[pa.Array | str, ...]
"""Columns and constant texts whose row-wise concatenation is a part of each line."""
_encode = msgspec.json.encode


def json_strings(values: pa.Array) -> pa.Array:
    """Each string as a JSON string literal; nulls stay null."""
    return pc.binary_join_element_wise('"', json_escaped(values), '"', "")


def json_escaped(values: pa.Array) -> pa.Array:
    """Each string escaped for a JSON string literal, without the quotes; nulls stay null."""
    buffer = values.buffers()[2]
    text = b"" if buffer is None else buffer.to_pybytes()  # may hold more than the slice
    if text and np.frombuffer(text, np.uint8).min() < _FIRST_NOT_CONTROL:  # msgspec escapes
        return pa.array(
            [None if v is None else _encode(v).decode()[1:-1] for v in values.to_pylist()],
            pa.string(),
        )
    escaped = values
    for char in ("\\", '"'):  # the backslash first: it starts escapes
        if char.encode() in text:
            escaped = pc.replace_substring(escaped, char, "\\" + char)
    return escaped


def json_values(values: pa.Array) -> pa.Array:
    """Numbers and booleans as JSON text; nulls stay null."""
    return pc.cast(values, pa.string())


def json_maps(maps: pa.MapArray) -> pa.Array:
    """Each string map as a JSON object (``{}`` for a null map, ``null`` for null values)."""
    keys = json_escaped(maps.keys)  # map keys are never null
    items = pc.binary_join_element_wise('"', json_escaped(maps.items), '"', "")
    if items.null_count:
        items = pc.fill_null(items, "null")
    entries = pc.binary_join_element_wise('"', keys, '":', items, "")
    members = pc.binary_join(pa.ListArray.from_arrays(maps.offsets, entries), ",")
    objects = pc.binary_join_element_wise("{", members, "}", "")
    return pc.if_else(maps.is_null(), "{}", objects) if maps.null_count else objects


def json_map_pieces(maps: pa.MapArray) -> Pieces:
    """:func:`json_maps` as pieces to join row-wise. When every map holds the same keys in
    the same order (the partition values of a table, as writers store them), the keys are
    constant text and only the values are columns: no per-row keys or objects are built."""
    columns = _columns_by_key(maps)
    if columns is None:
        return (json_maps(maps),)
    pieces: list[pa.Array | str] = ["{"]
    for position, (key, values) in enumerate(columns):
        pieces.append(("," if position else "") + _encode(key).decode() + ":")
        if values.null_count:
            pieces.append(pc.fill_null(json_strings(values), "null"))
        else:
            pieces += ['"', json_escaped(values), '"']
    pieces.append("}")
    return tuple(pieces)


def _columns_by_key(maps: pa.MapArray) -> list[tuple[str, pa.Array]] | None:
    """(key, value of each map) for each key, when every map holds the same keys in the same
    order; else None (maps of different keys, a null map, no maps)."""
    if maps.null_count or not len(maps):
        return None
    offsets = maps.offsets.to_numpy()  # into the unsliced keys and items
    width = int(offsets[1] - offsets[0])
    if not bool(np.all(np.diff(offsets) == width)):
        return None
    start = int(offsets[0])
    first_keys: list[str] = maps.keys.slice(start, width).to_pylist()
    columns = []
    for position, key in enumerate(first_keys):
        rows = pa.array(np.arange(start + position, int(offsets[-1]), width, dtype=np.int64))
        if not pc.all(pc.equal(maps.keys.take(rows), key)).as_py():
            return None
        columns.append((key, maps.items.take(rows)))
    return columns


def _merged_constants(pieces: Sequence[pa.Array | str]) -> Pieces:
    """``pieces`` with each run of constant strings merged into one."""
    merged: list[pa.Array | str] = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        else:
            merged.append(piece)
    return tuple(merged)


def optional_string_member_pieces(name: str, values: pa.Array) -> Pieces:
    """:func:`optional_string_member` as pieces to join row-wise (the member's name and
    quotes stay constant text when no value is null)."""
    if values.null_count:
        return (optional_string_member(name, values),)
    return (f',"{name}":"', json_escaped(values), '"')


def optional_member(name: str, json_text: pa.Array) -> pa.Array:
    """``,"name":value`` where ``json_text`` is not null, else the empty string."""
    return pc.fill_null(pc.binary_join_element_wise(f',"{name}":', json_text, ""), "")


def optional_string_member(name: str, values: pa.Array) -> pa.Array:
    """``,"name":"value"`` (a JSON string) where ``values`` is not null, else the empty
    string: ``optional_member(name, json_strings(values))`` in one join."""
    member = pc.binary_join_element_wise(f',"{name}":"', json_escaped(values), '"', "")
    return pc.fill_null(member, "") if member.null_count else member


def joined(pieces: Sequence[pa.Array | str]) -> pa.Array:
    """The row-wise concatenation of columns and constant strings (no nulls expected)."""
    return pc.binary_join_element_wise(*_merged_constants(pieces), "")


def text_view(lines: pa.Array) -> memoryview:
    """The concatenated UTF-8 text of a string array: a view of its data buffer, no copy."""
    if not len(lines):
        return memoryview(b"")
    _, offsets_buffer, data = lines.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)
    start, end = int(offsets[lines.offset]), int(offsets[lines.offset + len(lines)])
    return memoryview(data.slice(start, end - start))
