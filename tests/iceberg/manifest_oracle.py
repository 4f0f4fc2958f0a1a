"""The data manifest entries of files as the per-file code made them before manifests were
encoded column-wise (record dictionaries for fastavro, metrics from
:func:`deltaport.iceberg.convert.bounds.file_metrics`): the oracle of the column-wise encoder."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import fastavro

from deltaport.iceberg.convert.avro_schemas import avro_name
from deltaport.iceberg.convert.bounds import StatsColumn, file_metrics, iter_bounds
from deltaport.iceberg.convert.manifests import DataFiles, typed_partitions


def _counts(values: dict[int, int]) -> list[dict[str, int]] | None:
    return [{"key": k, "value": v} for k, v in values.items()] or None


def oracle_records(
    files: DataFiles,
    columns: list[StatsColumn],
    partition: list[dict[str, Any]],
    count_rows: Callable[[str], int],
) -> list[dict[str, Any]]:
    paths = files.paths.to_pylist()
    sizes = files.sizes.to_pylist()
    stats = files.stats.to_pylist()
    partitions = typed_partitions(files.partitions)
    records = []
    for row, path in enumerate(paths):
        count, metrics = file_metrics(stats[row], columns)
        if count < 0:
            count = count_rows(path)
        records.append(
            {
                "status": 1,
                "snapshot_id": None,
                "sequence_number": 0,
                "file_sequence_number": 0,
                "data_file": {
                    "content": 0,
                    "file_path": path,
                    "file_format": "PARQUET",
                    "partition": {
                        avro_name(p["name"]): partitions[p["name"]][row] for p in partition
                    },
                    "record_count": count,
                    "file_size_in_bytes": sizes[row],
                    "value_counts": _counts(metrics.value_counts),
                    "null_value_counts": _counts(metrics.null_counts),
                    "lower_bounds": list(iter_bounds(metrics.lower_bounds)) or None,
                    "upper_bounds": list(iter_bounds(metrics.upper_bounds)) or None,
                },
            }
        )
    return records


def through_fastavro(schema: Any, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` written and read back by fastavro (as a reader would find them)."""
    buffer = io.BytesIO()
    fastavro.writer(buffer, schema, records, codec="deflate")
    buffer.seek(0)
    return list(fastavro.reader(buffer))  # type: ignore[arg-type]
