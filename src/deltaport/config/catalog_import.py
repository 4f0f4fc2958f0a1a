"""``deltaport catalog import``: a YAML configuration's shares copied into a catalog."""

from __future__ import annotations

from deltaport.catalog.provider.service import ProviderService
from deltaport.catalog.rows import Details, SchemaDetails
from deltaport.config.model import ServerConfig


def import_shares(service: ProviderService, config: ServerConfig) -> None:
    """Create each share of ``config`` with its tables and what recipients see of its
    schemas (in the caller's transaction); a schema without tables is not a schema of the
    catalog."""
    for share in config.shares:
        service.create_share(
            share.name, share.comment, Details.of(share.display_name, share.properties)
        )
        for schema in share.schemas:
            for t in schema.tables:
                service.add_table_to(share.name, schema.name, t.name, t.spec)
            if schema.tables:
                given = SchemaDetails(schema.display_name, schema.comment, schema.properties or {})
                service.set_schema_details(share.name, schema.name, given)
