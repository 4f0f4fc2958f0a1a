"""Sample Delta tables for the demo: small, local, with history and a change data feed.

Written directly (parquet files plus JSON commits) so the demo needs no Delta writer
library at run time. The tables are ordinary Delta tables that Spark or deltalake read.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaport.delta.model import ENABLE_CDF_KEY, Metadata, Protocol

ORDERS_SCHEMA = pa.schema(
    [
        pa.field("order_id", pa.int64()),
        pa.field("customer", pa.string()),
        pa.field("amount", pa.decimal128(10, 2)),
        pa.field("ordered_at", pa.timestamp("us", tz="UTC")),
        pa.field("country", pa.string()),
    ]
)
CUSTOMERS_SCHEMA = pa.schema(
    [
        pa.field("customer", pa.string()),
        pa.field("name", pa.string()),
        pa.field("since", pa.date32()),
    ]
)
_SPARK_TYPES = {
    pa.int64(): "long",
    pa.string(): "string",
    pa.decimal128(10, 2): "decimal(10,2)",
    pa.timestamp("us", tz="UTC"): "timestamp",
    pa.date32(): "date",
}
_FIRST_COMMIT = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)


@dataclass
class _Commit:
    actions: list[dict[str, Any]] = field(default_factory=list)


class _TableWriter:
    """Appends commits to one Delta table on local disk."""

    def __init__(self, root: Path, schema: pa.Schema, partition_by: Sequence[str]) -> None:
        self.root = root
        self.schema = schema
        self.partition_by = list(partition_by)
        self.version = -1
        (root / "_delta_log").mkdir(parents=True, exist_ok=True)

    def _write_parquet(self, table: pa.Table, folder: str) -> tuple[str, dict[str, Any]]:
        data_cols = [c for c in table.column_names if c not in self.partition_by]
        rel = (
            f"{folder}/part-{uuid.uuid4()}.snappy.parquet"
            if folder
            else (f"part-{uuid.uuid4()}.snappy.parquet")
        )
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.select(data_cols), self.root / rel, compression="snappy")
        return rel, _stats(table.select(data_cols))

    def _log_path(self, rel: str) -> str:
        """Relative paths in the log are URIs: percent-encoded."""
        return quote(rel, safe="/=")

    def _partition_values(self, table: pa.Table) -> dict[str, str | None]:
        return {c: table.column(c)[0].as_py() for c in self.partition_by}

    def _groups(self, table: pa.Table) -> list[pa.Table]:
        if not self.partition_by:
            return [table]
        keys = table.select(self.partition_by).group_by(self.partition_by).aggregate([])
        out = []
        for key in keys.to_pylist():
            mask = None
            for col, value in key.items():
                m = pc.equal(table.column(col), value)
                mask = m if mask is None else pc.and_(mask, m)
            out.append(table.filter(mask))
        return out

    def add_files(self, table: pa.Table) -> list[dict[str, Any]]:
        actions = []
        for part in self._groups(table):
            pv = self._partition_values(part)
            folder = "/".join(f"{k}={v}" for k, v in pv.items())
            rel, stats = self._write_parquet(part, folder)
            actions.append(
                {
                    "add": {
                        "path": self._log_path(rel),
                        "partitionValues": pv,
                        "size": (self.root / rel).stat().st_size,
                        "modificationTime": 0,
                        "dataChange": True,
                        "stats": json.dumps(stats),
                    }
                }
            )
        return actions

    def cdc_file(self, table: pa.Table) -> dict[str, Any]:
        pv = self._partition_values(table)
        folder = "/".join(["_change_data", *(f"{k}={v}" for k, v in pv.items())])
        rel, _ = self._write_parquet(table, folder)
        size = (self.root / rel).stat().st_size
        return {
            "cdc": {
                "path": self._log_path(rel),
                "partitionValues": pv,
                "size": size,
                "dataChange": False,
            }
        }

    def commit(self, operation: str, actions: list[dict[str, Any]], **params: Any) -> None:
        self.version += 1
        when = _FIRST_COMMIT + dt.timedelta(days=self.version)
        millis = int(when.timestamp() * 1000)
        for action in actions:
            for kind in ("add", "remove"):
                if kind in action:
                    key = "modificationTime" if kind == "add" else "deletionTimestamp"
                    action[kind][key] = millis
        info = {
            "commitInfo": {
                "timestamp": millis,
                "operation": operation,
                "operationParameters": {k: json.dumps(v) for k, v in params.items()},
                "engineInfo": "deltaport-demo",
            }
        }
        path = self.root / "_delta_log" / f"{self.version:020d}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text("".join(json.dumps(a) + "\n" for a in [info, *actions]))
        os.replace(tmp, path)
        os.utime(path, (when.timestamp(), when.timestamp()))

    def remove(self, add: dict[str, Any]) -> dict[str, Any]:
        a = add["add"]
        return {
            "remove": {
                "path": a["path"],
                "partitionValues": a["partitionValues"],
                "size": a["size"],
                "dataChange": True,
                "extendedFileMetadata": True,
                "deletionTimestamp": 0,
            }
        }

    def read(self, add: dict[str, Any]) -> pa.Table:
        a = add["add"]
        table = pq.read_table(self.root / unquote(a["path"]))
        for col in self.partition_by:
            value = a["partitionValues"][col]
            table = table.append_column(col, pa.array([value] * table.num_rows, pa.string()))
        return table.select(self.schema.names).cast(self.schema)


def _json_value(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _stats(table: pa.Table) -> dict[str, Any]:
    mins, maxs, nulls = {}, {}, {}
    for name in table.column_names:
        col = table.column(name)
        nulls[name] = col.null_count
        mm = pc.min_max(col)
        if mm["min"].is_valid:
            mins[name] = _json_value(mm["min"].as_py())
            maxs[name] = _json_value(mm["max"].as_py())
    return {"numRecords": table.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls}


def _schema_string(schema: pa.Schema) -> str:
    fields = [
        {"name": f.name, "type": _SPARK_TYPES[f.type], "nullable": True, "metadata": {}}
        for f in schema
    ]
    return json.dumps({"type": "struct", "fields": fields})


def _orders(rows: list[tuple[int, str, str, str, str]]) -> pa.Table:
    ids, customers, amounts, times, countries = zip(*rows, strict=True)
    return pa.table(
        {
            "order_id": list(ids),
            "customer": list(customers),
            "amount": [Decimal(a) for a in amounts],
            "ordered_at": [dt.datetime.fromisoformat(t) for t in times],
            "country": list(countries),
        },
        schema=ORDERS_SCHEMA,
    )


def _with_change_type(table: pa.Table, change: str) -> pa.Table:
    return table.append_column("_change_type", pa.array([change] * table.num_rows, pa.string()))


def write_orders(root: Path) -> None:
    """``orders``: partitioned by country, change data feed on, four commits of history."""
    w = _TableWriter(root, ORDERS_SCHEMA, ["country"])
    meta = Metadata(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, "deltaport-demo-orders")),
        schema_string=_schema_string(ORDERS_SCHEMA),
        partition_columns=("country",),
        configuration={ENABLE_CDF_KEY: "true"},
        name="orders",
        description="Demo orders with history and a change data feed",
        created_time=int(_FIRST_COMMIT.timestamp() * 1000),
    )
    first = _orders(
        [
            (1, "c-001", "120.50", "2026-01-05T08:00:00+00:00", "FR"),
            (2, "c-002", "75.00", "2026-01-05T08:30:00+00:00", "DE"),
            (3, "c-003", "310.99", "2026-01-05T09:15:00+00:00", "FR"),
            (4, "c-001", "42.10", "2026-01-05T10:45:00+00:00", "US"),
        ]
    )
    adds_v0 = w.add_files(first)
    w.commit(
        "CREATE TABLE",
        [
            {"protocol": Protocol(1, 4).to_json()},
            {"metaData": meta.to_json()},
            *adds_v0,
        ],
        partitionBy=["country"],
    )
    second = _orders(
        [
            (5, "c-004", "18.00", "2026-01-06T11:00:00+00:00", "DE"),
            (6, "c-002", "999.00", "2026-01-06T12:00:00+00:00", "US"),
            (7, "c-005", "64.25", "2026-01-06T13:30:00+00:00", "Trinidad & Tobago"),
        ]
    )
    w.commit("WRITE", w.add_files(second), mode="Append")
    # v2: delete order 2 (DE) -> rewrite the DE file of v0, with a cdc file of the deleted row.
    de_add = next(a for a in adds_v0 if a["add"]["partitionValues"]["country"] == "DE")
    de_rows = w.read(de_add)
    deleted = de_rows.filter(pc.equal(de_rows["order_id"], 2))
    kept = de_rows.filter(pc.not_equal(de_rows["order_id"], 2))
    actions = [w.remove(de_add), w.cdc_file(_with_change_type(deleted, "delete"))]
    if kept.num_rows:
        actions[1:1] = w.add_files(kept)
    w.commit("DELETE", actions, predicate=["order_id = 2"])
    # v3: update order 3 (FR): amount corrected.
    fr_add = next(a for a in adds_v0 if a["add"]["partitionValues"]["country"] == "FR")
    fr_rows = w.read(fr_add)
    is_3 = pc.equal(fr_rows["order_id"], 3)
    pre = fr_rows.filter(is_3)
    post = pre.set_column(
        pre.schema.get_field_index("amount"),
        "amount",
        pa.array([Decimal("300.99")] * pre.num_rows, pa.decimal128(10, 2)),
    )
    updated = pa.concat_tables([fr_rows.filter(pc.invert(is_3)), post])
    changes = pa.concat_tables(
        [_with_change_type(pre, "update_preimage"), _with_change_type(post, "update_postimage")]
    )
    w.commit(
        "UPDATE",
        [w.remove(fr_add), *w.add_files(updated), w.cdc_file(changes)],
        predicate=["order_id = 3"],
    )


def write_customers(root: Path) -> None:
    """``customers``: one unpartitioned commit."""
    w = _TableWriter(root, CUSTOMERS_SCHEMA, [])
    meta = Metadata(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, "deltaport-demo-customers")),
        schema_string=_schema_string(CUSTOMERS_SCHEMA),
        name="customers",
        created_time=int(_FIRST_COMMIT.timestamp() * 1000),
    )
    table = pa.table(
        {
            "customer": ["c-001", "c-002", "c-003", "c-004", "c-005"],
            "name": ["Ada", "Grace", "Edsger", "Barbara", "Margaret"],
            "since": [dt.date(2020 + i, 1 + i, 1) for i in range(5)],
        },
        schema=CUSTOMERS_SCHEMA,
    )
    w.commit(
        "CREATE TABLE",
        [{"protocol": Protocol(1, 2).to_json()}, {"metaData": meta.to_json()}, *w.add_files(table)],
    )


def write_sample_tables(root: str | Path) -> dict[str, Path]:
    """Write the sample tables under ``root`` (replacing earlier ones); name -> table root."""
    base = Path(root)
    tables = {"orders": base / "orders", "customers": base / "customers"}
    writers = {"orders": write_orders, "customers": write_customers}
    for name, path in tables.items():
        if path.exists():
            _remove_tree(path)
        writers[name](path)
    return tables


def _remove_tree(path: Path) -> None:
    for child in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if child.is_dir():
            child.rmdir()
        else:
            child.unlink()
    path.rmdir()
