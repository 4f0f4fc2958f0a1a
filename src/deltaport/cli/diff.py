"""``deltaport diff LEFT RIGHT``: the command-line face of
[`diff_tables`][deltaport.diff.diff_tables]."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import msgspec

from deltaport.delta.errors import DeltaError
from deltaport.diff.api import diff_tables
from deltaport.diff.base.errors import DiffError
from deltaport.diff.render import render_text, to_json
from deltaport.storage import StorageError
from deltaport.text.terminal import json_printable, printable


def build_parser(prog: str = "deltaport diff") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(
            "Two-dot diff LEFT..RIGHT of two copies (branches) of a table: the commits "
            "RIGHT has and LEFT has not, from their common base version."
        ),
    )
    parser.add_argument("left", help="left table location (path or URI)")
    parser.add_argument("right", help="right table location (path or URI)")
    parser.add_argument("--base-version", type=int, help="common base version (default: found)")
    parser.add_argument(
        "--limit", type=int, help="commits per page (default 1000); with --rows, changes (100)"
    )
    parser.add_argument("--page-token", help="token from a previous page")
    parser.add_argument("--format", dest="table_format", help="table format (default: detected)")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="storage option (repeatable), e.g. aws_region=eu-west-1",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    rows = parser.add_argument_group("row diff (--rows)")
    rows.add_argument(
        "--rows", action="store_true", help="the rows inserted, deleted and updated instead"
    )
    rows.add_argument("--key", help="comma-separated key columns (default: whole rows)")
    rows.add_argument("--columns", help="comma-separated columns to compare")
    rows.add_argument("--where", help="only rows matching this SQL predicate")
    rows.add_argument("--left-version", type=int, help="left table version (default: latest)")
    rows.add_argument("--right-version", type=int, help="right table version (default: latest)")
    rows.add_argument("--engine", default="arrow", help="arrow (this machine, default) or spark")
    rows.add_argument(
        "--memory-budget",
        type=_size,
        help="memory for the Arrow engine, e.g. 512M, 4G (default 1G); past it rows are "
        "compared range by range from temporary files",
    )
    rows.add_argument(
        "-o", "--output", help="write every change to a .parquet file or a new Delta table"
    )
    return parser


def _size(text: str) -> int:
    units = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    number, unit = text.strip().upper().rstrip("B"), ""
    if number and number[-1] in units:
        number, unit = number[:-1], number[-1]
    try:
        value = int(float(number) * units[unit])
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (use e.g. 512M or 4G)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a size must be positive: {text!r}")
    return value


def cli_main(argv: Sequence[str] | None = None) -> int:
    """Run the diff command; returns the exit status (0 ok, 1 diff failed, 2 bad usage)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    options: dict[str, str] = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep or not key:
            parser.error(f"--option expects KEY=VALUE, got {item!r}")
        options[key] = value
    if args.rows:
        return rows_main(args, options)
    try:
        result = diff_tables(
            args.left,
            args.right,
            base_version=args.base_version,
            limit=args.limit,
            page_token=args.page_token,
            table_format=args.table_format,
            storage_options=options or None,
        )
    except (DiffError, DeltaError, StorageError, ValueError) as exc:
        print(f"deltaport diff: error: {printable(str(exc))}", file=sys.stderr)
        return 1
    if args.json:
        text = msgspec.json.format(msgspec.json.encode(to_json(result))).decode()
        sys.stdout.write(json_printable(text))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(printable(render_text(result)))
    return 0


def rows_main(args: argparse.Namespace, options: dict[str, str]) -> int:
    """``deltaport diff --rows``: the summary and a page of changes, or every change to
    ``-o``."""
    from deltaport.diff.rows.row_diff import DEFAULT_ROW_LIMIT, diff_rows
    from deltaport.diff.rows.row_output import rows_json_lines, rows_text, write_changes

    def names(text: str | None) -> list[str] | None:
        return [n.strip() for n in text.split(",") if n.strip()] if text else None

    try:
        kwargs = {"memory_budget": args.memory_budget} if args.memory_budget else {}
        diff = diff_rows(
            args.left,
            args.right,
            key=names(args.key),
            columns=names(args.columns),
            where=args.where,
            left_version=args.left_version,
            right_version=args.right_version,
            limit=DEFAULT_ROW_LIMIT if args.limit is None else args.limit,
            page_token=args.page_token,
            engine=args.engine,
            storage_options=options or None,
            **kwargs,
        )
        if args.output:
            written = write_changes(diff, args.output)
            print(f"wrote {written} changes to {args.output}", file=sys.stderr)
    except (DiffError, DeltaError, StorageError, ValueError, OSError) as exc:
        print(f"deltaport diff: error: {printable(str(exc))}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(json_printable(rows_json_lines(diff)))
    else:
        sys.stdout.write(printable(rows_text(diff)))
    return 0
