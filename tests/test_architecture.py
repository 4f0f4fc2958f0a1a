"""The architecture page (docs/architecture.md) holds: its floors match the code's imports,
no packages import each other, and every folder and module it names exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from imports_graph import SRC, Module, cycles, module_edges, modules, package_edges

ROOT = SRC.parent
PAGE = ROOT / "docs" / "architecture.md"
FAMILIES = ("server", "client", "diff", "spark")
MAX_MODULES_PER_FOLDER = 14  # about 12 modules besides __init__, as the house rule says
MAX_LINES_PER_MODULE = 500

FOUND = modules()
EDGES = package_edges(FOUND)


def floors(block: str) -> dict[str, int]:
    """``name -> floor`` from the page's ``<!-- floors: block -->`` code block."""
    text = PAGE.read_text(encoding="utf-8")
    match = re.search(rf"<!-- floors: {block}\b[^>]*-->\n```text\n(.*?)```", text, re.DOTALL)
    assert match, f"no floors block {block!r} in {PAGE.name}"
    table: dict[str, int] = {}
    for line in match.group(1).splitlines():
        level, *names = line.split()
        for name in names:
            table[name] = int(level)
    return table


def top(package: str) -> str:
    """``deltaport.server.http`` -> ``server``; the root package keeps its name."""
    parts = package.split(".")
    return parts[1] if parts[0] == "deltaport" and len(parts) > 1 else parts[0]


def room(package: str, family: str) -> str | None:
    """``deltaport.server.http.x`` -> ``server.http`` when in ``family``."""
    parts = package.split(".")
    if parts[:2] != ["deltaport", family]:
        return None
    return ".".join(parts[1:3])


def test_no_packages_import_each_other() -> None:
    assert cycles(EDGES) == []


def test_no_modules_import_each_other() -> None:
    assert cycles(module_edges(FOUND)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_every_package_has_a_floor() -> None:
    table = floors("top-level")
    assert {top(p) for p in EDGES} == set(table)
    for family in FAMILIES:
        rooms = {room(p, family) for p in EDGES} - {None}
        assert rooms == set(floors(family)), family


def test_packages_import_only_lower_floors() -> None:
    table = floors("top-level")
    upward = sorted(
        f"{source} -> {target}"
        for source, targets in EDGES.items()
        for target in targets
        if top(source) != top(target) and table[top(source)] <= table[top(target)]
    )
    assert upward == []


@pytest.mark.parametrize("family", FAMILIES)
def test_rooms_import_only_lower_rooms(family: str) -> None:
    table = floors(family)
    upward = []
    for source, targets in EDGES.items():
        for target in targets:
            a, b = room(source, family), room(target, family)
            if a and b and a != b and table[a] <= table[b]:
                upward.append(f"{source} -> {target}")
    assert upward == []


NEVER = {
    "client": {"server", "admin", "console", "listeners", "config", "catalog", "sharing"},
    "spark": {"server", "admin", "console", "listeners", "config", "catalog", "sharing"},
    "server": {"spark", "client"},
    "admin": {"spark"},
    "console": {"spark"},
    "listeners": {"spark"},
}


def test_recipient_code_and_provider_code_stay_apart() -> None:
    broken = sorted(
        f"{source} -> {target}"
        for source, targets in EDGES.items()
        for target in targets
        if top(target) in NEVER.get(top(source), set())
    )
    assert broken == []


def test_every_path_the_page_names_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_]+(?:/[a-z_]+)*/?)(?:\.[a-z_]+)*`", text))
    package_root = SRC / "deltaport"
    checked = 0
    for name in sorted(n for n in named if "/" in n and not n.startswith(("tests/", "src/"))):
        path = package_root / name.rstrip("/")
        assert path.is_dir() or path.with_suffix(".py").is_file(), f"{PAGE.name} names {name}"
        checked += 1
    assert checked > 40


def _folders() -> dict[Path, list[Module]]:
    by_folder: dict[Path, list[Module]] = {}
    for module in FOUND.values():
        by_folder.setdefault(module.path.parent, []).append(module)
    return by_folder


def test_no_folder_is_crowded() -> None:
    crowded = {
        str(folder.relative_to(SRC)): len(found)
        for folder, found in _folders().items()
        if len(found) > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}


def test_no_module_is_long() -> None:
    long = {
        module.name: lines
        for module in FOUND.values()
        if (lines := len(module.path.read_text(encoding="utf-8").splitlines()))
        > MAX_LINES_PER_MODULE
    }
    assert long == {}


FRONT_DOORS = ("admin", "console", "cli", "config")
STORE = "deltaport.catalog.sql_store"
STORE_ALLOWED = {
    # opens the catalog database a command names (``--catalog``, ``--config``)
    "deltaport.cli.catalog",
    # the provider service over the store the listener opened, with its batches
    "deltaport.admin.catalog_api",
    # the shared tables' listing read from the database, at the catalog's generation
    "deltaport.admin.tables",
    # link activation: a recipient redeeming its link, the recipient plane's credential
    # check (as a bearer token's), not a provider change
    "deltaport.admin.unity.api",
}


def store_users(edges: dict[str, set[str]]) -> list[str]:
    """The front-door modules that import the store itself rather than going through
    ``catalog/provider`` and the ``Catalog`` protocol."""
    return sorted(
        source
        for source, targets in edges.items()
        if top(source) in FRONT_DOORS and STORE in targets and source not in STORE_ALLOWED
    )


def test_front_doors_reach_the_store_only_through_the_provider_service() -> None:
    assert store_users(module_edges(FOUND)) == []


def test_the_store_rule_finds_a_front_door_importing_the_store() -> None:
    edges = {
        "deltaport.config.catalog_import": {STORE},
        "deltaport.listeners.admin_app": {STORE},
        "deltaport.cli.catalog": {STORE},
    }
    assert store_users(edges) == ["deltaport.config.catalog_import"]
