"""Avro object container files from records already encoded: the header (magic, metadata
with the schema and codec, sync marker), then the records in a deflate block."""

from __future__ import annotations

import json
import os
import zlib
from typing import TypeAlias

from deltaport.iceberg.avro.binary import varint

MAGIC = b"Obj\x01"

AvroSchema: TypeAlias = dict[str, object]
"""An Avro schema document (a record), as written into a file's header."""

AvroRecord: TypeAlias = dict[str, object]
"""A record as the Avro writer takes it: field name to value."""


def header(schema: AvroSchema, metadata: dict[str, str]) -> bytes:
    """The header of files of ``schema`` with ``metadata``, up to the sync marker."""
    meta = {
        "avro.schema": json.dumps(schema).encode(),
        "avro.codec": b"deflate",
        **{k: v.encode() for k, v in metadata.items()},
    }
    out = [MAGIC, varint(len(meta))]
    for key, value in meta.items():
        out += [varint(len(key.encode())), key.encode(), varint(len(value)), value]
    out.append(varint(0))
    return b"".join(out)


def container(head: bytes, records: bytes, count: int) -> bytes:
    """The whole file: the :func:`header` ``head``, then ``records`` (``count`` records
    encoded one after the other) in one block."""
    sync = os.urandom(16)
    out = [head, sync]
    if count:
        packer = zlib.compressobj(1, zlib.DEFLATED, -15)
        packed = packer.compress(records) + packer.flush()
        out += [varint(count), varint(len(packed)), packed, sync]
    return b"".join(out)
