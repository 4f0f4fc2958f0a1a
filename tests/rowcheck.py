"""The brute-force answer a row diff must give: both full tables read and compared in
Python, row by row.

The tables are read and filtered by deltalake's SQL engine (DataFusion through
``QueryBuilder``), which applies deletion vectors and column mapping itself, so the
reference shares neither deltaport's reader nor its predicate evaluator with the code
under test."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable, QueryBuilder

from deltaport.diff.rows.row_diff import RowDiff


def full_table(uri: str, version: int | None = None, where: str | None = None) -> pa.Table:
    """The table at ``version`` (the latest if None), as deltalake reads it, keeping only
    the rows where the SQL condition ``where`` holds."""
    query = "SELECT * FROM t" + (f" WHERE {where}" if where else "")
    registered = QueryBuilder().register("t", DeltaTable(uri, version=version))
    return pa.table(registered.execute(query).read_all())


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _text(row: dict[str, Any]) -> str:
    return json.dumps(_canonical(row), sort_keys=True, default=str)


def expected_changes(
    left: pa.Table, right: pa.Table, key: Sequence[str] | None, columns: Sequence[str]
) -> set[str]:
    """Every change as canonical text: ``inserted|row``, ``deleted|row``,
    ``updated|key|changed columns|right row``; whole rows repeat by their excess count."""
    lrows = [{c: r[c] for c in columns} for r in left.to_pylist()]
    rrows = [{c: r[c] for c in columns} for r in right.to_pylist()]
    out: set[str] = set()
    if not key:
        excess = Counter(_text(r) for r in rrows)
        excess.subtract(Counter(_text(r) for r in lrows))
        for text, count in excess.items():
            for i in range(abs(count)):
                out.add(f"{'inserted' if count > 0 else 'deleted'}|{text}|{i}")
        return out
    by_key_left = {_text({k: r[k] for k in key}): r for r in lrows}
    by_key_right = {_text({k: r[k] for k in key}): r for r in rrows}
    for k, row in by_key_right.items():
        if k not in by_key_left:
            out.add(f"inserted|{_text(row)}")
    for k, row in by_key_left.items():
        if k not in by_key_right:
            out.add(f"deleted|{_text(row)}")
        else:
            other = by_key_right[k]
            changed = [c for c in columns if _text({c: row[c]}) != _text({c: other[c]})]
            if changed:
                out.add(f"updated|{k}|{','.join(changed)}|{_text(other)}")
    return out


def actual_changes(diff: RowDiff) -> set[str]:
    out: set[str] = set()
    seen: Counter[str] = Counter()
    key = diff.summary.key
    for row in diff.changes.to_pylist():
        if row["change"] == "updated":
            k = _text({c: row["key"][c] for c in key})
            out.add(f"updated|{k}|{','.join(row['changed'])}|{_text(row['right'])}")
        else:
            values = row["right"] if row["change"] == "inserted" else row["left"]
            text = _text(values)
            if key:
                out.add(f"{row['change']}|{text}")
            else:
                out.add(f"{row['change']}|{text}|{seen[row['change'] + text]}")
                seen[row["change"] + text] += 1
    return out
