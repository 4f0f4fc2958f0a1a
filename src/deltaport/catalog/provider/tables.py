"""A table about to be shared, checked against what it is: named ``share.schema.table``,
readable where it is said to be, its partition filter naming only its partition columns."""

from __future__ import annotations

from collections.abc import Mapping

from deltaport.catalog.access import SettingsFor
from deltaport.catalog.partition_filter import PartitionFilterError, check
from deltaport.catalog.rows import CatalogError, TableRow, TableSpec
from deltaport.catalog.store_checks import check_table_fields
from deltaport.delta import open_table
from deltaport.delta.errors import DeltaError


def split_table_name(text: str) -> tuple[str, str, str]:
    parts = text.split(".")
    if len(parts) != 3 or not all(parts):
        raise CatalogError(f"a table is named SHARE.SCHEMA.TABLE, got {text!r}")
    return parts[0], parts[1], parts[2]


def check_table(
    full_name: str,
    spec: TableSpec,
    storage_options: Mapping[str, str] | None = None,
    settings_for: SettingsFor | None = None,
) -> None:
    """Refuse (:class:`CatalogError`, with the reason) a table that cannot be shared: its
    access modes are checked (with the credential settings of ``settings_for`` when the
    server's storage configuration is known), its location must hold a readable Delta
    table and the partition filter may name only its partition columns. Reads storage,
    writes nothing: callers check every table of a change before changing the catalog."""
    check_table_fields(full_name, spec, settings_for)
    try:
        metadata = open_table(spec.location, storage_options).snapshot().metadata
    except DeltaError as exc:
        raise CatalogError(f"{spec.location} cannot be shared: {exc}") from None
    if spec.partition_filter is not None:
        try:
            check(spec.partition_filter, metadata.partition_columns)
        except PartitionFilterError as exc:
            raise CatalogError(str(exc)) from None


def added_text(row: TableRow) -> str:
    """What adding ``row`` did, in words (the admin API's answer, the command's line)."""
    return f"added table {row.share}.{row.schema}.{row.name} ({row.location})"
