"""Timestamp -> version: file modification times before ICT enablement, ICT after it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from deltaport.delta.errors import TimestampOutOfRangeError
from deltaport.delta.log_segment import LogListing
from deltaport.delta.model import Metadata
from deltaport.delta.timestamps import ict_enablement


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def find_version(
    listing: LogListing,
    metadata: Metadata,
    timestamp_ms: int,
    *,
    at_or_after: bool,
    ict_of: Callable[[int], int | None],
) -> int:
    """The latest version committed at or before ``timestamp_ms`` (or, with
    ``at_or_after``, the earliest committed at or after it) among reconstructable versions.

    Modification times need not be monotonic, so that region is scanned; ICTs are
    monotonic by the protocol, so that region is binary-searched (one commit read per step).
    """
    earliest = listing.earliest_version
    latest = listing.latest_version
    first = latest if earliest is None else earliest
    enablement = ict_enablement(metadata)
    ict_start = max(enablement[0], first) if enablement is not None else latest + 1

    def mtime(v: int) -> int:
        obj = listing.commits.get(v)
        return (obj or listing.checkpoints[v].files[0]).last_modified_ms

    def ict(v: int) -> int:
        value = ict_of(v)
        return mtime(v) if value is None else value

    mtime_versions = range(first, min(ict_start, latest + 1))
    ict_versions = range(ict_start, latest + 1)
    if at_or_after:
        for v in mtime_versions:
            if mtime(v) >= timestamp_ms:
                return v
        found = _bisect(ict_versions, lambda v: ict(v) >= timestamp_ms)
        if found is not None:
            return found
        raise TimestampOutOfRangeError(
            f"timestamp {_iso(timestamp_ms)} is after the latest version {latest} "
            f"(committed at {_iso(_time_of(latest, ict_versions, ict, mtime))})"
        )
    if ict_versions and ict(ict_versions[0]) <= timestamp_ms:
        after = _bisect(ict_versions, lambda v: ict(v) > timestamp_ms)
        return latest if after is None else after - 1
    candidates = [v for v in mtime_versions if mtime(v) <= timestamp_ms]
    if candidates:
        return candidates[-1]
    raise TimestampOutOfRangeError(
        f"timestamp {_iso(timestamp_ms)} is before the earliest available version {first} "
        f"(committed at {_iso(_time_of(first, ict_versions, ict, mtime))})"
    )


def _time_of(
    version: int, ict_versions: range, ict: Callable[[int], int], mtime: Callable[[int], int]
) -> int:
    return ict(version) if version in ict_versions else mtime(version)


def _bisect(versions: range, pred: Callable[[int], bool]) -> int | None:
    """The first version in ``versions`` where the monotone ``pred`` holds, or None."""
    lo, hi = 0, len(versions)
    while lo < hi:
        mid = (lo + hi) // 2
        if pred(versions[mid]):
            hi = mid
        else:
            lo = mid + 1
    return versions[lo] if lo < len(versions) else None
