"""Casting leaf columns read from a data file to the table schema's Arrow types.

Data files may hold other physical types than the table schema says: INT96 or
ns/ms timestamps, timestamps with or without a zone, decimals of another precision, and
narrower types from before a type-widening change (int -> long, float -> double,
integers -> decimal or double, date -> timestamp_ntz).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc


def cast_leaf(array: pa.Array, target: pa.DataType) -> pa.Array:
    """Cast one non-nested column to ``target``.

    Timestamps without a zone are taken as UTC when the target has one (Delta's
    ``timestamp`` is stored as UTC instants); sub-microsecond precision is truncated.
    """
    if array.type == target:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), target)
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
        if array.type == target:
            return array
    options = pc.CastOptions(target, allow_time_truncate=True)
    try:
        return pc.cast(array, options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise TypeError(f"cannot read a {array.type} column as {target}: {exc}") from exc
