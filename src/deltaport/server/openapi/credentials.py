"""The OpenAPI parts of directory access: the temporary table credentials operation, its
schemas, and the access fields of tables (kept apart from the main document)."""

from __future__ import annotations

from typing import Any

_STR = {"type": "string"}
_STRINGS = {"type": "array", "items": _STR}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


ACCESS_PROPERTIES: dict[str, Any] = {
    "location": {**_STR, "description": "The table's root directory (cloud tables)."},
    "auxiliaryLocations": {**_STRINGS, "description": "Other directories holding its files."},
    "accessModes": {
        "type": "array",
        "items": {"type": "string", "enum": ["url", "dir"]},
        "description": "url: /query signs each file; dir: temporary-table-credentials.",
    },
}

SCHEMAS: dict[str, Any] = {
    "TemporaryCredentialsRequest": {
        "type": "object",
        "properties": {
            "location": {
                **_STR,
                "description": "The table's location (default) or one of its auxiliaryLocations.",
            }
        },
    },
    "TemporaryCredentials": {
        "type": "object",
        "required": ["credentials"],
        "properties": {
            "credentials": {
                "type": "object",
                "required": ["location", "expirationTime"],
                "description": "Exactly one of awsTempCredentials, azureUserDelegationSas, "
                "gcpOauthToken; read-only, limited to location.",
                "properties": {
                    "location": _STR,
                    "expirationTime": {"type": "integer", "format": "int64"},
                    "awsTempCredentials": {
                        "type": "object",
                        "required": ["accessKeyId", "secretAccessKey", "sessionToken"],
                        "properties": {
                            "accessKeyId": _STR,
                            "secretAccessKey": _STR,
                            "sessionToken": _STR,
                        },
                    },
                    "azureUserDelegationSas": {
                        "type": "object",
                        "required": ["sasToken"],
                        "properties": {"sasToken": _STR},
                    },
                    "gcpOauthToken": {
                        "type": "object",
                        "required": ["oauthToken"],
                        "properties": {"oauthToken": _STR},
                    },
                    "endpoint": {
                        **_STR,
                        "description": "deltaport: the S3-compatible endpoint to read with "
                        "(absent for AWS itself).",
                    },
                    "region": {**_STR, "description": "deltaport: the S3 bucket's region."},
                },
            }
        },
    },
}


def credentials_operation(parameters: list[dict[str, Any]], ok: dict[str, Any]) -> dict[str, Any]:
    """``POST .../temporary-table-credentials`` (``ok``: the responses of a JSON answer)."""
    return {
        "post": {
            "operationId": "generateTemporaryTableCredential",
            "summary": "Read-only credentials for a table directory (tables offering dir)",
            "parameters": parameters,
            "requestBody": {
                "required": False,
                "content": {"application/json": {"schema": _ref("TemporaryCredentialsRequest")}},
            },
            "responses": ok,
        }
    }
