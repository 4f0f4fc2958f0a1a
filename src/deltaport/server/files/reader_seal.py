"""Local file URLs bound to the recipient they were handed to.

On a server with a catalog database, each local file URL carries ``rcp=NAME.MAC``: the
recipient's name and a MAC over the table, the name and the URL's expiry under the server's
key. The file endpoint answers such a URL only while that recipient may still read the
table (it exists, holds a live token, and the share is granted to it), so a revoked grant
or token ends its URLs too, within the catalog's poll interval, and not only its next
query. The URL's own signature does not cover the parameter; the MAC does, so a URL
cannot be moved to another recipient's name. Cloud stores' pre-signed URLs cannot carry
this check and stay valid until they expire.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from urllib.parse import quote, unquote

from deltaport.storage.local_urls import EXPIRY_PARAM

PARAM = "rcp"


class ReaderSeal:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def suffix(self, table_key: str, reader: str, expires_at: int) -> str:
        """What follows a URL's signature: ``&rcp=NAME.MAC`` (URL- and JSON-safe)."""
        return f"&{PARAM}={quote(reader, safe='')}.{self._mac(table_key, reader, str(expires_at))}"

    def reader(self, table_key: str, query: Mapping[str, str]) -> str | None:
        """The recipient a URL was handed to, None when it names none or its MAC fails."""
        value = query.get(PARAM)
        if not value:
            return None
        name, _, mac = value.rpartition(".")
        reader = unquote(name)
        expected = self._mac(table_key, reader, query.get(EXPIRY_PARAM, ""))
        return reader if name and hmac.compare_digest(mac, expected) else None

    def _mac(self, table_key: str, reader: str, expiry: str) -> str:
        message = f"{table_key}\0{reader}\0{expiry}".encode()
        return hmac.digest(self._key, message, "sha256")[:16].hex()
