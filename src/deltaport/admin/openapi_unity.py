"""The routes of the provider API in Unity Catalog's shape in the admin OpenAPI document
(see :mod:`deltaport.admin.unity`); a test keeps them equal to the routes and the bodies
the API reads. Only on a server with a catalog database, except the well-known route."""

from __future__ import annotations

from typing import Any

from deltaport.admin.unity.errors import OPENSHARING_ACTIVATION, OPENSHARING_PREFIX, PREFIX
from deltaport.catalog.limits import MAX_DURATION_SECONDS, MAX_PROPERTIES, MAX_TEXT_LENGTH
from deltaport.catalog.recipient_access import ACTIVATION_INFO_PATH, ACTIVATION_PATH
from deltaport.catalog.tokens import AUTHENTICATION_TYPES

UC = PREFIX.rstrip("/")
_NOTE = " Only on a server with a catalog database (404 otherwise)."

_STRING = {"type": "string"}
_TEXT = {"type": "string", "maxLength": MAX_TEXT_LENGTH}
_PROPERTIES = {
    "type": "object",
    "properties": {
        "properties": {
            "description": "A map, or a list of {key, value} (the legacy Databricks CLI's).",
            "oneOf": [
                {
                    "type": "object",
                    "maxProperties": MAX_PROPERTIES,
                    "additionalProperties": _STRING,
                },
                {
                    "type": "array",
                    "maxItems": MAX_PROPERTIES,
                    "items": {
                        "type": "object",
                        "required": ["key", "value"],
                        "properties": {"key": _STRING, "value": _STRING},
                    },
                },
            ],
        }
    },
}
_IP_ACCESS_LIST = {
    "type": "object",
    "description": "Where the recipient's requests may come from (addresses and CIDR "
    "ranges, IPv4 and IPv6, at most maxIpAccessListEntries); empty or {}: anywhere.",
    "properties": {"allowed_ip_addresses": {"type": "array", "items": _STRING}},
}
_PAGING = [
    {
        "name": "max_results",
        "in": "query",
        "required": False,
        "description": "Page size; 0 (the SDK's default): the server's (100); at most 1000.",
        "schema": {"type": "integer", "minimum": 0},
    },
    {
        "name": "page_token",
        "in": "query",
        "required": False,
        "description": "`next_page_token` of the previous page.",
        "schema": _STRING,
    },
]
_DATA_OBJECT = {
    "type": "object",
    "required": ["name"],
    "description": "A table: `name` is its location, `shared_as` (schema.table) its name "
    "in the share. Any other field of Unity Catalog's is refused with a 400 naming it.",
    "properties": {
        "name": _TEXT,
        "data_object_type": {"enum": ["TABLE"]},
        "shared_as": {"type": "string", "pattern": "^[A-Za-z0-9_]+\\.[A-Za-z0-9_]+$"},
        "history_data_sharing_status": {"enum": ["ENABLED", "DISABLED"]},
        "start_version": {"type": "integer", "minimum": 0},
        "partitions": {
            "type": "array",
            "description": "The partition filter: values AND-ed, partitions OR-ed.",
            "items": {
                "type": "object",
                "properties": {
                    "values": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": _STRING,
                                "op": {"enum": ["EQUAL"]},
                                "value": _STRING,
                                "recipient_property_key": _STRING,
                            },
                        },
                    }
                },
            },
        },
        "comment": _TEXT,
    },
}


def _body(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def _name(where: str) -> dict[str, Any]:
    return {"name": where, "in": "path", "required": True, "schema": _STRING}


def _operation(op_id: str, summary: str, **extra: Any) -> dict[str, Any]:
    error = {"$ref": "#/components/schemas/UnityError"}
    responses: dict[str, Any] = {"200": {"description": "Done."}}
    for status, text in (
        ("400", "A field is invalid or not supported; the message names it."),
        ("401", "The admin token is missing or wrong."),
        ("404", "The share or recipient does not exist."),
        ("409", "The name is taken already (RESOURCE_ALREADY_EXISTS)."),
        ("413", "The body is larger than maxRequestBodyBytes."),
        ("503", "The catalog database cannot be reached (TEMPORARILY_UNAVAILABLE)."),
    ):
        responses[status] = {
            "description": text,
            "content": {"application/json": {"schema": error}},
        }
    return {"operationId": op_id, "summary": summary + "." + _NOTE, "responses": responses, **extra}


UNITY_ERROR = {
    "type": "object",
    "required": ["error_code", "message"],
    "properties": {"error_code": _STRING, "message": _STRING},
}


def _uc_paths() -> dict[str, Any]:
    share, recipient = _name("share"), _name("recipient")
    return {
        "/.well-known/databricks-config": {
            "get": {
                "operationId": "databricksConfig",
                "summary": "Asked first by the Databricks SDK: always 404 (no host metadata)",
                "security": [],
                "responses": {"404": {"description": "RESOURCE_DOES_NOT_EXIST."}},
            }
        },
        f"{UC}/shares": {
            "post": _operation(
                "ucCreateShare",
                "Create a share",
                requestBody=_body({"name": _STRING, "comment": _TEXT}, ["name"]),
            ),
            "get": _operation("ucListShares", "Shares, a page", parameters=_PAGING),
        },
        f"{UC}/shares/{{share}}": {
            "get": _operation(
                "ucGetShare",
                "A share and (unless include_shared_data=false) its tables",
                parameters=[
                    share,
                    {
                        "name": "include_shared_data",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "boolean", "default": True},
                    },
                ],
            ),
            "patch": _operation(
                "ucUpdateShare",
                "Change the comment and add, remove or update tables, all or nothing",
                parameters=[share],
                requestBody=_body(
                    {
                        "comment": _TEXT,
                        "updates": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["action", "data_object"],
                                "properties": {
                                    "action": {"enum": ["ADD", "REMOVE", "UPDATE"]},
                                    "data_object": _DATA_OBJECT,
                                },
                            },
                        },
                    },
                    [],
                ),
            ),
            "delete": _operation("ucDeleteShare", "Drop a share", parameters=[share]),
        },
        f"{UC}/shares/{{share}}/permissions": {
            "get": _operation(
                "ucSharePermissions",
                "The recipients granted the share (SELECT)",
                parameters=[share, *_PAGING],
            ),
            "patch": _operation(
                "ucUpdateSharePermissions",
                "Grant (add SELECT) or revoke (remove SELECT), all or nothing",
                parameters=[share],
                requestBody=_body(
                    {
                        "changes": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["principal"],
                                "properties": {
                                    "principal": _STRING,
                                    "add": {"type": "array", "items": {"enum": ["SELECT"]}},
                                    "remove": {"type": "array", "items": {"enum": ["SELECT"]}},
                                },
                            },
                        },
                        "omit_permissions_list": {"type": "boolean"},
                    },
                    [],
                ),
            ),
        },
        f"{UC}/recipients": {
            "post": _operation(
                "ucCreateRecipient",
                "Create a recipient; the answer's `activation_url` (shown this once) "
                "hands over its credential",
                requestBody=_body(
                    {
                        "name": _STRING,
                        "authentication_type": {"enum": list(AUTHENTICATION_TYPES)},
                        "comment": _TEXT,
                        "properties_kvpairs": _PROPERTIES,
                        "ip_access_list": _IP_ACCESS_LIST,
                        "expiration_time": {
                            "type": "integer",
                            "description": "When its tokens end, ms since the epoch: sets "
                            f"their lifetime (at most {MAX_DURATION_SECONDS} s).",
                        },
                    },
                    ["name", "authentication_type"],
                ),
            ),
            "get": _operation("ucListRecipients", "Recipients, a page", parameters=_PAGING),
        },
        f"{UC}/recipients/{{recipient}}": {
            "get": _operation("ucGetRecipient", "A recipient", parameters=[recipient]),
            "patch": _operation(
                "ucUpdateRecipient",
                "Replace its properties or IP access list, change its comment",
                parameters=[recipient],
                requestBody=_body(
                    {
                        "comment": _TEXT,
                        "properties_kvpairs": _PROPERTIES,
                        "ip_access_list": _IP_ACCESS_LIST,
                    },
                    [],
                ),
            ),
            "delete": _operation("ucDeleteRecipient", "Drop a recipient", parameters=[recipient]),
        },
        f"{UC}/recipients/{{recipient}}/rotate-token": {
            "post": _operation(
                "ucRotateRecipientToken",
                "A new credential (by the answer's `activation_url`, shown this once); the "
                "old ones end after existing_token_expire_in_seconds (0: now)",
                parameters=[recipient],
                requestBody=_body(
                    {
                        "existing_token_expire_in_seconds": {
                            "type": "integer",
                            "minimum": 0,
                            "maximum": MAX_DURATION_SECONDS,
                        },
                        "name": {
                            "type": "string",
                            "description": "The path's recipient again (optional).",
                        },
                    },
                    ["existing_token_expire_in_seconds"],
                ),
            )
        },
        f"{UC}/recipients/{{recipient}}/share-permissions": {
            "get": _operation(
                "ucRecipientSharePermissions",
                "The shares granted to the recipient",
                parameters=[recipient, *_PAGING],
            )
        },
    }


def _activation(op_id: str, summary: str) -> dict[str, Any]:
    link = {"name": "link", "in": "path", "required": True, "schema": _STRING}
    error = {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UnityError"}}}
    }
    return {
        "get": {
            "operationId": op_id,
            "summary": summary + " No token: the link is the credential." + _NOTE,
            "security": [],
            "parameters": [link],
            "responses": {
                "200": {"description": "Done (Cache-Control: no-store)."},
                "403": {"description": "Outside the recipient's IP access list.", **error},
                "404": {"description": "The link is unknown, used or expired.", **error},
                "503": {"description": "The catalog database cannot be reached.", **error},
            },
        }
    }


def unity_paths() -> dict[str, Any]:
    """Unity Catalog's routes, the public activation routes, and OpenSharing's aliases of
    the same resources (operation ids ``os...`` for ``uc...``)."""
    paths = _uc_paths()
    for path, item in list(paths.items()):
        if path.startswith(PREFIX):
            paths[OPENSHARING_PREFIX + path.removeprefix(PREFIX)] = {
                method: {**operation, "operationId": "os" + operation["operationId"][2:]}
                for method, operation in item.items()
            }
    download = "The recipient's profile, once: the first download issues its credential."
    paths[ACTIVATION_PATH + "/{link}"] = _activation("ucRetrieveActivation", download)
    paths[ACTIVATION_INFO_PATH + "/{link}"] = _activation(
        "ucActivationInfo", "{} while the link can be used (it is not used up)."
    )
    paths[OPENSHARING_ACTIVATION + "/{link}"] = _activation("osRetrieveActivation", download)
    return paths
