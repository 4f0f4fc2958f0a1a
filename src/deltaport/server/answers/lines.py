"""Protocol and metaData lines in the parquet or the delta response format, file ids,
and deletion-vector descriptors with signed URLs. A snapshot's file lines are encoded
column-wise by :mod:`deltaport.server.tables.snapshot_lines`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from deltaport.catalog.model import TableAccess
from deltaport.delta.model import DeletionVector, Metadata, Protocol
from deltaport.protocol.actions import (
    DeltaMetadata,
    DeltaProtocol,
    Format,
    MetadataLine,
    ParquetMetadata,
    ParquetProtocol,
    ProtocolLine,
)
from deltaport.protocol.capabilities import DELTA

SignPaths = Callable[[Sequence[str]], list[str]]
"""Signs paths as written in the log (relative ones URL-encoded) into fetchable URLs."""


def protocol_line(
    protocol: Protocol, response_format: str, version: int | None = None
) -> ProtocolLine:
    """``version`` is set on delta-format lines of ranges asked with
    ``includeHistoricalProtocol``."""
    if response_format == DELTA:
        return ProtocolLine(DeltaProtocol(protocol.to_json(), version))
    return ProtocolLine(ParquetProtocol(1))


def metadata_line(
    metadata: Metadata,
    response_format: str,
    *,
    version: int | None,
    size: int | None,
    num_files: int | None,
    access: TableAccess,
) -> MetadataLine:
    """``version`` is set when the request travelled in time (always in delta format);
    ``access`` says how the table may be read (``accessModes``, ``location``...)."""
    auxiliary = list(access.auxiliary_locations) or None
    if response_format == DELTA:
        return MetadataLine(
            DeltaMetadata(
                metadata.to_json(),
                version,
                size,
                num_files,
                location=access.location,
                auxiliaryLocations=auxiliary,
                accessModes=list(access.modes),
            )
        )
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
            location=access.location,
            auxiliaryLocations=auxiliary,
            accessModes=list(access.modes),
        )
    )


def dv_log_path(dv: dict[str, Any]) -> str | None:
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
            and (p := dv_log_path(row["deletion_vector"])) is not None
        }
    )
    return dict(zip(paths, sign(paths), strict=True)) if paths else {}


def deletion_vector_json(dv: dict[str, Any], dv_urls: dict[str, str]) -> dict[str, Any]:
    """File-backed DVs become absolute (``p``) descriptors pointing at signed URLs."""
    path = dv_log_path(dv)
    out = {
        "storageType": "p" if path is not None else dv["storageType"],
        "pathOrInlineDv": dv_urls[path] if path is not None else dv["pathOrInlineDv"],
        "sizeInBytes": dv["sizeInBytes"],
        "cardinality": dv["cardinality"],
    }
    if dv["offset"] is not None:
        out["offset"] = dv["offset"]
    return out
