"""``deltaport iceberg cleanup``: the Iceberg files no served version needs removed once,
as a running server's sweep removes them, printing each (``--dry-run``: only printed)."""

from __future__ import annotations

import argparse
import os


def add_iceberg_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    iceberg = commands.add_parser("iceberg", help="the Iceberg catalog's metadata")
    actions = iceberg.add_subparsers(dest="iceberg_command", required=True, metavar="ACTION")
    cleanup = actions.add_parser(
        "cleanup", help="remove the Iceberg files no served version needs any more"
    )
    cleanup.add_argument("--config", help="server configuration (YAML), as `serve` takes it")
    cleanup.add_argument(
        "--catalog", help="catalog database (sqlite:///PATH or postgresql://...), as `serve`"
    )
    cleanup.add_argument(
        "--retain-hours",
        type=_hours,
        help="keep files modified this recently (default: the configuration's "
        "iceberg.retainHours, 24)",
    )
    cleanup.add_argument("--dry-run", action="store_true", help="print, remove nothing")
    cleanup.set_defaults(handler=_cleanup)


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def _cleanup(args: argparse.Namespace) -> int:
    import msgspec

    from deltaport.cli.catalog import DEFAULT_CATALOG
    from deltaport.config.loading import load_config
    from deltaport.config.model import ServerConfig
    from deltaport.listeners.iceberg_mount import iceberg_sweeper
    from deltaport.server.files.reader_seal import ReaderSeal
    from deltaport.server.sources.catalog_source import catalog_source
    from deltaport.text.terminal import say
    from deltaport.text.wording import count

    config = load_config(args.config) if args.config else ServerConfig()
    catalog = args.catalog
    if catalog is None and args.config is None and not os.environ.get("DELTAPORT_CATALOG"):
        catalog = DEFAULT_CATALOG
    if catalog is not None:
        config = msgspec.structs.replace(config, catalog=catalog)
    if args.retain_hours is not None:
        iceberg = msgspec.structs.replace(config.iceberg, retain_hours=args.retain_hours)
        config = msgspec.structs.replace(config, iceberg=iceberg)
    source = catalog_source(
        config, ReaderSeal(os.urandom(32)), os.urandom(32)
    )  # no credential is checked
    try:
        swept = iceberg_sweeper(config, source).sweep(dry_run=args.dry_run)
    finally:
        live = getattr(source, "live", None)
        if live is not None:
            live.close()
    verb = "would remove" if args.dry_run else "removed"
    lines = []
    for table in swept:
        lines.append(f"{table.location}: {verb} {count(len(table.removed), 'file')}")
        lines.extend(f"  {path}" for path in table.removed)
    say("\n".join(lines) if lines else "no Iceberg metadata to clean up")
    return 0
