"""``deltaport ... --help``: every command names its documentation page, options show their
defaults, and the examples shown are commands the parser accepts."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from deltaport.cli.help_texts import EXAMPLES
from deltaport.cli.main import build_parser

DELTAPORT = str(Path(sys.executable).parent / "deltaport")
ROOT = Path(__file__).resolve().parents[1]


def _commands(parser: argparse.ArgumentParser, path: str = "") -> Iterator[tuple[str, str]]:
    yield path, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{path} {name}".strip())


HELP = dict(_commands(build_parser()))


@pytest.mark.parametrize("path", sorted(p for p in HELP if p != "diff"))
def test_every_command_names_its_documentation_page(path: str) -> None:
    text = HELP[path]
    line = next((x for x in text.splitlines() if x.startswith("documentation: docs/")), None)
    assert line is not None, text
    page = line.split()[1].split("#")[0]
    assert (ROOT / page).is_file(), page


@pytest.mark.parametrize("example", [e for examples in EXAMPLES.values() for e in examples])
def test_the_examples_parse(example: str) -> None:
    words = shlex.split(example)
    assert words[0] == "deltaport"
    build_parser().parse_args(words[1:])


def test_help_shows_examples_and_defaults() -> None:
    shown = subprocess.run(
        [DELTAPORT, "demo", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "--port PORT  default: 8080" in shown
    assert "(default: demo-data)" in shown
    assert "examples:\n  deltaport demo\n" in shown
    assert "--start-version START_VERSION\n                        default: 0" in HELP["table add"]
    assert (
        "examples:\n  deltaport recipient create acme -o acme.share\n" in HELP["recipient create"]
    )
