"""Commit timestamps: in-commit timestamps (ICT) where enabled, file modification times else.

With ``delta.enableInCommitTimestamps`` the commitInfo of every commit from the
enablement version on (``delta.inCommitTimestampEnablementVersion``, or all commits when
the table was created with ICT) carries ``inCommitTimestamp``; earlier commits use the
commit file's modification time.
"""

from __future__ import annotations

from deltaport.delta.commits import Commit
from deltaport.delta.model import IN_COMMIT_TIMESTAMPS_KEY, Metadata

ICT_ENABLEMENT_VERSION_KEY = "delta.inCommitTimestampEnablementVersion"
ICT_ENABLEMENT_TIMESTAMP_KEY = "delta.inCommitTimestampEnablementTimestamp"


def ict_enablement(metadata: Metadata) -> tuple[int, int | None] | None:
    """(first version with ICT, its timestamp if recorded), or None when ICT is off."""
    conf = metadata.configuration
    if conf.get(IN_COMMIT_TIMESTAMPS_KEY, "false").lower() != "true":
        return None
    version = conf.get(ICT_ENABLEMENT_VERSION_KEY)
    timestamp = conf.get(ICT_ENABLEMENT_TIMESTAMP_KEY)
    if version is None:
        return (0, None)
    return (int(version), int(timestamp) if timestamp is not None else None)


def uses_ict(metadata: Metadata, version: int) -> bool:
    enablement = ict_enablement(metadata)
    return enablement is not None and version >= enablement[0]


def commit_time(commit: Commit | None, metadata: Metadata, version: int, mtime: int) -> int:
    """The commit's timestamp: its ICT when ICT applies and is present, else ``mtime``."""
    if commit is not None and uses_ict(metadata, version):
        ict = commit.in_commit_timestamp
        if ict is not None:
            return ict
    return mtime
