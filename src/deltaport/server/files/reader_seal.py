"""Local file URLs bound to the recipient and the token they were handed to.

On a server with a catalog database, each local file URL carries ``rcp=NAME.CREDENTIAL.MAC``:
the recipient's name, the credential id of the bearer token the query came with (see
:func:`deltaport.catalog.tokens.credential_id`) and a MAC over the table, both names and the
URL's expiry under the server's key. The file endpoint answers such a URL only while that
recipient may still read the table with that token (the token is live and the share is
granted), so a revoked grant or token ends its URLs too, within the catalog's poll
interval, and not only its next query; a new token given to the recipient afterwards
(a rotation, a re-issue) does not bring them back. The URL's own signature does not cover
the parameter; the MAC does, so a URL cannot be moved to another recipient or token.
Cloud stores' pre-signed URLs cannot carry this check and stay valid until they expire.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import quote, unquote

from deltaport.storage.local_urls import EXPIRY_PARAM

PARAM = "rcp"


class Reader(NamedTuple):
    """Who a URL was handed to: a recipient's name and its token's credential id."""

    name: str
    credential: str


class ReaderSeal:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def suffix(self, table_key: str, reader: Reader, expires_at: int) -> str:
        """What follows a URL's signature: ``&rcp=NAME.CREDENTIAL.MAC`` (URL- and
        JSON-safe: the credential id is hex)."""
        mac = self._mac(table_key, reader, str(expires_at))
        return f"&{PARAM}={quote(reader.name, safe='')}.{reader.credential}.{mac}"

    def reader(self, table_key: str, query: Mapping[str, str]) -> Reader | None:
        """Who a URL was handed to, None when it names no one or its MAC fails."""
        value = query.get(PARAM)
        if not value:
            return None
        rest, _, mac = value.rpartition(".")
        name, _, credential = rest.rpartition(".")
        reader = Reader(unquote(name), credential)
        expected = self._mac(table_key, reader, query.get(EXPIRY_PARAM, ""))
        return reader if name and hmac.compare_digest(mac, expected) else None

    def _mac(self, table_key: str, reader: Reader, expiry: str) -> str:
        message = f"{table_key}\0{reader.name}\0{reader.credential}\0{expiry}".encode()
        return hmac.digest(self._key, message, "sha256")[:16].hex()
