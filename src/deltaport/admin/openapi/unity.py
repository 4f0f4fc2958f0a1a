"""The routes of the provider API in Unity Catalog's shape (see :mod:`deltaport.admin.unity`),
the same operations under OpenSharing's prefix (ids ``os...`` for ``uc...``), and the public
activation routes. Only on a server with a catalog database, except the well-known route.
The request bodies are the Structs of :mod:`deltaport.admin.unity.bodies`."""

from __future__ import annotations

from dataclasses import replace

from deltaport.admin.openapi.common import (
    CATALOG_ONLY,
    NO_TOKEN,
    OPEN,
    UNITY_ERROR,
    catalog_operation,
    path_name,
    query,
)
from deltaport.admin.unity import bodies
from deltaport.admin.unity.errors import OPENSHARING_ACTIVATION, OPENSHARING_PREFIX, PREFIX
from deltaport.catalog.recipient_access import ACTIVATION_INFO_PATH, ACTIVATION_PATH
from deltaport.protocol.openapi import Answer, Operation, Parameter

UC = PREFIX.rstrip("/")
OS = OPENSHARING_PREFIX.rstrip("/")

_ANSWERS = (
    Answer(200, "Done."),
    *(
        Answer(status, text, UNITY_ERROR)
        for status, text in (
            (400, "A field is invalid or not supported; the message names it."),
            (401, NO_TOKEN.description),
            (404, "The share or recipient does not exist."),
            (409, "The name is taken already (RESOURCE_ALREADY_EXISTS)."),
            (413, "The body is larger than maxRequestBodyBytes."),
            (503, "The catalog database cannot be reached (TEMPORARILY_UNAVAILABLE)."),
        )
    ),
)
_PAGING = (
    query(
        "max_results",
        int,
        "Page size; 0 (the SDK's default): the server's (100); at most 1000.",
    ),
    query("page_token", str, "`next_page_token` of the previous page."),
)
_SHARE = path_name("share")
_RECIPIENT = path_name("recipient")


def _op(
    method: str,
    path: str,
    op_id: str,
    summary: str,
    parameters: tuple[Parameter, ...] = (),
    body: type | None = None,
) -> Operation:
    return catalog_operation(method, UC + path, op_id, summary, _ANSWERS, parameters, body)


_UNITY = (
    _op("post", "/shares", "ucCreateShare", "Create a share", body=bodies.CreateShare),
    _op("get", "/shares", "ucListShares", "Shares, a page", _PAGING),
    _op(
        "get",
        "/shares/{share}",
        "ucGetShare",
        "A share and (unless include_shared_data=false) its tables",
        (_SHARE, query("include_shared_data", bool)),
    ),
    _op(
        "patch",
        "/shares/{share}",
        "ucUpdateShare",
        "Change the comment and add, remove or update tables, all or nothing",
        (_SHARE,),
        bodies.UpdateShare,
    ),
    _op("delete", "/shares/{share}", "ucDeleteShare", "Drop a share", (_SHARE,)),
    _op(
        "get",
        "/shares/{share}/permissions",
        "ucSharePermissions",
        "The recipients granted the share (SELECT)",
        (_SHARE, *_PAGING),
    ),
    _op(
        "patch",
        "/shares/{share}/permissions",
        "ucUpdateSharePermissions",
        "Grant (add SELECT) or revoke (remove SELECT), all or nothing",
        (_SHARE,),
        bodies.UpdatePermissions,
    ),
    _op(
        "post",
        "/recipients",
        "ucCreateRecipient",
        "Create a recipient; the answer's `activation_url` (shown this once) hands over its "
        "credential",
        body=bodies.CreateRecipient,
    ),
    _op("get", "/recipients", "ucListRecipients", "Recipients, a page", _PAGING),
    _op("get", "/recipients/{recipient}", "ucGetRecipient", "A recipient", (_RECIPIENT,)),
    _op(
        "patch",
        "/recipients/{recipient}",
        "ucUpdateRecipient",
        "Replace its properties or IP access list, change its comment",
        (_RECIPIENT,),
        bodies.UpdateRecipient,
    ),
    _op(
        "delete", "/recipients/{recipient}", "ucDeleteRecipient", "Drop a recipient", (_RECIPIENT,)
    ),
    _op(
        "post",
        "/recipients/{recipient}/rotate-token",
        "ucRotateRecipientToken",
        "A new credential (by the answer's `activation_url`, shown this once); the old ones "
        "end after existing_token_expire_in_seconds (0: now)",
        (_RECIPIENT,),
        bodies.RotateToken,
    ),
    _op(
        "get",
        "/recipients/{recipient}/share-permissions",
        "ucRecipientSharePermissions",
        "The shares granted to the recipient",
        (_RECIPIENT, *_PAGING),
    ),
)
_OPENSHARING = tuple(
    replace(op, path=OS + op.path.removeprefix(UC), operation_id="os" + op.operation_id[2:])
    for op in _UNITY
)


def _activation(path: str, op_id: str, summary: str) -> Operation:
    return Operation(
        "get",
        path + "/{link}",
        op_id,
        summary + " No token: the link is the credential." + CATALOG_ONLY,
        (
            Answer(200, "Done (Cache-Control: no-store)."),
            Answer(403, "Outside the recipient's IP access list.", UNITY_ERROR),
            Answer(404, "The link is unknown, used or expired.", UNITY_ERROR),
            Answer(503, "The catalog database cannot be reached.", UNITY_ERROR),
        ),
        (path_name("link"),),
        security=OPEN,
    )


_DOWNLOAD = "The recipient's profile, once: the first download issues its credential."
_ACTIVATION = (
    _activation(ACTIVATION_PATH, "ucRetrieveActivation", _DOWNLOAD),
    _activation(
        ACTIVATION_INFO_PATH,
        "ucActivationInfo",
        "{} while the link can be used (it is not used up).",
    ),
    _activation(OPENSHARING_ACTIVATION, "osRetrieveActivation", _DOWNLOAD),
)
DATABRICKS_CONFIG = Operation(
    "get",
    "/.well-known/databricks-config",
    "databricksConfig",
    "Asked first by the Databricks SDK: always 404 (no host metadata)",
    (Answer(404, "RESOURCE_DOES_NOT_EXIST.", UNITY_ERROR),),
    security=OPEN,
)
UNITY_OPERATIONS = (*_UNITY, *_OPENSHARING, *_ACTIVATION)
"""Served only on a server with a catalog database."""
