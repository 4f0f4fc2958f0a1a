"""The server's signing key (``signingKey``, else one made for this process) and the keys
derived from it for each purpose (page tokens, file URLs, query ids, ...)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os

from deltaport.config.model import ServerConfig

log = logging.getLogger(__name__)


def server_key(config: ServerConfig) -> bytes:
    if config.signing_key:
        return hashlib.sha256(config.signing_key.encode()).digest()
    log.warning(
        "signingKey is not set: page tokens, refresh tokens, local file URLs and OAuth access "
        "tokens are only "
        "valid on this server process until it restarts; set signingKey (the same on every "
        "replica) to make them work across replicas and restarts"
    )
    return os.urandom(32)


def derive_key(key: bytes, purpose: str) -> bytes:
    return hmac.digest(key, purpose.encode(), "sha256")
