"""The catalog of a YAML configuration: its shares, schemas and tables, read-only."""

from __future__ import annotations

from deltaport.catalog.access import table_access
from deltaport.catalog.model import CatalogView, Share, SharedSchema, SharedTable
from deltaport.config.model import ServerConfig
from deltaport.protocol.names import name_key
from deltaport.storage import parse_location


def yaml_catalog(config: ServerConfig) -> CatalogView:
    """The configured shares (in configuration order)."""
    shares = []
    for share_cfg in config.shares:
        share = Share(
            share_cfg.name,
            id=share_cfg.id,
            display_name=share_cfg.display_name,
            comment=share_cfg.comment,
            properties=share_cfg.properties,
        )
        for schema_cfg in share_cfg.schemas:
            schema = SharedSchema(
                share.name,
                schema_cfg.name,
                display_name=schema_cfg.display_name,
                comment=schema_cfg.comment,
                properties=schema_cfg.properties,
            )
            for t in schema_cfg.tables:
                location = parse_location(t.location)
                schema.tables[name_key(t.name)] = SharedTable(
                    share=share.name,
                    schema=schema.name,
                    name=t.name,
                    location=location,
                    storage_options=config.storage_options_for(t),
                    id=t.id,
                    share_id=share.id,
                    history_shared=t.shares_history,
                    start_version=t.start_version,
                    display_name=t.display_name,
                    comment=t.comment,
                    properties=t.properties,
                    access=table_access(
                        location, t.location, t.access_modes, t.auxiliary_locations
                    ),
                    partition_filter=t.partition_filter,
                )
            share.schemas[name_key(schema.name)] = schema
        shares.append(share)
    return CatalogView(shares)
