"""File ids: the ``id`` of each file in query and change answers.

The protocol asks that a file keep its id across requests. An id here is the AES-CMAC of
the path as written in the log, under a fixed public key, in hex: the same on every server,
replica and restart, and different for different paths (two paths share an id only when
made to on purpose, as with any 128-bit fingerprint that is not secret). It replaced the
reference server's MD5 of the path because :func:`~deltaport.storage.cmac.cmacs` computes
the ids of a whole snapshot at once, outside the GIL, while MD5 takes one call per file.

A client that sends the ``fileidhash`` header (:mod:`deltaport.protocol.file_id_hash`)
gets the reference server's schemes instead: the MD5 (``parquet``) or SHA-256 (``delta``)
of the same path, in hex.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa

from deltaport.protocol.file_id_hash import DELTA, PARQUET
from deltaport.storage.cmac import CmacMessages, cmac, cmacs, hex_strings

FILE_ID_KEY = hashlib.sha256(b"deltaport file id").digest()[:16]

_DIGESTS = {PARQUET: hashlib.md5, DELTA: hashlib.sha256}


def file_id(path: str) -> str:
    """The id of the file at ``path`` (as written in the log)."""
    return cmac(FILE_ID_KEY, path.encode()).hex()


def file_ids(paths: pa.Array | CmacMessages) -> pa.StringArray:
    """:func:`file_id` of each of ``paths`` (or of the paths laid out for CMAC already),
    computed together."""
    return hex_strings(cmacs(FILE_ID_KEY, paths))


def hashed_file_ids(paths: pa.Array, scheme: str | None) -> pa.StringArray:
    """The ids of ``paths`` in the ``fileidhash`` ``scheme`` (None: :func:`file_ids`)."""
    if scheme is None:
        return file_ids(paths)
    digest = _DIGESTS[scheme]
    ids = [
        None if path is None else digest(path.encode(), usedforsecurity=False).hexdigest()
        for path in paths.to_pylist()
    ]
    return pa.array(ids, pa.string())
