"""The package import graph of ``src/``, read from the code's import statements (module
level and inside functions alike: a deferred import is still an arrow)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


@dataclass(frozen=True)
class Module:
    name: str  # deltaport.server.http.app
    package: str  # deltaport.server.http
    path: Path


def modules(root: Path = SRC) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            name = ".".join(parts[:-1])
            package = name
        else:
            name = ".".join(parts)
            package = ".".join(parts[:-1])
        found[name] = Module(name, package, path)
    return found


def imported_names(module: Module, found: dict[str, Module]) -> Iterator[str]:
    """Every module name ``module`` imports, relative imports resolved. ``from pkg import
    mod`` names ``pkg.mod``, not ``pkg``: the names come from the submodule."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            yield from (name for name in submodules if name in found)
            if not all(name in found for name in submodules):
                yield base


def package_edges(found: dict[str, Module]) -> dict[str, set[str]]:
    """package -> the packages its modules import. Entry points (``__main__``) are left
    out: nothing imports them, so they close no loop."""
    edges: dict[str, set[str]] = {m.package: set() for m in found.values()}
    for module in found.values():
        if module.name.endswith(".__main__"):
            continue
        for name in imported_names(module, found):
            target = found.get(name)
            if target is None or target.package == module.package:
                continue
            edges[module.package].add(target.package)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def module_edges(found: dict[str, Module]) -> dict[str, set[str]]:
    """module -> the modules it imports (entry points left out, as for packages)."""
    edges: dict[str, set[str]] = {name: set() for name in found}
    for module in found.values():
        if module.name.endswith(".__main__"):
            continue
        edges[module.name] = {n for n in imported_names(module, found) if n in found} - {
            module.name
        }
    return edges
