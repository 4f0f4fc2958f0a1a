"""The Delta log's actions as values: protocol, metadata, deletion vectors, file tables.

File actions (add, remove, cdc) are kept as Arrow tables with
[`FILE_SCHEMA`][deltaport.delta.FILE_SCHEMA] (a snapshot's active files) or
[`CHANGE_SCHEMA`][deltaport.delta.CHANGE_SCHEMA] (the file actions of a version range), never as one
Python object per file: tables with a million files stay cheap to filter, page and encode.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

COLUMN_MAPPING_MODE_KEY = "delta.columnMapping.mode"
ENABLE_CDF_KEY = "delta.enableChangeDataFeed"
IN_COMMIT_TIMESTAMPS_KEY = "delta.enableInCommitTimestamps"

_STRING_MAP = pa.map_(pa.string(), pa.string())

DELETION_VECTOR_TYPE = pa.struct(
    [
        pa.field("storageType", pa.string()),
        pa.field("pathOrInlineDv", pa.string()),
        pa.field("offset", pa.int32()),
        pa.field("sizeInBytes", pa.int32()),
        pa.field("cardinality", pa.int64()),
    ]
)

FILE_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("partition_values", _STRING_MAP),
        pa.field("size", pa.int64()),
        pa.field("modification_time", pa.int64()),
        pa.field("data_change", pa.bool_()),
        pa.field("stats", pa.string()),
        pa.field("tags", _STRING_MAP),
        pa.field("deletion_vector", DELETION_VECTOR_TYPE),
        pa.field("base_row_id", pa.int64()),
        pa.field("default_row_commit_version", pa.int64()),
    ]
)
"""Active files of a snapshot, one row per add action (``path`` as written in the log,
URL-encoded when relative; ``stats`` as a JSON string, also when the checkpoint only had
parsed stats)."""

CHANGE_SCHEMA = pa.schema(
    [
        pa.field("version", pa.int64(), nullable=False),
        pa.field("timestamp", pa.int64(), nullable=False),
        pa.field("action", pa.string(), nullable=False),
        *FILE_SCHEMA,
        pa.field("deletion_timestamp", pa.int64()),
    ]
)
"""File actions of a version range: ``action`` is ``add``, ``remove`` or ``cdc``;
``timestamp`` is the commit's timestamp in ms (in-commit timestamp when enabled)."""


@dataclass(frozen=True)
class Protocol:
    min_reader_version: int
    min_writer_version: int
    reader_features: tuple[str, ...] | None = None
    writer_features: tuple[str, ...] | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Protocol:
        rf = d.get("readerFeatures")
        wf = d.get("writerFeatures")
        return cls(
            int(d.get("minReaderVersion", 1)),
            int(d.get("minWriterVersion", 2)),
            tuple(rf) if rf is not None else None,
            tuple(wf) if wf is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "minReaderVersion": self.min_reader_version,
            "minWriterVersion": self.min_writer_version,
        }
        if self.reader_features is not None:
            out["readerFeatures"] = list(self.reader_features)
        if self.writer_features is not None:
            out["writerFeatures"] = list(self.writer_features)
        return out


@dataclass(frozen=True)
class Metadata:
    id: str
    schema_string: str
    partition_columns: tuple[str, ...] = ()
    configuration: Mapping[str, str] = field(default_factory=dict)
    name: str | None = None
    description: str | None = None
    format_provider: str = "parquet"
    format_options: Mapping[str, str] = field(default_factory=dict)
    created_time: int | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Metadata:
        fmt = d.get("format") or {}
        return cls(
            id=str(d.get("id", "")),
            schema_string=str(d.get("schemaString", "")),
            partition_columns=tuple(d.get("partitionColumns") or ()),
            configuration=dict(d.get("configuration") or {}),
            name=d.get("name"),
            description=d.get("description"),
            format_provider=str(fmt.get("provider", "parquet")),
            format_options=dict(fmt.get("options") or {}),
            created_time=d.get("createdTime"),
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "format": {"provider": self.format_provider, "options": dict(self.format_options)},
            "schemaString": self.schema_string,
            "partitionColumns": list(self.partition_columns),
            "configuration": dict(self.configuration),
        }
        if self.name is not None:
            out["name"] = self.name
        if self.description is not None:
            out["description"] = self.description
        if self.created_time is not None:
            out["createdTime"] = self.created_time
        return out

    @property
    def column_mapping_mode(self) -> str:
        """``none``, ``name`` or ``id``."""
        return self.configuration.get(COLUMN_MAPPING_MODE_KEY, "none").lower()

    @property
    def change_data_feed_enabled(self) -> bool:
        return self.configuration.get(ENABLE_CDF_KEY, "false").lower() == "true"


@dataclass(frozen=True)
class DeletionVector:
    """A deletion-vector descriptor: ``storage_type`` ``u`` (relative path, z85 UUID),
    ``i`` (inline z85 bitmap) or ``p`` (absolute path)."""

    storage_type: str
    path_or_inline_dv: str
    offset: int | None
    size_in_bytes: int
    cardinality: int

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> DeletionVector:
        return cls(
            str(d["storageType"]),
            str(d["pathOrInlineDv"]),
            None if d.get("offset") is None else int(d["offset"]),
            int(d["sizeInBytes"]),
            int(d["cardinality"]),
        )

    @property
    def unique_id(self) -> str:
        """The id that, with the path, identifies a logical file in log replay."""
        base = f"{self.storage_type}{self.path_or_inline_dv}"
        return base if self.offset is None else f"{base}@{self.offset}"

    def relative_path(self) -> str:
        """For ``u`` descriptors: the DV file path relative to the table root."""
        if self.storage_type != "u":
            raise ValueError("only 'u' deletion vectors have a derived relative path")
        encoded = self.path_or_inline_dv
        prefix, uuid_part = encoded[:-20], encoded[-20:]
        file_uuid = uuid.UUID(bytes=z85_decode(uuid_part))
        name = f"deletion_vector_{file_uuid}.bin"
        return f"{prefix}/{name}" if prefix else name


_Z85_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_INDEX = {c: i for i, c in enumerate(_Z85_CHARS)}


def z85_decode(text: str) -> bytes:
    """Decode Z85 (the ZeroMQ base-85 variant Delta uses for DV ids and inline bitmaps).

    Also accepts the padded last block that some writers (the Rust ``z85`` crate) emit: ``k``
    leading ``#`` then ``5 - k`` digits holding ``4 - k`` bytes. A standard block never starts
    with ``#``, whose value would exceed 32 bits.
    """
    if len(text) % 5:
        raise ValueError("z85 text length must be a multiple of 5")
    out = bytearray()
    for i in range(0, len(text), 5):
        block = text[i : i + 5]
        pad = len(block) - len(block.lstrip("#")) if i + 5 == len(text) else 0
        if pad > 3:
            raise ValueError(f"invalid z85 block {block!r}")
        value = 0
        for ch in block[pad:]:
            digit = _Z85_INDEX.get(ch)
            if digit is None:
                raise ValueError(f"invalid z85 character {ch!r}")
            value = value * 85 + digit
        if value >= 1 << 32:
            raise ValueError(f"invalid z85 block {block!r}")
        out += value.to_bytes(4 - pad, "big")
    return bytes(out)


def z85_encode(data: bytes) -> str:
    if len(data) % 4:
        raise ValueError("z85 input length must be a multiple of 4")
    chars: list[str] = []
    for i in range(0, len(data), 4):
        value = int.from_bytes(data[i : i + 4], "big")
        block: list[str] = []
        for _ in range(5):
            value, rem = divmod(value, 85)
            block.append(_Z85_CHARS[rem])
        chars.extend(reversed(block))
    return "".join(chars)
