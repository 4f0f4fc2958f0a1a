"""The items of the listing answers (shares, schemas, tables), as the protocol spells them."""

from __future__ import annotations

from deltaport.catalog.model import Share, SharedSchema, SharedTable
from deltaport.protocol.actions import SchemaItem, ShareItem, TableItem


def share_item(share: Share) -> ShareItem:
    return ShareItem(share.name, share.id, share.display_name, share.comment, share.properties)


def schema_item(schema: SharedSchema) -> SchemaItem:
    return SchemaItem(
        schema.name, schema.share, schema.display_name, schema.comment, schema.properties
    )


def table_item(table: SharedTable) -> TableItem:
    return TableItem(
        table.name,
        table.schema,
        table.share,
        table.share_id,
        table.id,
        table.display_name,
        table.comment,
        table.properties,
        table.access.location,
        list(table.access.auxiliary_locations) or None,
        list(table.access.modes),
    )
