"""The catalog routes of the admin OpenAPI document (see :mod:`deltaport.admin.catalog_api`);
they answer only on a server whose shares come from a catalog database."""

from __future__ import annotations

from typing import Any

from deltaport.catalog.limits import (
    MAX_AUXILIARY_LOCATIONS,
    MAX_DURATION_SECONDS,
    MAX_PROPERTIES,
    MAX_PROPERTY_VALUE_LENGTH,
    MAX_TEXT_LENGTH,
    MAX_VERSION,
)
from deltaport.catalog.rows import MAX_DISPLAY_NAME_LENGTH
from deltaport.catalog.tokens import AUTHENTICATION_TYPES

_NOTE = " Only on a server with a catalog database (404 otherwise)."


def _body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _name(where: str) -> dict[str, Any]:
    return {"name": where, "in": "path", "required": True, "schema": {"type": "string"}}


def _operation(op_id: str, summary: str, ok: str, **extra: Any) -> dict[str, Any]:
    responses = {
        ok: {"description": "Done."},
        "400": {"description": "A value is invalid (a name, a location, a filter, access modes)."},
        "401": {"description": "The admin token is missing or wrong."},
        "404": {"description": "The share, table or recipient does not exist."},
        "409": {"description": "The name is taken already (RESOURCE_ALREADY_EXISTS)."},
        "413": {"description": "The body is larger than maxRequestBodyBytes."},
        "503": {"description": "The catalog database cannot be reached (TEMPORARILY_UNAVAILABLE)."},
    }
    return {"operationId": op_id, "summary": summary + "." + _NOTE, "responses": responses, **extra}


_STRING = {"type": "string"}
_TEXT = {"type": "string", "maxLength": MAX_TEXT_LENGTH}
_LIFETIME = {"type": "integer", "minimum": 1, "maximum": MAX_DURATION_SECONDS}
_IP_ACCESS_LIST = {
    "type": "array",
    "items": _STRING,
    "description": "IPv4 and IPv6 addresses and CIDR ranges; at most maxIpAccessListEntries",
}
_PROFILE = "The recipient's profile file, with its token: shown this once."
_PROPERTIES = {
    "type": "object",
    "maxProperties": MAX_PROPERTIES,
    "additionalProperties": {"type": "string", "maxLength": MAX_PROPERTY_VALUE_LENGTH},
}
_SEEN = {
    "comment": _TEXT,
    "displayName": {"type": "string", "maxLength": MAX_DISPLAY_NAME_LENGTH},
    "properties": _PROPERTIES,
}
"""What recipients see of a share or table besides its name (in their listings)."""


def catalog_paths() -> dict[str, Any]:
    share, recipient, table = _name("share"), _name("recipient"), _name("table")
    return {
        "/api/catalog": {"get": _operation("catalog", "Shares, tables, recipients, grants", "200")},
        "/api/shares": {
            "post": _operation(
                "createShare",
                "Create a share",
                "201",
                requestBody=_body({"name": _STRING, **_SEEN}, ["name"]),
            )
        },
        "/api/shares/{share}": {
            "delete": _operation(
                "dropShare", "Drop a share, its tables and grants", "204", parameters=[share]
            )
        },
        "/api/shares/{share}/schemas/{schema}": {
            "patch": _operation(
                "setSchema",
                "Change what recipients see of a schema (absent: kept; null: removed)",
                "200",
                parameters=[share, _name("schema")],
                requestBody=_body(
                    {
                        key: {**value, "type": [value["type"], "null"]}
                        for key, value in _SEEN.items()
                    },
                    [],
                ),
            )
        },
        "/api/shares/{share}/grants": {
            "post": _operation(
                "grantShare",
                "Let a recipient read the share",
                "204",
                parameters=[share],
                requestBody=_body({"recipient": _STRING}, ["recipient"]),
            )
        },
        "/api/shares/{share}/grants/{recipient}": {
            "delete": _operation(
                "revokeShare",
                "Stop a recipient reading the share",
                "204",
                parameters=[share, recipient],
            )
        },
        "/api/tables": {
            "post": _operation(
                "addTable",
                "Share a table (name SHARE.SCHEMA.TABLE)",
                "201",
                requestBody=_body(
                    {
                        "name": _STRING,
                        "location": _TEXT,
                        "historyShared": {"type": "boolean"},
                        "startVersion": {"type": "integer", "minimum": 0, "maximum": MAX_VERSION},
                        "partitionFilter": _TEXT,
                        "accessModes": {
                            "type": "array",
                            "items": {"type": "string", "enum": ["url", "dir"]},
                            "description": "Default [url]; dir needs historyShared, no "
                            "startVersion, no partitionFilter, a cloud location and "
                            "credentials settings in the server's storage configuration.",
                        },
                        "auxiliaryLocations": {
                            "type": "array",
                            "items": _TEXT,
                            "maxItems": MAX_AUXILIARY_LOCATIONS,
                        },
                        **_SEEN,
                    },
                    ["name", "location"],
                ),
            )
        },
        "/api/tables/{table}": {
            "delete": _operation("removeTable", "Stop sharing a table", "204", parameters=[table])
        },
        "/api/recipients": {
            "post": _operation(
                "createRecipient",
                "Create a recipient; the answer holds its profile. " + _PROFILE,
                "201",
                requestBody=_body(
                    {
                        "name": _STRING,
                        "properties": _PROPERTIES,
                        "expiresInSeconds": _LIFETIME,
                        "endpoint": _STRING,
                        "ipAccessList": _IP_ACCESS_LIST,
                        "authenticationType": {
                            "type": "string",
                            "enum": list(AUTHENTICATION_TYPES),
                            "default": "TOKEN",
                            "description": "OAUTH_CLIENT_CREDENTIALS: the profile carries a "
                            "client id and secret for the sharing listener's token endpoint",
                        },
                        "activation": {
                            "type": "boolean",
                            "default": False,
                            "description": "Answer {recipient, activation: {url, token, "
                            "expiresAt}} instead of the profile: a single-use link whose "
                            "first download issues the recipient's first token",
                        },
                    },
                    ["name"],
                ),
            )
        },
        "/api/recipients/{recipient}/rotate": {
            "post": _operation(
                "rotateRecipient",
                "A new token; the old ones end after graceSeconds. Without expiresInSeconds it "
                "lives as long as the recipient's tokens do (null: no expiry); without "
                "endpoint its profile points where the recipient's last one did. " + _PROFILE,
                "200",
                parameters=[recipient],
                requestBody=_body(
                    {
                        "graceSeconds": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": MAX_DURATION_SECONDS,
                            "default": 3600,
                        },
                        "expiresInSeconds": {**_LIFETIME, "type": ["integer", "null"]},
                        "endpoint": _STRING,
                    },
                    [],
                ),
            )
        },
        "/api/recipients/{recipient}/revoke": {
            "post": _operation(
                "revokeRecipient",
                "End every token of the recipient now",
                "204",
                parameters=[recipient],
            )
        },
        "/api/recipients/{recipient}/ip-access-list": {
            "put": _operation(
                "setRecipientIpAccessList",
                "Replace the addresses and CIDR ranges the recipient's requests may come from "
                "(empty: anywhere); the answer holds the list as stored",
                "200",
                parameters=[recipient],
                requestBody=_body({"ipAccessList": _IP_ACCESS_LIST}, ["ipAccessList"]),
            )
        },
    }
