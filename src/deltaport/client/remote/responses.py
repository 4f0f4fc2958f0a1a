"""Decoding query and change-data answers (parquet or delta response format) into the
protocol, metadata, files and end-of-stream action of one page."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx
import msgspec

from deltaport.client.base.errors import ResponseError, SharingError
from deltaport.client.base.models import RemoteFile
from deltaport.client.remote.rest import CAPABILITIES_HEADER, LinesResponse, version_header
from deltaport.delta.model import DeletionVector, Metadata, Protocol
from deltaport.protocol.capabilities import DELTA, PARQUET
from deltaport.protocol.file_batch import HEADER as FILE_BATCH_HEADER
from deltaport.protocol.file_id_hash import HEADER as FILE_ID_HASH_HEADER

MAX_PARQUET_READER_VERSION = 1
_PARQUET_CHANGE_ACTIONS = {"add": "add", "cdf": "cdc", "remove": "remove"}
_DELTA_FILE_ACTIONS = ("add", "remove", "cdc")


@dataclass
class Page:
    """One answer of the server (a query may come in several pages)."""

    version: int
    response_format: str
    protocol: Protocol | None = None
    metadata: Metadata | None = None
    metadata_versions: list[tuple[int, Metadata]] = field(default_factory=list)
    protocol_versions: list[tuple[int, Protocol]] = field(default_factory=list)
    files: list[RemoteFile] = field(default_factory=list)
    end_expected: bool = False
    end_seen: bool = False
    next_page_token: str | None = None
    refresh_token: str | None = None
    file_batch_url: str | None = None
    num_files: int | None = None
    """The table's file count, when the metadata line says it (``numFiles``)."""


def response_capabilities(headers: httpx.Headers) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for part in headers.get(CAPABILITIES_HEADER, "").lower().split(";"):
        key, sep, value = part.partition("=")
        if sep:
            pairs[key.strip()] = value.strip()
    return pairs


def parse_page(
    response: LinesResponse,
    asked_formats: tuple[str, ...],
    *,
    cdf: bool,
    file_id_hash: str | None = None,
) -> Page:
    """Decode one NDJSON answer, checking its headers and its end-of-stream action;
    with ``cdf`` the files are change files (add, remove, cdc); with ``file_id_hash``
    the server must have echoed that ``fileidhash``."""
    if file_id_hash is not None:
        echoed = response.headers.get(FILE_ID_HASH_HEADER)
        if echoed != file_id_hash:
            raise ResponseError(
                f"asked for file ids as {FILE_ID_HASH_HEADER}={file_id_hash}, the server "
                f"answered with {FILE_ID_HASH_HEADER}={echoed}: it does not support them"
            )
    caps = response_capabilities(response.headers)
    fmt = caps.get("responseformat", PARQUET)
    if fmt not in (PARQUET, DELTA):
        raise ResponseError(f"the server answered in an unknown response format {fmt!r}")
    if fmt not in asked_formats:
        raise ResponseError(
            f"the server answered in the {fmt} response format, which was not asked for"
        )
    page = Page(version_header(response.headers), fmt)
    page.file_batch_url = response.headers.get(FILE_BATCH_HEADER)
    page.end_expected = caps.get("includeendstreamaction") == "true"
    for raw in response.lines:
        if page.end_seen:
            raise ResponseError("the server sent lines after its endStreamAction")
        try:
            line = msgspec.json.decode(raw)
        except msgspec.DecodeError as exc:
            raise ResponseError(f"the server sent a line that is not JSON: {exc}") from None
        if not isinstance(line, dict) or len(line) != 1:
            raise ResponseError(f"unexpected response line {raw[:200]!r}")
        ((key, value),) = line.items()
        _apply_line(page, key, value, cdf)
    if page.end_expected and not page.end_seen:
        raise ResponseError(
            "the response ended without the endStreamAction the server announced: it was cut short"
        )
    if page.protocol is None or page.metadata is None:
        raise ResponseError("the response lacks its protocol or metaData line")
    return page


def _apply_line(page: Page, key: str, value: Any, cdf: bool) -> None:
    if key == "protocol":
        protocol = _protocol(value, page.response_format)
        if page.protocol is None:
            page.protocol = protocol
        elif value.get("version") is not None:
            page.protocol_versions.append((int(value["version"]), protocol))
    elif key == "metaData":
        metadata, version = _metadata(value, page.response_format)
        if page.metadata is None:
            page.metadata = metadata
            num_files = value.get("numFiles")
            page.num_files = num_files if isinstance(num_files, int) else None
        if version is not None:
            page.metadata_versions.append((version, metadata))
    elif key == "file":
        page.files.append(
            _delta_file(value, cdf)
            if page.response_format == DELTA
            else _parquet_file(value, "add" if cdf else "file")
        )
    elif key in _PARQUET_CHANGE_ACTIONS:
        page.files.append(_parquet_file(value, _PARQUET_CHANGE_ACTIONS[key]))
    elif key == "endStreamAction":
        page.end_seen = True
        if value.get("errorMessage"):
            raise ResponseError(f"the server failed while answering: {value['errorMessage']}")
        page.next_page_token = value.get("nextPageToken") or None
        page.refresh_token = value.get("refreshToken") or None
    # Other keys are newer protocol additions this client does not need.


def _protocol(value: dict[str, Any], fmt: str) -> Protocol:
    if fmt == DELTA:
        return Protocol.from_json(value["deltaProtocol"])
    reader = int(value.get("minReaderVersion", 1))
    if reader > MAX_PARQUET_READER_VERSION:
        raise SharingError(
            f"the table needs a client that reads response protocol version {reader}; "
            "upgrade deltaport"
        )
    return Protocol(reader, 0)


def _metadata(value: dict[str, Any], fmt: str) -> tuple[Metadata, int | None]:
    if fmt == DELTA:
        return Metadata.from_json(value["deltaMetadata"]), value.get("version")
    return Metadata.from_json(value), value.get("version")


def _parquet_file(value: dict[str, Any], action: str) -> RemoteFile:
    return RemoteFile(
        id=str(value["id"]),
        url=value["url"],
        size=int(value.get("size") or 0),
        partition_values=value.get("partitionValues") or {},
        stats=value.get("stats"),
        expiration_timestamp=value.get("expirationTimestamp"),
        action=action,
        version=value.get("version"),
        timestamp=value.get("timestamp"),
    )


def _delta_file(value: dict[str, Any], cdf: bool) -> RemoteFile:
    single = value["deltaSingleAction"]
    action = next((a for a in _DELTA_FILE_ACTIONS if a in single), None)
    if action is None:
        raise ResponseError(f"unknown delta file action {sorted(single)}")
    inner = single[action]
    dv = inner.get("deletionVector")
    return RemoteFile(
        id=str(value["id"]),
        url=inner["path"],
        size=int(inner.get("size") or 0),
        partition_values=inner.get("partitionValues") or {},
        stats=inner.get("stats"),
        expiration_timestamp=value.get("expirationTimestamp"),
        deletion_vector=DeletionVector.from_json(dv) if dv else None,
        action=action if cdf else "file",
        version=value.get("version"),
        timestamp=value.get("timestamp"),
        data_change=inner.get("dataChange", True) is not False,
        modification_time=inner.get("modificationTime"),
    )
