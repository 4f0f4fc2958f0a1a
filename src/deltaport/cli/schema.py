"""``deltaport schema set SHARE.SCHEMA``: what recipients see of a schema of the catalog
besides its name (its display name, comment and properties), changed in the catalog
database or through a running server's admin API (``--server``), as the catalog commands
find them."""

from __future__ import annotations

import argparse


def add_schema_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from deltaport.cli.catalog import _common, _run

    schema = commands.add_parser("schema", help="the schemas of the catalog's shares")
    actions = schema.add_subparsers(dest="schema_command", required=True, metavar="ACTION")
    change = actions.add_parser(
        "set", help="change what recipients see of a schema (what is not given stays)"
    )
    change.add_argument("name", help="SHARE.SCHEMA (a schema exists through its tables)")
    change.add_argument("--comment", help="the comment ('' removes it)")
    change.add_argument("--display-name", help="the name recipients' tools show ('' removes it)")
    change.add_argument(
        "--property",
        action="append",
        metavar="KEY=VALUE",
        help="(repeatable) replaces its properties",
    )
    change.add_argument("--no-properties", action="store_true", help="remove its properties")
    _common(change)
    change.set_defaults(handler=_run(_set))


def _set(args: argparse.Namespace) -> str:
    from deltaport.catalog.rows import KEEP, CatalogError, Keep, SchemaDetails
    from deltaport.cli.catalog import _service
    from deltaport.cli.catalog_text import parse_properties

    share, dot, schema = args.name.partition(".")
    if not dot or not share or not schema or "." in schema:
        raise CatalogError(f"a schema is named SHARE.SCHEMA, got {args.name!r}")
    if args.property and args.no_properties:
        raise CatalogError("give --property or --no-properties, not both")
    properties: dict[str, str] | Keep = KEEP
    if args.property:
        properties = parse_properties(args.property)
    elif args.no_properties:
        properties = {}
    given = SchemaDetails(
        KEEP if args.display_name is None else args.display_name or None,
        KEEP if args.comment is None else args.comment or None,
        properties,
    )
    row = _service(args).set_schema_details(share, schema, given)
    shown = [
        f"display name {row.display_name!r}" if row.display_name else "no display name",
        f"comment {row.comment!r}" if row.comment else "no comment",
        "properties " + ", ".join(f"{k}={v}" for k, v in row.properties)
        if row.properties
        else "no properties",
    ]
    return f"schema {share}.{schema}: {'; '.join(shown)}"
