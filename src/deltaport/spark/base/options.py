"""The options of ``spark.read.format("deltaSharing")`` and ``spark.readStream``, parsed
and checked once on the driver into a picklable value.

Names follow the official Delta Sharing Spark connector (``versionAsOf``,
``readChangeFeed``, ``maxFilesPerTrigger``, ...). Spark hands options over with
lower-cased keys, so lookups here are case-insensitive.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deltaport.protocol.profile import Profile, load_profile, parse_profile, split_table_url

DEFAULT_PARTITION_BYTES = 128 * 1024 * 1024
DEFAULT_MIN_PARTITIONS = 2
DEFAULT_MAX_VERSIONS_PER_RPC = 100
DEFAULT_VERSION_POLL_SECONDS = 30.0

_INLINE_PROFILE_KEYS = {
    "sharecredentialsversion": "shareCredentialsVersion",
    "type": "type",
    "endpoint": "endpoint",
    "bearertoken": "bearerToken",
    "expirationtime": "expirationTime",
    "tokenendpoint": "tokenEndpoint",
    "clientid": "clientId",
    "clientsecret": "clientSecret",
    "scope": "scope",
}


class OptionError(ValueError):
    """An option of the deltaSharing data source is missing, malformed or conflicting."""


@dataclass(frozen=True)
class SharingOptions:
    """Everything the data source was asked for."""

    profile: Profile
    table: str
    """``share.schema.table``."""
    version_as_of: int | None = None
    timestamp_as_of: str | None = None
    use_delta_format: bool | None = None
    read_change_feed: bool = False
    starting_version: int | None = None
    starting_version_latest: bool = False
    starting_timestamp: str | None = None
    ending_version: int | None = None
    ending_timestamp: str | None = None
    max_files_per_trigger: int | None = None
    max_bytes_per_trigger: int | None = None
    max_versions_per_rpc: int = DEFAULT_MAX_VERSIONS_PER_RPC
    ignore_deletes: bool = False
    ignore_changes: bool = False
    skip_change_commits: bool = False
    partition_bytes: int = DEFAULT_PARTITION_BYTES
    """Target bytes per input partition (files are packed up to it); 0: one file each."""
    min_partitions: int = DEFAULT_MIN_PARTITIONS
    """Fewer partitions than this are made only when there are fewer files."""
    json_predicate_hints: bool = False
    version_poll_seconds: float = DEFAULT_VERSION_POLL_SECONDS
    access_mode: str | None = None
    """``url``, ``dir`` or ``auto`` (``accessMode``): how reads get at the files; None:
    the profile's ``accessMode``, else ``url``."""
    async_query: bool | None = None
    """``asyncQuery``: ask the server to prepare a snapshot's files while the driver polls
    (None: for tables known to be large, as the client decides)."""
    storage_options: Mapping[str, str] = field(default_factory=dict)
    """obstore options for directory mode (``storage.<key>`` options, such as
    ``storage.aws_endpoint``): what the vended credentials do not say."""

    @property
    def time_travel(self) -> bool:
        return self.version_as_of is not None or self.timestamp_as_of is not None


def parse_options(options: Mapping[str, str]) -> SharingOptions:
    """Check and convert the options Spark passed to the data source."""
    opts = {k.lower(): v for k, v in options.items()}
    profile, table = _profile_and_table(opts)
    parsed = SharingOptions(
        profile=profile,
        table=table,
        version_as_of=_int(opts, "versionAsOf"),
        timestamp_as_of=_timestamp(opts, "timestampAsOf"),
        use_delta_format=_response_format(opts),
        read_change_feed=_bool(opts, "readChangeFeed"),
        starting_version=None if _is_latest(opts) else _int(opts, "startingVersion"),
        starting_version_latest=_is_latest(opts),
        starting_timestamp=_timestamp(opts, "startingTimestamp"),
        ending_version=_int(opts, "endingVersion"),
        ending_timestamp=_timestamp(opts, "endingTimestamp"),
        max_files_per_trigger=_int(opts, "maxFilesPerTrigger", minimum=1),
        max_bytes_per_trigger=_bytes(opts, "maxBytesPerTrigger"),
        max_versions_per_rpc=_int(opts, "maxVersionsPerRpc", minimum=1)
        or DEFAULT_MAX_VERSIONS_PER_RPC,
        ignore_deletes=_bool(opts, "ignoreDeletes"),
        ignore_changes=_bool(opts, "ignoreChanges"),
        skip_change_commits=_bool(opts, "skipChangeCommits"),
        partition_bytes=_partition_bytes(opts),
        min_partitions=_int(opts, "minPartitions", minimum=1) or DEFAULT_MIN_PARTITIONS,
        json_predicate_hints=_bool(opts, "jsonPredicateHints"),
        version_poll_seconds=_float(opts, "versionPollIntervalSeconds")
        if "versionpollintervalseconds" in opts
        else DEFAULT_VERSION_POLL_SECONDS,
        access_mode=_access_mode(opts),
        async_query=_bool(opts, "asyncQuery") if _get(opts, "asyncQuery") is not None else None,
        storage_options={
            k[len(_STORAGE_PREFIX) :]: v for k, v in opts.items() if k.startswith(_STORAGE_PREFIX)
        },
    )
    _check_combinations(parsed)
    return parsed


_STORAGE_PREFIX = "storage."
_ACCESS_MODES = ("url", "dir", "auto")


def _access_mode(opts: Mapping[str, str]) -> str | None:
    value = _get(opts, "accessMode")
    if value is None:
        return None
    value = value.lower()
    if value not in _ACCESS_MODES:
        raise OptionError(f"option 'accessMode' must be url, dir or auto, got {value!r}")
    return value


def _profile_and_table(opts: Mapping[str, str]) -> tuple[Profile, str]:
    path = opts.get("path")
    if not path:
        raise OptionError(
            "give the table as .load('<profile file>#<share>.<schema>.<table>'), or "
            "'<share>.<schema>.<table>' with the profile as options (endpoint, bearerToken)"
        )
    inline = {name: opts[key] for key, name in _INLINE_PROFILE_KEYS.items() if key in opts}
    if "#" in path:
        if inline.get("endpoint"):
            raise OptionError("give the profile either as a file in the path or as options")
        profile_path, share, schema, table = split_table_url(path)
        return load_profile(profile_path), f"{share}.{schema}.{table}"
    if not inline.get("endpoint"):
        raise OptionError(f"the path {path!r} names no profile file and no 'endpoint' is set")
    names = path.split(".")
    if len(names) != 3 or not all(names):
        raise OptionError(f"the table must be <share>.<schema>.<table>, got {path!r}")
    return parse_profile(_typed_profile(inline)), path


def _typed_profile(inline: Mapping[str, str]) -> dict[str, Any]:
    obj: dict[str, Any] = dict(inline)
    version = obj.get("shareCredentialsVersion", "2" if "tokenEndpoint" in obj else "1")
    try:
        obj["shareCredentialsVersion"] = int(version)
    except ValueError:
        raise OptionError(
            f"'shareCredentialsVersion' must be an integer, got {version!r}"
        ) from None
    return obj


def _check_combinations(o: SharingOptions) -> None:
    if o.version_as_of is not None and o.timestamp_as_of is not None:
        raise OptionError("give either versionAsOf or timestampAsOf, not both")
    if o.time_travel and o.read_change_feed:
        raise OptionError(
            "versionAsOf/timestampAsOf do not apply to readChangeFeed; "
            "use startingVersion/endingVersion instead"
        )
    if o.starting_version is not None and o.starting_timestamp is not None:
        raise OptionError("give either startingVersion or startingTimestamp, not both")
    if o.ending_version is not None and o.ending_timestamp is not None:
        raise OptionError("give either endingVersion or endingTimestamp, not both")
    if (
        o.starting_version is not None
        and o.ending_version is not None
        and o.ending_version < o.starting_version
    ):
        raise OptionError(
            f"endingVersion {o.ending_version} is before startingVersion {o.starting_version}"
        )


def _get(opts: Mapping[str, str], name: str) -> str | None:
    value = opts.get(name.lower())
    return None if value is None or value.strip() == "" else value.strip()


def _int(opts: Mapping[str, str], name: str, minimum: int = 0) -> int | None:
    value = _get(opts, name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"option {name!r} must be an integer, got {value!r}") from None
    if number < minimum:
        raise OptionError(f"option {name!r} must be at least {minimum}, got {number}")
    return number


def _float(opts: Mapping[str, str], name: str) -> float:
    value = _get(opts, name) or ""
    try:
        number = float(value)
    except ValueError:
        raise OptionError(f"option {name!r} must be a number, got {value!r}") from None
    if number < 0:
        raise OptionError(f"option {name!r} cannot be negative, got {number}")
    return number


def _bool(opts: Mapping[str, str], name: str) -> bool:
    value = _get(opts, name)
    if value is None:
        return False
    if value.lower() not in ("true", "false"):
        raise OptionError(f"option {name!r} must be true or false, got {value!r}")
    return value.lower() == "true"


_UNITS = {"b": 1, "k": 1024, "kb": 1024, "m": 1024**2, "mb": 1024**2, "g": 1024**3, "gb": 1024**3}


def _bytes(opts: Mapping[str, str], name: str, allow_zero: bool = False) -> int | None:
    """A byte size: ``1048576``, ``512k``, ``10m``, ``1g``."""
    value = _get(opts, name)
    if value is None:
        return None
    text = value.lower()
    digits = text.rstrip("bkmg")
    unit = text[len(digits) :] or "b"
    if not digits.isdigit() or unit not in _UNITS:
        raise OptionError(f"option {name!r} must be a byte size like 1048576 or 10m, got {value!r}")
    size = int(digits) * _UNITS[unit]
    if size == 0 and not allow_zero:
        raise OptionError(f"option {name!r} must be more than 0 bytes")
    return size


def _partition_bytes(opts: Mapping[str, str]) -> int:
    size = _bytes(opts, "partitionBytes", allow_zero=True)
    return DEFAULT_PARTITION_BYTES if size is None else size


def _is_latest(opts: Mapping[str, str]) -> bool:
    value = _get(opts, "startingVersion")
    return value is not None and value.lower() == "latest"


def _response_format(opts: Mapping[str, str]) -> bool | None:
    value = _get(opts, "responseFormat")
    if value is None:
        return None
    if value.lower() not in ("parquet", "delta"):
        raise OptionError(f"option 'responseFormat' must be parquet or delta, got {value!r}")
    return value.lower() == "delta"


def _timestamp(opts: Mapping[str, str], name: str) -> str | None:
    """An ISO 8601 UTC timestamp for the server (a time without zone is taken as UTC)."""
    value = _get(opts, name)
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise OptionError(
            f"option {name!r} must be a timestamp like 2024-01-31T08:00:00Z "
            f"or '2024-01-31 08:00:00', got {value!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    utc = moment.astimezone(dt.UTC)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")
