"""The catalog routes (see :mod:`deltaport.admin.catalog_api`); they answer only on a
server whose shares come from a catalog database. The request bodies are the Structs the
handlers decode."""

from __future__ import annotations

from deltaport.admin.openapi import catalog_bodies as bodies
from deltaport.admin.openapi.common import (
    ERROR,
    NO_TOKEN,
    catalog_operation,
    path_name,
)
from deltaport.protocol.openapi import Answer, Operation, Parameter

_ERRORS = tuple(
    Answer(status, text, ERROR)
    for status, text in (
        (400, "A value is invalid (a name, a location, a filter, access modes)."),
        (401, NO_TOKEN.description),
        (404, "The share, table or recipient does not exist."),
        (409, "The name is taken already (RESOURCE_ALREADY_EXISTS)."),
        (413, "The body is larger than maxRequestBodyBytes."),
        (503, "The catalog database cannot be reached (TEMPORARILY_UNAVAILABLE)."),
    )
)
_PROFILE = "The recipient's profile file, with its token: shown this once."
_SHARE = path_name("share")
_RECIPIENT = path_name("recipient")


def _op(
    method: str,
    path: str,
    op_id: str,
    summary: str,
    ok: int,
    parameters: tuple[Parameter, ...] = (),
    body: type | None = None,
) -> Operation:
    answers = (Answer(ok, "Done."), *_ERRORS)
    return catalog_operation(method, path, op_id, summary, answers, parameters, body)


CATALOG_OPERATIONS = (
    _op("get", "/api/catalog", "catalog", "Shares, tables, recipients, grants", 200),
    _op("post", "/api/shares", "createShare", "Create a share", 201, body=bodies.NewShare),
    _op(
        "delete",
        "/api/shares/{share}",
        "dropShare",
        "Drop a share, its tables and grants",
        204,
        (_SHARE,),
    ),
    _op(
        "patch",
        "/api/shares/{share}/schemas/{schema}",
        "setSchema",
        "Change what recipients see of a schema (absent: kept; null: removed)",
        200,
        (_SHARE, path_name("schema")),
        bodies.SchemaChange,
    ),
    _op(
        "post",
        "/api/shares/{share}/grants",
        "grantShare",
        "Let a recipient read the share",
        204,
        (_SHARE,),
        bodies.NewGrant,
    ),
    _op(
        "delete",
        "/api/shares/{share}/grants/{recipient}",
        "revokeShare",
        "Stop a recipient reading the share",
        204,
        (_SHARE, _RECIPIENT),
    ),
    _op(
        "post",
        "/api/tables",
        "addTable",
        "Share a table (name SHARE.SCHEMA.TABLE)",
        201,
        body=bodies.NewTable,
    ),
    _op(
        "delete",
        "/api/tables/{table}",
        "removeTable",
        "Stop sharing a table",
        204,
        (path_name("table"),),
    ),
    _op(
        "post",
        "/api/recipients",
        "createRecipient",
        "Create a recipient; the answer holds its profile. " + _PROFILE,
        201,
        body=bodies.NewRecipient,
    ),
    _op(
        "post",
        "/api/recipients/{recipient}/rotate",
        "rotateRecipient",
        "A new token; the old ones end after graceSeconds. Without expiresInSeconds it lives "
        "as long as the recipient's tokens do (null: no expiry); without endpoint its profile "
        "points where the recipient's last one did. " + _PROFILE,
        200,
        (_RECIPIENT,),
        bodies.Rotation,
    ),
    _op(
        "post",
        "/api/recipients/{recipient}/revoke",
        "revokeRecipient",
        "End every token of the recipient now",
        204,
        (_RECIPIENT,),
    ),
    _op(
        "put",
        "/api/recipients/{recipient}/ip-access-list",
        "setRecipientIpAccessList",
        "Replace the addresses and CIDR ranges the recipient's requests may come from "
        "(empty: anywhere); the answer holds the list as stored",
        200,
        (_RECIPIENT,),
        bodies.IpAccessListChange,
    ),
)
