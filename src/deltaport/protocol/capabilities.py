"""The ``delta-sharing-capabilities`` header: what a client can read, what the server sent.

The request header holds ``key=value`` pairs separated by ``;``; values that are lists
are separated by ``,`` (for example ``responseformat=delta,parquet;readerfeatures=
deletionvectors,columnmapping``). Keys and values are case-insensitive. A missing
``responseformat`` means ``parquet``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from deltaport.protocol.echo import echo
from deltaport.protocol.errors import InvalidParameterError, UnsupportedOperationError

HEADER = "delta-sharing-capabilities"
PARQUET = "parquet"
DELTA = "delta"
RESPONSE_FORMATS = (PARQUET, DELTA)

# Reader features whose data a parquet-format client reads correctly: they change how the
# log is stored, not how data files are read.
PARQUET_SAFE_READER_FEATURES = frozenset({"timestampntz", "v2checkpoint", "vacuumprotocolcheck"})


@dataclass(frozen=True)
class Capabilities:
    """What a client declared it can handle. ``file_id_hash`` is the scheme of file ids
    it asked for in its own header (:mod:`deltaport.protocol.file_id_hash`), not in
    this one."""

    response_formats: tuple[str, ...] = (PARQUET,)
    reader_features: frozenset[str] | None = None
    include_end_stream_action: bool = False
    async_query: bool = False
    """``asyncquery=true``: the client can poll a query id (Get Query Info)."""
    file_id_hash: str | None = None


def parse_capabilities(header: str | None) -> Capabilities:
    """Parse the request header (absent header: parquet only)."""
    if not header:
        return Capabilities()
    pairs: dict[str, str] = {}
    for part in header.lower().split(";"):
        key, sep, value = part.partition("=")
        if sep:
            pairs[key.strip()] = value.strip()
    formats: tuple[str, ...] = (PARQUET,)
    if "responseformat" in pairs:
        asked = [f.strip() for f in pairs["responseformat"].split(",") if f.strip()]
        formats = tuple(f for f in asked if f in RESPONSE_FORMATS)
        if not formats:
            raise InvalidParameterError(
                f"{HEADER}: responseformat must list parquet and/or delta, got "
                f"{echo(pairs['responseformat'])}"
            )
    features = None
    if "readerfeatures" in pairs:
        features = frozenset(f.strip() for f in pairs["readerfeatures"].split(",") if f.strip())
    return Capabilities(
        formats,
        features,
        pairs.get("includeendstreamaction") == "true",
        pairs.get("asyncquery") == "true",
    )


def needs_delta_format(reader_features: Iterable[str], column_mapping_mode: str) -> bool:
    """Whether a table can only be described to clients in the delta response format."""
    if column_mapping_mode != "none":
        return True
    return any(f.lower() not in PARQUET_SAFE_READER_FEATURES for f in reader_features)


def choose_response_format(
    caps: Capabilities, table_reader_features: Iterable[str], column_mapping_mode: str
) -> str:
    """The format to answer in: parquet when the table allows it and the client accepts it,
    else delta; a clear error when the client cannot read the table at all."""
    features = [f.lower() for f in table_reader_features]
    if not needs_delta_format(features, column_mapping_mode):
        return PARQUET if PARQUET in caps.response_formats else DELTA
    if DELTA not in caps.response_formats:
        blocking = sorted(set(features) - PARQUET_SAFE_READER_FEATURES) or ["columnMapping"]
        raise UnsupportedOperationError(
            "the table uses reader features that the parquet response format cannot express "
            f"({', '.join(blocking)}); ask for responseformat=delta in the {HEADER} header"
        )
    if caps.reader_features is not None:
        missing = sorted(set(features) - caps.reader_features)
        if missing:
            raise UnsupportedOperationError(
                f"the table needs reader features the client did not declare: {', '.join(missing)}"
            )
    return DELTA


def response_header(
    response_format: str | None, include_end_stream_action: bool, async_query: bool = False
) -> str:
    """The header value a response carries to name the format it was written in (None:
    none yet, an asynchronous query's status) and the capabilities it honoured."""
    parts = [f"responseformat={response_format}"] if response_format else []
    if include_end_stream_action:
        parts.append("includeendstreamaction=true")
    if async_query:
        parts.append("asyncquery=true")
    return ";".join(parts)
