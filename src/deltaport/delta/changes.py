"""File actions of a version range, and the change-data-feed selection over them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.delta.commits import Commit, file_actions_table
from deltaport.delta.errors import CdfNotEnabledError
from deltaport.delta.features import check_readable
from deltaport.delta.model import CHANGE_SCHEMA, Metadata, Protocol


@dataclass(frozen=True)
class VersionEntry:
    """The non-file actions of one version."""

    version: int
    timestamp: int
    commit_info: Mapping[str, Any] | None
    protocol: Protocol | None
    metadata: Metadata | None


@dataclass(frozen=True)
class TableChanges:
    """Actions of versions ``start_version..end_version``; ``files`` has CHANGE_SCHEMA."""

    start_version: int
    end_version: int
    protocol: Protocol
    metadata: Metadata
    versions: list[VersionEntry]
    files: pa.Table


def collect_changes(
    start: int,
    end: int,
    protocol: Protocol,
    metadata: Metadata,
    commits: Sequence[Commit],
    timestamps: Sequence[int],
) -> TableChanges:
    """All file actions of ``commits`` (ascending, one per version) as one table."""
    versions: list[VersionEntry] = []
    actions = []
    action_versions: list[int] = []
    action_times: list[int] = []
    kinds: list[str] = []
    deletion_times: list[int | None] = []
    for commit, timestamp in zip(commits, timestamps, strict=True):
        if commit.protocol is not None:
            check_readable(commit.protocol, commit.version)
        versions.append(
            VersionEntry(
                commit.version, timestamp, commit.commit_info, commit.protocol, commit.metadata
            )
        )
        for kind, action in commit.file_actions:
            actions.append(action)
            kinds.append(kind)
            action_versions.append(commit.version)
            action_times.append(timestamp)
            deletion_times.append(action.deletionTimestamp if kind == "remove" else None)
    files = file_actions_table(actions)
    table = pa.Table.from_arrays(
        [
            pa.array(action_versions, pa.int64()),
            pa.array(action_times, pa.int64()),
            pa.array(kinds, pa.string()),
            *files.columns,
            pa.array(deletion_times, pa.int64()),
        ],
        schema=CHANGE_SCHEMA,
    )
    return TableChanges(start, end, protocol, metadata, versions, table)


def select_change_data(changes: TableChanges) -> TableChanges:
    """Per version: its cdc files when it has any, else its data-changing adds and removes.

    Raises [`CdfNotEnabledError`][deltaport.delta.CdfNotEnabledError] at the first version where the
    feed was off (the metadata in force after that version's own metaData action).
    """
    metadata = changes.metadata
    for entry in changes.versions:
        metadata = entry.metadata or metadata
        if not metadata.change_data_feed_enabled:
            raise CdfNotEnabledError(
                f"change data feed is not enabled at version {entry.version} "
                f"(delta.enableChangeDataFeed is not true); asked range "
                f"{changes.start_version}..{changes.end_version}"
            )
    files = changes.files
    action = files.column("action")
    is_cdc = pc.equal(action, "cdc")
    cdc_versions = pc.unique(files.column("version").filter(is_cdc))
    in_cdc_version = pc.is_in(files.column("version"), value_set=cdc_versions)
    data_change = pc.and_(
        pc.invert(pc.equal(action, "cdc")), pc.fill_null(files.column("data_change"), True)
    )
    keep = pc.if_else(in_cdc_version, is_cdc, data_change)
    return TableChanges(
        changes.start_version,
        changes.end_version,
        changes.protocol,
        changes.metadata,
        changes.versions,
        files.filter(keep),
    )
