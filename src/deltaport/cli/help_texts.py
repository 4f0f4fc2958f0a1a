"""What ``deltaport ... --help`` shows besides the options: each option's default, examples
of the command, and the documentation page that explains it (kept apart from the parser so
that the commands stay short)."""

from __future__ import annotations

import argparse

DOCS = "documentation: {page} (in the repository's docs/; `bash scripts/docs.sh` serves it)"

PAGES = {
    "": "docs/getting-started.md",
    "serve": "docs/server/operating.md",
    "demo": "docs/getting-started.md#the-demo",
    "shares": "docs/reading.md",
    "tables": "docs/reading.md",
    "cat": "docs/reading.md",
    "download": "docs/reading.md",
    "table": "docs/delta.md",
    "table add": "docs/server/catalog.md",
    "table remove": "docs/server/catalog.md",
    "catalog": "docs/server/catalog.md",
    "share": "docs/server/catalog.md",
    "schema": "docs/server/catalog.md#what-recipients-see",
    "recipient": "docs/server/catalog.md",
    "audit": "docs/server/audit.md",
    "iceberg": "docs/iceberg.md",
}

EXAMPLES = {
    "": [
        "deltaport demo",
        "deltaport serve --config server.yaml --port 8090",
        "deltaport cat 'config.share#lake.default.orders' --limit 5",
    ],
    "serve": [
        "deltaport serve --config server.yaml",
        "deltaport serve --config server.yaml --host 0.0.0.0 --port 8443",
        "deltaport serve --catalog sqlite:///deltaport-data/catalog.db",
    ],
    "demo": ["deltaport demo", "deltaport demo --dir /tmp/demo --port 8081"],
    "shares": ["deltaport shares config.share"],
    "tables": ["deltaport tables config.share", "deltaport tables config.share lake"],
    "cat": [
        "deltaport cat 'config.share#lake.default.orders' --limit 5",
        "deltaport cat 'config.share#lake.default.orders' --version 1",
    ],
    "download": ["deltaport download 'config.share#lake.default.orders' -o orders.parquet"],
    "table show": [
        "deltaport table show /data/delta/orders",
        "deltaport table show s3://b/t --json",
    ],
    "table history": ["deltaport table history /data/delta/orders"],
    "table read": [
        "deltaport table read /data/delta/orders --limit 10",
        "deltaport table read /data/delta/orders --version 3 -o orders-v3.parquet",
    ],
    "table changes": ["deltaport table changes /data/delta/orders --from 1 --to 3"],
    "table add": [
        "deltaport table add lake.default.orders /data/delta/orders --history",
    ],
    "share create": ["deltaport share create lake"],
    "share grant": ["deltaport share grant lake --to acme"],
    "schema set": [
        "deltaport schema set lake.default --display-name Default --comment 'Daily orders'",
        "deltaport schema set lake.default --property region=eu",
    ],
    "recipient create": [
        "deltaport recipient create acme -o acme.share",
        "deltaport recipient create acme -o acme.share --endpoint "
        "https://sharing.example.com/delta-sharing --expires 90d",
    ],
    "recipient rotate": ["deltaport recipient rotate acme -o acme-new.share"],
}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Examples as written; an option's default appended to its help, unless it has none
    (None, False, an empty list) or the help names it already."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        if text is None or "%(default)" in text or "default" in text or not _shown(action):
            return text
        return f"{text} (default: %(default)s)"


def _shown(action: argparse.Action) -> bool:
    """Whether an option's default is worth saying (not None, False or empty)."""
    default = action.default
    empty = default is None or default is False or default == [] or default == argparse.SUPPRESS
    return bool(action.option_strings) and not empty


def add_help_texts(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Give ``parser`` and every subcommand below it the formatter, examples and page."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if action.help is None and _shown(action):
            action.help = "default: %(default)s"
    lines = []
    if path in EXAMPLES:
        lines += ["examples:", *(f"  {example}" for example in EXAMPLES[path])]
    page = PAGES.get(path, PAGES.get(path.split(" ")[0]))
    if page is not None:
        lines += ["", DOCS.format(page=page)] if lines else [DOCS.format(page=page)]
    if lines and parser.epilog is None:
        parser.epilog = "\n".join(lines)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                add_help_texts(sub, f"{path} {name}".strip())
