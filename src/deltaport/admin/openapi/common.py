"""What the admin listener's operations share: parameters, the error answers of both
shapes, and the note on routes that need a catalog database."""

from __future__ import annotations

from typing import Any

from deltaport.admin.unity.errors import UnityErrorBody
from deltaport.protocol.errors import ErrorBody
from deltaport.protocol.openapi import Answer, Content, Operation, Parameter, RequestBody

JSON = "application/json"
ERROR = Content(JSON, ErrorBody)
UNITY_ERROR = Content(JSON, UnityErrorBody)
CATALOG_ONLY = " Only on a server with a catalog database (404 otherwise)."
NO_TOKEN = Answer(401, "The admin token is missing or wrong.")
OPEN: list[dict[str, list[str]]] = []
"""The security of a route that takes no token."""


def query(
    name: str, schema: Any, description: str | None = None, required: bool = False
) -> Parameter:
    return Parameter(name, "query", schema, description, required)


def path_name(name: str) -> Parameter:
    return Parameter(name, "path", str)


def catalog_operation(
    method: str,
    path: str,
    op_id: str,
    summary: str,
    answers: tuple[Answer, ...],
    parameters: tuple[Parameter, ...] = (),
    body: type | None = None,
) -> Operation:
    """An operation served only with a catalog database, taking ``body`` as JSON if any."""
    request = RequestBody(Content(JSON, body), required=True) if body is not None else None
    return Operation(
        method, path, op_id, summary + "." + CATALOG_ONLY, answers, parameters, request
    )
