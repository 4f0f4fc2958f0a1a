"""The sharing listener's routes that only a server on a catalog database serves: the OAuth
token endpoint (under the sharing endpoint, in the sharing document) and the activation
routes (at Unity Catalog's public paths, in the listener's root document)."""

from __future__ import annotations

from typing import Any

from deltaport.catalog.recipient_access import ACTIVATION_INFO_PATH, ACTIVATION_PATH
from deltaport.catalog.tokens import TOKEN_ENDPOINT_PATH

_FORM = "application/x-www-form-urlencoded"
_LINK = [{"name": "link", "in": "path", "required": True, "schema": {"type": "string"}}]


def token_paths() -> dict[str, Any]:
    """The OAuth token endpoint, under the sharing endpoint."""
    grant = {
        "type": "object",
        "properties": {
            "grant_type": {"type": "string", "enum": ["client_credentials"]},
            "scope": {"type": "string"},
            "client_id": {"type": "string"},
            "client_secret": {"type": "string"},
        },
        "required": ["grant_type"],
    }
    return {
        TOKEN_ENDPOINT_PATH: {
            "post": {
                "operationId": "oauthToken",
                "summary": "An access token for an OAuth recipient (RFC 6749 4.4, client "
                "credentials by HTTP Basic or in the body)",
                "security": [{"client": []}],
                "requestBody": {"required": True, "content": {_FORM: {"schema": grant}}},
                "responses": {
                    "200": {"description": "{access_token, token_type, expires_in}"},
                    "400": {"description": "invalid_request or unsupported_grant_type"},
                    "401": {"description": "invalid_client"},
                    "403": {"description": "Outside the recipient's IP access list"},
                },
            }
        }
    }


def activation_paths() -> dict[str, Any]:
    """The activation routes, from the listener's root."""
    return {
        f"{ACTIVATION_PATH}/{{link}}": {
            "get": {
                "operationId": "retrieveActivationProfile",
                "summary": "The recipient's profile, once (its first credential is made then)",
                "security": [],
                "parameters": _LINK,
                "responses": {
                    "200": {"description": "The profile"},
                    "403": {"description": "Outside the recipient's IP access list"},
                    "404": {"description": "Unknown, used or expired link"},
                },
            },
        },
        f"{ACTIVATION_INFO_PATH}/{{link}}": {
            "get": {
                "operationId": "getActivationInfo",
                "summary": "Whether the link can still be used (it is not used up)",
                "security": [],
                "parameters": _LINK,
                "responses": {
                    "200": {"description": "{}"},
                    "403": {"description": "Outside the recipient's IP access list"},
                    "404": {"description": "Unknown, used or expired link"},
                },
            },
        },
    }
