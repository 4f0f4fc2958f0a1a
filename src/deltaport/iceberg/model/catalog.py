"""The REST catalog's response bodies (the specification's ``CatalogConfig``,
``ListNamespacesResponse``, ``GetNamespaceResponse``, ``ListTablesResponse``,
``LoadTableResult``, ``LoadCredentialsResponse`` and ``IcebergErrorResponse``) and the one
request body it reads (``ReportMetricsRequest``), in its kebab-case field names."""

from __future__ import annotations

from typing import Annotated, TypedDict

import msgspec

from deltaport.iceberg.model.metadata import TableMetadata


class _Body(msgspec.Struct, rename="kebab"):
    """The settings every body shares: every field is written, ``null`` too."""


Namespace = Annotated[
    list[str], msgspec.Meta(description="A namespace's levels: one, the share's schema.")
]
PageToken = Annotated[
    str | None, msgspec.Meta(description="Where the next page starts (null: this was the last).")
]


class CatalogConfig(_Body):
    defaults: dict[str, str]
    overrides: Annotated[
        dict[str, str],
        msgspec.Meta(description="prefix: shares/<share>, the share named as the warehouse."),
    ]
    endpoints: Annotated[list[str], msgspec.Meta(description="The routes served, 'METHOD path'.")]


class ListNamespacesResponse(_Body):
    namespaces: list[Namespace]
    next_page_token: PageToken


class GetNamespaceResponse(_Body):
    namespace: Namespace
    properties: dict[str, str]


class TableIdentifier(_Body):
    namespace: Namespace
    name: str


class ListTablesResponse(_Body):
    identifiers: list[TableIdentifier]
    next_page_token: PageToken


class StorageCredential(TypedDict):  # a typed dict: its keys need no renaming
    """A credential for the files under ``prefix`` (FileIO properties, Iceberg's names)."""

    prefix: str
    config: dict[str, str]


class LoadTableResult(_Body):
    metadata_location: str
    metadata: TableMetadata
    config: Annotated[
        dict[str, str],
        msgspec.Meta(description="A cloud table's FileIO properties (its temporary credential)."),
    ]
    storage_credentials: list[StorageCredential]


class LoadCredentialsResponse(_Body):
    storage_credentials: list[StorageCredential]


class ErrorModel(_Body):
    message: Annotated[str, msgspec.Meta(description="What went wrong, for people.")]
    type: Annotated[
        str, msgspec.Meta(description="The exception's name, e.g. NoSuchTableException.")
    ]
    code: Annotated[int, msgspec.Meta(ge=400, le=600)]


class IcebergErrorResponse(_Body):
    error: ErrorModel


class ReportMetricsRequest(msgspec.Struct, rename="kebab"):
    """A scan or commit report (accepted, logged by its report-type); its other fields are
    read by no one here."""

    report_type: str | None = None
    table_name: str | None = None
    snapshot_id: Annotated[int, msgspec.Meta(extra_json_schema={"format": "int64"})] | None = None
