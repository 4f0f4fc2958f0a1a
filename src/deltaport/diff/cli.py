"""``deltaport diff LEFT RIGHT``: the command-line face of :func:`diff_tables`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import msgspec

from deltaport.delta.errors import DeltaError
from deltaport.diff.api import diff_tables
from deltaport.diff.errors import DiffError
from deltaport.diff.render import render_text, to_json
from deltaport.storage import StorageError


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
    parser.add_argument("--limit", type=int, default=1000, help="commits per page (default 1000)")
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
    return parser


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
        print(f"deltaport diff: error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(to_json(result))).decode())
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(result))
    return 0
