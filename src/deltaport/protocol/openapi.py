"""OpenAPI 3.1 documents generated from a route table and the wire structs.

An API declares each route once as an :class:`Operation`: its method and path, its
parameters, its request body and its answers, the bodies named by the msgspec Structs (or
other types) the handlers decode and encode. :func:`openapi_document` turns a table of
them into the document, with the bodies' JSON Schemas from
``msgspec.json.schema_components``, so a body cannot change without its document. The
listeners build their routes from the same operations.

It lives in ``protocol`` because it is part of the wire contract and does no I/O: it knows
no HTTP framework and reads nothing, so the sharing listener, the admin listener and the
Iceberg catalog (each above ``protocol``) can all generate their documents with it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

Security = Sequence[Mapping[str, Sequence[str]]]
"""OpenAPI security requirements: ``[{"bearer": []}]``; ``[]`` for an open route."""

_REF = "#/components/schemas/"


@dataclass(frozen=True)
class Parameter:
    """A path, query or header parameter; ``schema`` is the type its value has (an
    ``Annotated`` type carries constraints such as ``maxLength``)."""

    name: str
    location: Literal["path", "query", "header"]
    schema: Any
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class Content:
    """A body of one media type; ``body`` is its type, or None for any content."""

    media_type: str
    body: Any = None


@dataclass(frozen=True)
class Header:
    name: str
    schema: Any
    description: str | None = None


@dataclass(frozen=True)
class Answer:
    """A response of one status."""

    status: int
    description: str
    content: Content | None = None
    headers: tuple[Header, ...] = ()


@dataclass(frozen=True)
class RequestBody:
    content: Content
    required: bool = False


@dataclass(frozen=True)
class Operation:
    """One route: ``path`` relative to the document's server, with ``{name}`` for each path
    parameter. ``security`` None: the document's default."""

    method: str
    path: str
    operation_id: str
    summary: str
    answers: tuple[Answer, ...]
    parameters: tuple[Parameter, ...] = ()
    body: RequestBody | None = None
    security: Security | None = None

    def path_names(self) -> set[str]:
        return {part[1:-1] for part in self.path.split("/") if part.startswith("{")}


@dataclass(frozen=True)
class Api:
    """What a document says beside its operations. ``schema_names`` gives a component the
    name the API has published it under, where it differs from its struct's name."""

    title: str
    version: str = "1"
    description: str | None = None
    security: Security = ()
    security_schemes: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    schema_names: Mapping[type, str] = field(default_factory=dict)


def openapi_document(api: Api, server: str, operations: Sequence[Operation]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``operations``, served under ``server``; ValueError when
    two operations share a method and path, or a path's parameters are not declared."""
    types = _Types()
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        item = paths.setdefault(operation.path, {})
        if operation.method in item:
            raise ValueError(f"{operation.method} {operation.path} is declared twice")
        declared = {p.name for p in operation.parameters if p.location == "path"}
        if declared != operation.path_names():
            raise ValueError(f"{operation.path}: path parameters {sorted(declared)} declared")
        item[operation.method] = _operation(operation, types)
    schemas, refs = types.resolve(api.schema_names)
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": _drop_none(
            {"title": api.title, "version": api.version, "description": api.description}
        ),
        "servers": [{"url": server}],
        "security": _security(api.security),
        "paths": paths,
    }
    components = _drop_empty({"securitySchemes": dict(api.security_schemes), "schemas": schemas})
    if components:
        document["components"] = components
    return _renamed(document, refs) if refs else document


class _Types:
    """The types the operations name, each replaced by a placeholder until all are known
    (msgspec names and links the components of all of them at once)."""

    def __init__(self) -> None:
        self._types: list[Any] = []
        self._placeholders: list[dict[str, Any]] = []

    def schema(self, type_: Any) -> dict[str, Any]:
        """A placeholder, filled in with the type's schema by :meth:`resolve`."""
        placeholder: dict[str, Any] = {}
        self._types.append(type_)
        self._placeholders.append(placeholder)
        return placeholder

    def resolve(self, names: Mapping[type, str]) -> tuple[dict[str, Any], dict[str, str]]:
        """Fills in every placeholder; the components by their published names, and the
        references to rename (old to new)."""
        found, components = msgspec.json.schema_components(
            self._types, ref_template=_REF + "{name}"
        )
        for placeholder, schema in zip(self._placeholders, found, strict=True):
            placeholder.update(schema)
        published = {t.__name__: n for t, n in names.items() if t.__name__ in components}
        schemas: dict[str, Any] = {}
        for name, schema in components.items():
            new = published.get(name, name)
            schemas[new] = _tidied(schema, new)
        if len(schemas) < len(components):
            raise ValueError(f"two components have one name: {sorted(published.values())}")
        return schemas, {_REF + old: _REF + new for old, new in published.items()}


def _tidied(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """A component with its published name as its title and its docstring's indentation
    taken away."""
    out = dict(schema)
    if "title" in out:
        out["title"] = name
    if "description" in out:
        out["description"] = inspect.cleandoc(out["description"])
    if out.get("required") == []:
        del out["required"]
    return out


def _operation(operation: Operation, types: _Types) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": operation.operation_id, "summary": operation.summary}
    if operation.security is not None:
        out["security"] = _security(operation.security)
    if operation.parameters:
        out["parameters"] = [_parameter(p, types) for p in operation.parameters]
    if operation.body is not None:
        out["requestBody"] = {
            "required": operation.body.required,
            "content": _content(operation.body.content, types),
        }
    out["responses"] = {str(a.status): _answer(a, types) for a in operation.answers}
    return out


def _parameter(parameter: Parameter, types: _Types) -> dict[str, Any]:
    return _drop_none(
        {
            "name": parameter.name,
            "in": parameter.location,
            "required": parameter.required or parameter.location == "path",
            "description": parameter.description,
            "schema": types.schema(parameter.schema),
        }
    )


def _answer(answer: Answer, types: _Types) -> dict[str, Any]:
    out: dict[str, Any] = {"description": answer.description}
    if answer.headers:
        out["headers"] = {
            h.name: _drop_none({"description": h.description, "schema": types.schema(h.schema)})
            for h in answer.headers
        }
    if answer.content is not None:
        out["content"] = _content(answer.content, types)
    return out


def _content(content: Content, types: _Types) -> dict[str, Any]:
    if content.body is None:
        return {content.media_type: {}}
    return {content.media_type: {"schema": types.schema(content.body)}}


def _security(security: Security) -> list[dict[str, list[str]]]:
    return [{name: list(scopes) for name, scopes in each.items()} for each in security]


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _drop_empty(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v}


def _renamed(value: Any, refs: Mapping[str, str]) -> Any:
    """``value`` with each ``$ref`` in ``refs`` pointing at its new name."""
    if isinstance(value, dict):
        return {k: refs.get(v, v) if k == "$ref" else _renamed(v, refs) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, refs) for v in value]
    return value
