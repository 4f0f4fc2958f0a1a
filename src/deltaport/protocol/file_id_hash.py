"""The ``fileidhash`` request header: which scheme derives the ``id`` of each file.

A client may ask for file ids in the reference server's schemes: ``parquet`` (the MD5 of
the file's path as written in the Delta log, in hex) or ``delta`` (its SHA-256, in hex).
The value is case-insensitive; the response echoes it in lowercase. Without the header,
ids are deltaport's own (see :mod:`deltaport.server.answers.file_ids`).
"""

from __future__ import annotations

from deltaport.protocol.echo import echo
from deltaport.protocol.errors import InvalidParameterError

HEADER = "fileidhash"
PARQUET = "parquet"
DELTA = "delta"
SCHEMES = (PARQUET, DELTA)


def parse_file_id_hash(value: str | None) -> str | None:
    """The scheme the header asks for (lowercase), None without the header; 400 for a
    value that names no scheme."""
    if value is None:
        return None
    scheme = value.strip().lower()
    if scheme not in SCHEMES:
        raise InvalidParameterError(
            f"unsupported {HEADER} header {echo(value)}: supported values are {', '.join(SCHEMES)}"
        )
    return scheme
