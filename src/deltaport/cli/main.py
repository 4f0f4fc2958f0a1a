"""The ``deltaport`` command: a thin layer over the packages below it."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from deltaport import __version__
from deltaport.text.terminal import escape_diagnostics, printable, say


def parse_timestamp(text: str) -> dt.datetime:
    """An ISO 8601 date or date-time; naive values are taken as UTC."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid timestamp {text!r}: use ISO 8601, e.g. 2026-01-05T10:00:00Z"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {value}")
    return value


def _add_version_options(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--version", type=_non_negative, help="table version to read")
    group.add_argument("--timestamp", type=parse_timestamp, help="read the table as of this time")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deltaport",
        description="Delta Sharing server, client and tools for Delta Lake tables.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"deltaport {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the Delta Sharing server")
    serve.add_argument("--config", help="server configuration (YAML; default: none)")
    serve.add_argument(
        "--catalog",
        help="catalog database (sqlite:///PATH or postgresql://...); without --config and "
        "--catalog: sqlite:///deltaport-data/catalog.db",
    )
    serve.add_argument("--host", help="address to listen on (overrides the config)")
    serve.add_argument("--port", type=int, help="port to listen on (overrides the config)")
    serve.set_defaults(handler=_cmd_serve)

    demo = commands.add_parser("demo", help="serve generated sample tables from local disk")
    demo.add_argument("--dir", default="demo-data", help="where to write the sample tables")
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8080)
    demo.set_defaults(handler=_cmd_demo)

    shares = commands.add_parser("shares", help="list the shares a profile can read")
    shares.add_argument("profile", help="profile file (JSON) from the data provider")
    shares.set_defaults(handler=_cmd_shares)

    tables = commands.add_parser("tables", help="list the tables a profile can read")
    tables.add_argument("profile", help="profile file (JSON) from the data provider")
    tables.add_argument("share", nargs="?", help="only the tables of this share")
    tables.set_defaults(handler=_cmd_tables)

    cat = commands.add_parser("cat", help="print rows of a shared table")
    cat.add_argument("url", help="PROFILE#share.schema.table")
    cat.add_argument("--limit", type=_non_negative, help="at most this many rows")
    cat.add_argument("--version", type=_non_negative, help="table version to read")
    cat.set_defaults(handler=_cmd_cat)

    download = commands.add_parser("download", help="save a shared table as a parquet file")
    download.add_argument("url", help="PROFILE#share.schema.table")
    download.add_argument("-o", "--output", required=True, help="parquet file to write")
    download.set_defaults(handler=_cmd_download)

    diff = commands.add_parser(
        "diff",
        help="commits one copy of a table has that another lacks",
        add_help=False,
        prefix_chars="\0",
    )
    diff.add_argument("diff_args", nargs=argparse.REMAINDER)
    diff.set_defaults(handler=_cmd_diff)

    table = commands.add_parser("table", help="inspect and read Delta tables directly")
    table_cmds = table.add_subparsers(dest="table_command", required=True, metavar="ACTION")
    show = table_cmds.add_parser("show", help="version, protocol, schema and size of a table")
    show.add_argument("uri", help="table location (path or s3://, az://, gs:// URI)")
    _add_version_options(show)
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=_cmd_table_show)

    history = table_cmds.add_parser("history", help="the table's commits")
    history.add_argument("uri")
    history.add_argument("--json", action="store_true", help="print JSON")
    history.set_defaults(handler=_cmd_table_history)

    read = table_cmds.add_parser("read", help="read a table (preview, or write parquet)")
    read.add_argument("uri")
    _add_version_options(read)
    read.add_argument("--columns", help="comma-separated column names")
    read.add_argument("--limit", type=_non_negative, help="at most this many rows")
    read.add_argument("-o", "--output", help="write a parquet file instead of a preview")
    read.set_defaults(handler=_cmd_table_read)

    changes = table_cmds.add_parser("changes", help="the change data feed of a version range")
    changes.add_argument("uri")
    changes.add_argument("--from", dest="start", type=_non_negative, required=True)
    changes.add_argument("--to", dest="end", type=_non_negative)
    changes.add_argument("-o", "--output", help="write a parquet file instead of a preview")
    changes.set_defaults(handler=_cmd_table_changes)

    from deltaport.cli.catalog import add_catalog_commands

    add_catalog_commands(commands, table_cmds)
    from deltaport.cli.schema import add_schema_command

    add_schema_command(commands)
    from deltaport.cli.audit import add_audit_command

    add_audit_command(commands)
    from deltaport.cli.iceberg import add_iceberg_command

    add_iceberg_command(commands)
    from deltaport.cli.help_texts import add_help_texts

    add_help_texts(parser)
    return parser


def _cmd_serve(args: argparse.Namespace) -> int:
    from deltaport.cli.catalog import DEFAULT_CATALOG, create_default_catalog
    from deltaport.listeners import run

    catalog = args.catalog
    if catalog is None and args.config is None and not os.environ.get("DELTAPORT_CATALOG"):
        catalog = DEFAULT_CATALOG
        create_default_catalog()
    run(args.config, host=args.host, port=args.port, catalog=catalog)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from deltaport.demo import run_demo

    run_demo(args.dir, host=args.host, port=args.port)
    return 0


def _cmd_shares(args: argparse.Namespace) -> int:
    from deltaport.cli.profile_reads import shares

    say(shares(args.profile))
    return 0


def _cmd_tables(args: argparse.Namespace) -> int:
    from deltaport.cli.profile_reads import tables

    say(tables(args.profile, args.share))
    return 0


def _cmd_cat(args: argparse.Namespace) -> int:
    from deltaport.cli.profile_reads import cat

    say(cat(args.url, limit=args.limit, version=args.version))
    return 0


def _cmd_download(args: argparse.Namespace) -> int:
    from deltaport.cli.profile_reads import download

    rows = download(args.url, args.output, progress=sys.stderr.isatty())
    say(f"wrote {rows} rows to {args.output}")
    return 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from deltaport.cli.diff import cli_main

    return cli_main(args.diff_args)


def _cmd_table_show(args: argparse.Namespace) -> int:
    from deltaport.direct import describe_table, format_description

    info = describe_table(args.uri, version=args.version, timestamp=args.timestamp)
    if args.json:
        say(json.dumps(info, indent=2), as_json=True)
    else:
        say(format_description(info))
    return 0


def _cmd_table_history(args: argparse.Namespace) -> int:
    from deltaport.direct import format_history, table_history

    entries = table_history(args.uri)
    if args.json:
        say(json.dumps(entries, indent=2), as_json=True)
    else:
        say(format_history(entries))
    return 0


def _cmd_table_read(args: argparse.Namespace) -> int:
    from deltaport.direct import read_table_batches

    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    schema, batches = read_table_batches(
        args.uri, version=args.version, timestamp=args.timestamp, columns=columns, limit=args.limit
    )
    return _emit(schema, batches, args.output)


def _cmd_table_changes(args: argparse.Namespace) -> int:
    from deltaport.direct import read_change_batches

    schema, batches = read_change_batches(args.uri, args.start, args.end)
    return _emit(schema, batches, args.output)


def _emit(schema: Any, batches: Any, output: str | None) -> int:
    from deltaport.direct import preview, write_parquet

    if output:
        rows = write_parquet(schema, batches, output)
        say(f"wrote {rows} rows to {output}")
    else:
        say(preview(schema, batches))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    escape_diagnostics()
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except _user_errors() as exc:
        print(f"deltaport: error: {printable(str(exc))}", file=sys.stderr)
        return 1


def _user_errors() -> tuple[type[Exception], ...]:
    """Errors whose message is meant for the user: printed without a traceback."""
    from deltaport.catalog.rows import CatalogError
    from deltaport.client.base.errors import SharingError
    from deltaport.config.model import ConfigError
    from deltaport.delta.errors import DeltaError
    from deltaport.demo.run import DemoError
    from deltaport.listeners.startup import start_up_errors
    from deltaport.protocol.profile import ProfileError
    from deltaport.storage import InvalidLocationError, StorageError

    return (
        *start_up_errors(),
        DemoError,
        DeltaError,
        StorageError,
        InvalidLocationError,
        SharingError,
        ProfileError,
        ConfigError,
        CatalogError,
    )
