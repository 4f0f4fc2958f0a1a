"""Bearer-token authentication.

Tokens are compared with :func:`hmac.compare_digest` against every configured token, so
the time taken does not reveal which or how much of a token matched.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from deltaport.catalog.model import Recipient
from deltaport.catalog.tokens import presented_token
from deltaport.protocol.errors import UnauthenticatedError

ANONYMOUS = Recipient("anonymous")


class BearerAuth:
    """Maps ``Authorization: Bearer <token>`` to a recipient; no tokens: an open server."""

    def __init__(self, tokens: Mapping[str, Recipient]) -> None:
        self._tokens = [(token.encode(), recipient) for token, recipient in tokens.items()]

    @property
    def open(self) -> bool:
        return not self._tokens

    def authenticate(self, authorization: str | None) -> Recipient:
        if not self._tokens:
            return ANONYMOUS
        given = presented_token(authorization).encode()
        found = None
        for expected, recipient in self._tokens:
            if hmac.compare_digest(given, expected):
                found = recipient
        if found is None:
            raise UnauthenticatedError("the bearer token is not valid")
        return found
