"""The REST catalog's response bodies (the specification's ``CatalogConfig``,
``ListNamespacesResponse``, ``GetNamespaceResponse``, ``ListTablesResponse``,
``LoadTableResult``, ``LoadCredentialsResponse`` and ``IcebergErrorResponse``), in its
kebab-case field names."""

from __future__ import annotations

from typing import TypedDict

import msgspec

from deltaport.iceberg.model.metadata import TableMetadata


class _Body(msgspec.Struct, rename="kebab"):
    """The settings every body shares: every field is written, ``null`` too."""


class CatalogConfig(_Body):
    defaults: dict[str, str]
    overrides: dict[str, str]
    endpoints: list[str]


class ListNamespacesResponse(_Body):
    namespaces: list[list[str]]
    next_page_token: str | None


class GetNamespaceResponse(_Body):
    namespace: list[str]
    properties: dict[str, str]


class TableIdentifier(_Body):
    namespace: list[str]
    name: str


class ListTablesResponse(_Body):
    identifiers: list[TableIdentifier]
    next_page_token: str | None


class StorageCredential(TypedDict):  # a typed dict: its keys need no renaming
    """A credential for the files under ``prefix`` (FileIO properties)."""

    prefix: str
    config: dict[str, str]


class LoadTableResult(_Body):
    metadata_location: str
    metadata: TableMetadata
    config: dict[str, str]
    storage_credentials: list[StorageCredential]


class LoadCredentialsResponse(_Body):
    storage_credentials: list[StorageCredential]


class ErrorModel(_Body):
    message: str
    type: str
    code: int


class IcebergErrorResponse(_Body):
    error: ErrorModel
