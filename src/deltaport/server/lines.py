"""Response lines of a snapshot, in the parquet or the delta response format."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import pyarrow as pa

from deltaport.delta.model import DeletionVector, Metadata, Protocol
from deltaport.protocol.actions import (
    DeltaFile,
    DeltaMetadata,
    DeltaProtocol,
    Format,
    MetadataLine,
    ParquetFile,
    ParquetMetadata,
    ParquetProtocol,
    ProtocolLine,
)
from deltaport.protocol.capabilities import DELTA

SignPaths = Callable[[Sequence[str]], list[str]]
"""Signs paths as written in the log (relative ones URL-encoded) into fetchable URLs."""


def file_id(path: str) -> str:
    """A file's id: stable for the same path across requests and servers (MD5 of the path,
    as the reference server computes it)."""
    return hashlib.md5(path.encode(), usedforsecurity=False).hexdigest()


def protocol_line(protocol: Protocol, response_format: str) -> ProtocolLine:
    if response_format == DELTA:
        return ProtocolLine(DeltaProtocol(protocol.to_json()))
    return ProtocolLine(ParquetProtocol(1))


def metadata_line(
    metadata: Metadata,
    response_format: str,
    *,
    version: int | None,
    size: int | None,
    num_files: int | None,
) -> MetadataLine:
    """``version`` is set when the request travelled in time (always in delta format)."""
    if response_format == DELTA:
        return MetadataLine(DeltaMetadata(metadata.to_json(), version, size, num_files))
    return MetadataLine(
        ParquetMetadata(
            id=metadata.id,
            format=Format(metadata.format_provider),
            schemaString=metadata.schema_string,
            partitionColumns=list(metadata.partition_columns),
            name=metadata.name,
            description=metadata.description,
            configuration=dict(metadata.configuration),
            version=version,
            size=size,
            numFiles=num_files,
        )
    )


def parquet_files(
    files: pa.Table,
    sign: SignPaths,
    expiration_ms: int,
    version: int | None,
    timestamp: int | None,
) -> list[ParquetFile]:
    """The ``file`` objects of the parquet response format (to wrap as ``{"file": ...}``)."""
    paths = files.column("path").to_pylist()
    urls = sign(paths)
    sizes = files.column("size").to_pylist()
    stats = files.column("stats").to_pylist()
    partition_column = files.column("partition_values")
    if partition_column.null_count == len(partition_column) or _all_empty(partition_column):
        partitions: list[dict[str, str]] = [{}] * len(paths)
    else:
        partitions = [dict(pv) if pv else {} for pv in partition_column.to_pylist()]
    md5 = hashlib.md5
    return [
        ParquetFile(
            url,
            md5(path.encode(), usedforsecurity=False).hexdigest(),
            pv,
            size,
            st,
            version,
            timestamp,
            expiration_ms,
        )
        for path, url, pv, size, st in zip(paths, urls, partitions, sizes, stats, strict=True)
    ]


def _all_empty(maps: pa.ChunkedArray) -> bool:
    return all(len(chunk.keys) == 0 for chunk in maps.chunks)


def delta_files(
    files: pa.Table,
    sign: SignPaths,
    expiration_ms: int,
    version: int | None,
    timestamp: int | None,
) -> list[DeltaFile]:
    """The ``file`` objects of the delta response format (Delta ``add`` actions)."""
    rows = files.to_pylist()
    paths = [row["path"] for row in rows]
    urls = sign(paths)
    dv_urls = signed_deletion_vectors(rows, sign)
    out = []
    for row, url in zip(rows, urls, strict=True):
        add: dict[str, Any] = {
            "path": url,
            "partitionValues": dict(row["partition_values"] or ()),
            "size": row["size"],
            "modificationTime": row["modification_time"],
            "dataChange": bool(row["data_change"]) if row["data_change"] is not None else True,
        }
        if row["stats"] is not None:
            add["stats"] = row["stats"]
        if row["tags"]:
            add["tags"] = dict(row["tags"])
        dv = row["deletion_vector"]
        if dv is not None:
            add["deletionVector"] = deletion_vector_json(dv, dv_urls)
        if row["base_row_id"] is not None:
            add["baseRowId"] = row["base_row_id"]
        if row["default_row_commit_version"] is not None:
            add["defaultRowCommitVersion"] = row["default_row_commit_version"]
        out.append(DeltaFile(file_id(row["path"]), {"add": add}, version, timestamp, expiration_ms))
    return out


def _dv_log_path(dv: dict[str, Any]) -> str | None:
    """The path (as a log path) of a deletion vector stored in a file, None when inline."""
    kind = dv["storageType"]
    if kind == "u":
        descriptor = DeletionVector.from_json(dv)
        return quote(descriptor.relative_path())
    if kind == "p":
        return str(dv["pathOrInlineDv"])
    return None


def signed_deletion_vectors(rows: list[dict[str, Any]], sign: SignPaths) -> dict[str, str]:
    paths = sorted(
        {
            p
            for row in rows
            if row["deletion_vector"] is not None
            and (p := _dv_log_path(row["deletion_vector"])) is not None
        }
    )
    return dict(zip(paths, sign(paths), strict=True)) if paths else {}


def deletion_vector_json(dv: dict[str, Any], dv_urls: dict[str, str]) -> dict[str, Any]:
    """File-backed DVs become absolute (``p``) descriptors pointing at signed URLs."""
    path = _dv_log_path(dv)
    out = {
        "storageType": "p" if path is not None else dv["storageType"],
        "pathOrInlineDv": dv_urls[path] if path is not None else dv["pathOrInlineDv"],
        "sizeInBytes": dv["sizeInBytes"],
        "cardinality": dv["cardinality"],
    }
    if dv["offset"] is not None:
        out["offset"] = dv["offset"]
    return out
