"""A recipient's profile for a credential just issued, as the admin API, the console, the
commands and the activation links hand it over (the only time its secret is known)."""

from __future__ import annotations

from datetime import UTC, datetime

from deltaport.catalog.rows import IssuedToken
from deltaport.catalog.tokens import TOKEN_ENDPOINT_PATH


def profile_document(
    issued: IssuedToken, endpoint: str, iceberg_endpoint: str | None = None
) -> dict[str, object]:
    """A recipient's profile for a credential just issued: ``shareCredentialsVersion`` 1
    with a bearer token, or 2 of type ``oauth_client_credentials`` for an OAuth client
    (whose token endpoint is under the sharing endpoint). ``iceberg_endpoint``: where the
    server's Iceberg catalog is, for a bearer token (an Iceberg reader signs in with it)."""
    if issued.client_id is not None:
        return {
            "shareCredentialsVersion": 2,
            "type": "oauth_client_credentials",
            "endpoint": endpoint,
            "tokenEndpoint": endpoint.rstrip("/") + TOKEN_ENDPOINT_PATH,
            "clientId": issued.client_id,
            "clientSecret": issued.token,
        }
    profile: dict[str, object] = {
        "shareCredentialsVersion": 1,
        "endpoint": endpoint,
        "bearerToken": issued.token,
    }
    if iceberg_endpoint is not None:
        profile["icebergEndpoint"] = iceberg_endpoint
    if issued.expires_at is not None:
        profile["expirationTime"] = _iso_utc(issued.expires_at)
    return profile


def _iso_utc(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
