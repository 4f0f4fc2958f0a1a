"""Response lines of version ranges (``/changes`` and ``/query`` with ``startingVersion``).

Each file action of the range becomes one line carrying its commit's ``version`` and
``timestamp``: in the parquet format an ``add``, ``cdf`` or ``remove`` line describing the
file; in the delta format a ``file`` line wrapping the Delta action (``add``, ``cdc`` or
``remove``) with its path and deletion vector replaced by signed URLs.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pyarrow as pa

from deltaport.protocol.actions import DeltaFile, FileLine
from deltaport.protocol.capabilities import DELTA
from deltaport.server.answers.file_ids import hashed_file_ids
from deltaport.server.answers.lines import SignPaths, deletion_vector_json, signed_deletion_vectors


class ChangeFile(msgspec.Struct, omit_defaults=True):
    """A file of a version range in the parquet response format."""

    url: str
    id: str
    partitionValues: dict[str, str]
    size: int
    timestamp: int
    version: int
    stats: str | None = None
    expirationTimestamp: int | None = None


class AddLine(msgspec.Struct):
    add: ChangeFile


class CdfLine(msgspec.Struct):
    cdf: ChangeFile


class RemoveLine(msgspec.Struct):
    remove: ChangeFile


def change_file_lines(
    files: pa.Table,
    response_format: str,
    sign: SignPaths,
    expiration_ms: int,
    id_scheme: str | None = None,
) -> list[Any]:
    """One line per row of ``files`` (CHANGE_SCHEMA), in the given response format, with
    file ids in the ``fileidhash`` ``id_scheme``."""
    rows = files.to_pylist()
    urls = sign([row["path"] for row in rows])
    ids = hashed_file_ids(files.column("path").combine_chunks(), id_scheme).to_pylist()
    if response_format == DELTA:
        dv_urls = signed_deletion_vectors(rows, sign)
        return [
            FileLine(
                DeltaFile(
                    id_,
                    {row["action"]: _delta_action(row, url, dv_urls)},
                    row["version"],
                    row["timestamp"],
                    expiration_ms,
                )
            )
            for row, url, id_ in zip(rows, urls, ids, strict=True)
        ]
    return [
        _parquet_line(row, url, id_, expiration_ms)
        for row, url, id_ in zip(rows, urls, ids, strict=True)
    ]


def _parquet_line(row: dict[str, Any], url: str, id_: str, expiration_ms: int) -> Any:
    action = row["action"]
    file = ChangeFile(
        url=url,
        id=id_,
        partitionValues=dict(row["partition_values"] or ()),
        size=row["size"] or 0,
        timestamp=row["timestamp"],
        version=row["version"],
        stats=row["stats"] if action == "add" else None,
        expirationTimestamp=expiration_ms if action != "remove" else None,
    )
    if action == "add":
        return AddLine(file)
    if action == "cdc":
        return CdfLine(file)
    return RemoveLine(file)


def _delta_action(row: dict[str, Any], url: str, dv_urls: dict[str, str]) -> dict[str, Any]:
    """The Delta action of ``row`` as written in a log, with its path signed."""
    action = row["action"]
    out: dict[str, Any] = {"path": url, "partitionValues": dict(row["partition_values"] or ())}
    if row["size"] is not None:
        out["size"] = row["size"]
    data_change = row["data_change"]
    out["dataChange"] = (action != "cdc") if data_change is None else bool(data_change)
    if action == "add":
        out["modificationTime"] = row["modification_time"] or 0
        if row["stats"] is not None:
            out["stats"] = row["stats"]
    if action == "remove":
        if row["deletion_timestamp"] is not None:
            out["deletionTimestamp"] = row["deletion_timestamp"]
        out["extendedFileMetadata"] = row["size"] is not None
    if row["tags"]:
        out["tags"] = dict(row["tags"])
    dv = row["deletion_vector"]
    if dv is not None:
        out["deletionVector"] = deletion_vector_json(dv, dv_urls)
    if row["base_row_id"] is not None:
        out["baseRowId"] = row["base_row_id"]
    if row["default_row_commit_version"] is not None:
        out["defaultRowCommitVersion"] = row["default_row_commit_version"]
    return out
