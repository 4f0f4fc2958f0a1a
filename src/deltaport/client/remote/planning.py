"""Asking the server for a scan's files: capabilities negotiation, pages (``maxFiles`` /
``pageToken``), consistency checks, and refreshing the URLs of a plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from deltaport.client.base.errors import ResponseError, SharingError
from deltaport.client.base.models import QuerySpec, RemoteFile, ScanPlan, Table
from deltaport.client.remote.async_query import AsyncQuery, remember_size
from deltaport.client.remote.responses import Page, parse_page
from deltaport.client.remote.rest import CAPABILITIES_HEADER, RestClient, table_path
from deltaport.delta.errors import UnsupportedFeatureError
from deltaport.delta.features import SUPPORTED_READER_FEATURES, check_readable
from deltaport.delta.model import Metadata, Protocol
from deltaport.protocol.capabilities import DELTA, PARQUET
from deltaport.protocol.file_id_hash import HEADER as FILE_ID_HASH_HEADER

DEFAULT_MAX_FILES = 100_000
"""Files per page asked of servers that page query answers."""

READER_FEATURES = tuple(sorted(f.lower() for f in SUPPORTED_READER_FEATURES))
"""Table reader features this client reads in the delta response format."""

SNAPSHOT = "snapshot"
VERSIONS = "versions"
CHANGES = "changes"


def response_formats(use_delta_format: bool | None) -> tuple[str, ...]:
    """``None``: whichever the server prefers for the table (parquet unless the table
    needs delta, decided by the server in the same request)."""
    if use_delta_format is None:
        return (PARQUET, DELTA)
    return (DELTA,) if use_delta_format else (PARQUET,)


def capabilities(formats: tuple[str, ...]) -> str:
    parts = [f"responseformat={','.join(formats)}"]
    if DELTA in formats:
        parts.append(f"readerfeatures={','.join(READER_FEATURES)}")
    parts.append("includeendstreamaction=true")
    return ";".join(parts)


def snapshot_query(
    table: Table,
    *,
    version: int | None = None,
    timestamp: str | None = None,
    json_predicate_hints: str | None = None,
    limit_hint: int | None = None,
    use_delta_format: bool | None = None,
    max_files: int | None = DEFAULT_MAX_FILES,
    async_query: bool = False,
    file_id_hash: str | None = None,
) -> QuerySpec:
    body: dict[str, Any] = {}
    if json_predicate_hints is not None:
        body["jsonPredicateHints"] = json_predicate_hints
    if limit_hint is not None:
        body["limitHint"] = limit_hint
    if version is not None:
        body["version"] = version
    if timestamp is not None:
        body["timestamp"] = timestamp
    if max_files is not None:
        body["maxFiles"] = max_files
    if version is None and timestamp is None:
        body["includeRefreshToken"] = True
    return QuerySpec(
        table,
        SNAPSHOT,
        body,
        response_formats(use_delta_format),
        async_query=async_query,
        file_id_hash=file_id_hash,
    )


def versions_query(
    table: Table,
    *,
    starting_version: int,
    ending_version: int | None = None,
    use_delta_format: bool | None = None,
    max_files: int | None = DEFAULT_MAX_FILES,
    file_id_hash: str | None = None,
) -> QuerySpec:
    """``/query`` with ``startingVersion``: the files each version of the range added or
    removed, with the protocol of each version that changed it (delta format)."""
    body: dict[str, Any] = {"startingVersion": starting_version, "includeHistoricalProtocol": True}
    if ending_version is not None:
        body["endingVersion"] = ending_version
    if max_files is not None:
        body["maxFiles"] = max_files
    return QuerySpec(
        table, VERSIONS, body, response_formats(use_delta_format), file_id_hash=file_id_hash
    )


def changes_query(
    table: Table,
    *,
    starting_version: int | None = None,
    ending_version: int | None = None,
    starting_timestamp: str | None = None,
    ending_timestamp: str | None = None,
    use_delta_format: bool | None = None,
    file_id_hash: str | None = None,
) -> QuerySpec:
    if starting_version is None and starting_timestamp is None:
        raise ValueError("either starting_version or starting_timestamp must be given")
    params = {
        "startingVersion": starting_version,
        "endingVersion": ending_version,
        "startingTimestamp": starting_timestamp,
        "endingTimestamp": ending_timestamp,
    }
    clean: dict[str, Any] = {k: v for k, v in params.items() if v is not None}
    clean["includeHistoricalMetadata"] = True  # the metadata of each version that set it
    clean["includeHistoricalProtocol"] = True  # and the protocol (delta format)
    return QuerySpec(
        table, CHANGES, clean, response_formats(use_delta_format), file_id_hash=file_id_hash
    )


def fetch_plan(rest: RestClient, spec: QuerySpec, refresh_token: str | None = None) -> ScanPlan:
    """Run a query to its last page and gather its files into a plan."""
    headers = {CAPABILITIES_HEADER: capabilities(spec.response_formats)}
    if spec.file_id_hash is not None:
        headers[FILE_ID_HASH_HEADER] = spec.file_id_hash
    path = table_path(spec.table)
    if spec.kind == CHANGES:
        answer = rest.lines("GET", path + "/changes", params=spec.body, headers=headers)
        pages = [
            parse_page(answer, spec.response_formats, cdf=True, file_id_hash=spec.file_id_hash)
        ]
    else:
        pages = _query_pages(rest, path, spec, headers, refresh_token)
    first, last = pages[0], pages[-1]
    assert first.protocol is not None and first.metadata is not None
    remember_size(rest.profile.endpoint, spec.table, first.num_files)
    if first.response_format == DELTA:
        try:
            check_readable(first.protocol, first.version)
        except UnsupportedFeatureError as exc:
            raise SharingError(f"this client cannot read the table: {exc}") from None
    files = [f for page in pages for f in page.files]
    if spec.kind == CHANGES:
        files = _pair_changes(files)
    metadata_changes = _metadata_changes(pages) if spec.kind != SNAPSHOT else ()
    metadata = metadata_changes[-1][1] if metadata_changes else first.metadata
    protocol_changes = _protocol_changes(pages)
    return ScanPlan(
        table=spec.table,
        version=first.version,
        protocol=first.protocol,
        metadata=metadata,
        files=tuple(files),
        response_format=first.response_format,
        cdf=spec.kind == CHANGES,
        query=spec,
        refresh_token=last.refresh_token,
        metadata_changes=metadata_changes,
        protocol_changes=protocol_changes,
        file_batch_url=first.file_batch_url,
    )


def _protocol_changes(pages: list[Page]) -> tuple[tuple[int, Protocol], ...]:
    """The protocols set inside a range (``includeHistoricalProtocol``), in version order;
    refused when this client cannot read one of them."""
    by_version = {v: p for page in pages for v, p in page.protocol_versions}
    for version, protocol in sorted(by_version.items()):
        try:
            check_readable(protocol, version)
        except UnsupportedFeatureError as exc:
            raise SharingError(
                f"this client cannot read the table from version {version} on: {exc}"
            ) from None
    return tuple(sorted(by_version.items(), key=lambda item: item[0]))


def _metadata_changes(pages: list[Page]) -> tuple[tuple[int, Metadata], ...]:
    """The metadata set by each version of a range, in version order (a version's
    metadata line may repeat on later pages)."""
    by_version = {v: m for page in pages for v, m in page.metadata_versions}
    return tuple(sorted(by_version.items(), key=lambda item: item[0]))


def _query_pages(
    rest: RestClient,
    path: str,
    spec: QuerySpec,
    headers: Mapping[str, str],
    refresh_token: str | None,
) -> list[Page]:
    body = dict(spec.body)
    if refresh_token is not None:
        body["refreshToken"] = refresh_token
    pages: list[Page] = []
    seen_tokens: set[str] = set()
    asynchronous = AsyncQuery(rest, path, headers) if spec.async_query else None
    while True:
        if asynchronous is None:
            answer = rest.lines("POST", path + "/query", json=body, headers=headers)
        elif not pages:
            answer = asynchronous.first_page(body)
        elif asynchronous.query_id is None:  # the server answered synchronously
            answer = rest.lines("POST", path + "/query", json=body, headers=headers)
        else:
            answer = asynchronous.next_page(body["pageToken"], body.get("maxFiles"))
        page = parse_page(
            answer,
            spec.response_formats,
            cdf=spec.kind == VERSIONS,
            file_id_hash=spec.file_id_hash,
        )
        if pages and (page.version, page.response_format) != (
            pages[0].version,
            pages[0].response_format,
        ):
            raise ResponseError("the pages of one query answer for different table versions")
        pages.append(page)
        token = page.next_page_token
        if token is None:
            return pages
        if token in seen_tokens:
            raise ResponseError("the server repeated a page token")
        seen_tokens.add(token)
        body = {**body, "pageToken": token}
        body.pop("refreshToken", None)


def _pair_changes(files: list[RemoteFile]) -> list[RemoteFile]:
    """Mark add/remove files of one version that share an id: their changed rows are the
    difference of the two deletion vectors."""
    by_key = {(f.version, f.action, f.id): f for f in files}
    partners = {"add": "remove", "remove": "add"}
    out = []
    for f in files:
        other = by_key.get((f.version, partners.get(f.action, ""), f.id))
        if other is None:
            out.append(f)
        else:
            out.append(
                dataclasses.replace(
                    f, has_partner=True, partner_deletion_vector=other.deletion_vector
                )
            )
    return out


def refresh_plan(rest: RestClient, plan: ScanPlan) -> ScanPlan:
    """The plan with fresh URLs for the same files, at the same version.

    Uses the refresh token when the server gave one; otherwise runs the query again,
    pinned to the plan's version when the table has moved on since.
    """
    spec = plan.query
    if spec.kind == SNAPSHOT and plan.refresh_token is not None:
        fresh = fetch_plan(rest, spec, refresh_token=plan.refresh_token)
    else:
        fresh = fetch_plan(rest, spec)
    if spec.kind == SNAPSHOT and fresh.version != plan.version:
        body = {k: v for k, v in spec.body.items() if k not in ("timestamp", "includeRefreshToken")}
        pinned = dataclasses.replace(spec, body={**body, "version": plan.version})
        try:
            fresh = fetch_plan(rest, pinned)
        except SharingError as exc:
            raise SharingError(
                f"the file URLs expired and the table moved from version {plan.version} to "
                f"{fresh.version}; the old version cannot be read again: {exc.message}"
            ) from exc
    by_key = {f.key: f for f in fresh.files}
    missing = [f.id for f in plan.files if f.key not in by_key]
    if missing:
        raise ResponseError(
            f"refreshing the file URLs did not return {len(missing)} of the plan's files "
            f"(for example {missing[0]})"
        )
    return dataclasses.replace(
        plan,
        files=tuple(by_key[f.key] for f in plan.files),
        refresh_token=fresh.refresh_token or plan.refresh_token,
    )
