"""Delta deletion vectors as Iceberg deletion vectors: each bucket's vectors in one Puffin
file, one ``deletion-vector-v1`` blob per data file.

The two formats hold the same 64-bit Roaring bitmap of row positions; the vector is
decoded (checking Delta's size and checksum) and written again in Iceberg's framing (length,
magic, vector, CRC-32), so that a vector Delta would refuse is never served.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass

import pyroaring

from deltaport.delta.model import DeletionVector
from deltaport.read.deletion_vectors import load_deletion_vector
from deltaport.storage import Storage

PUFFIN_MAGIC = b"PFA1"
_DV_MAGIC = bytes.fromhex("D1D33964")
POSITION_FIELD_ID = 2147483645
"""The id of the ``_pos`` metadata column, which a deletion vector's positions are of."""


@dataclass(frozen=True)
class PuffinBlob:
    """Where one data file's vector lies in a Puffin file."""

    referenced_data_file: str
    offset: int
    length: int
    cardinality: int


def vector_blob(dv: DeletionVector, storage: Storage) -> tuple[bytes, int]:
    """The ``deletion-vector-v1`` blob of ``dv`` and how many rows it deletes."""
    rows = load_deletion_vector(dv, storage)
    bitmap = pyroaring.BitMap64(rows.tolist())
    body = _DV_MAGIC + bitmap.serialize()
    blob = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    return blob, len(rows)


def puffin_file(vectors: list[tuple[str, bytes, int]]) -> tuple[bytes, list[PuffinBlob]]:
    """``vectors`` (referenced data file, blob, cardinality) as one Puffin file's bytes, and
    where each blob lies in it."""
    out = bytearray(PUFFIN_MAGIC)
    placed: list[PuffinBlob] = []
    blobs_json = []
    for data_file, blob, cardinality in vectors:
        placed.append(PuffinBlob(data_file, len(out), len(blob), cardinality))
        blobs_json.append(
            {
                "type": "deletion-vector-v1",
                "fields": [POSITION_FIELD_ID],
                "snapshot-id": -1,
                "sequence-number": -1,
                "offset": len(out),
                "length": len(blob),
                "properties": {
                    "referenced-data-file": data_file,
                    "cardinality": str(cardinality),
                },
            }
        )
        out += blob
    footer = json.dumps({"blobs": blobs_json, "properties": {"created-by": "deltaport"}})
    payload = footer.encode()
    out += PUFFIN_MAGIC + payload + struct.pack("<i", len(payload)) + bytes(4) + PUFFIN_MAGIC
    return bytes(out), placed
