"""Rules the test suite keeps so that it does not fail on its own timing."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def module_level_calls(tree: ast.Module, name: str) -> list[int]:
    """Lines where a statement at module level (outside any function) calls ``name``."""
    lines = []
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(statement):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == name
            ):
                lines.append(node.lineno)
    return lines


def test_no_port_is_chosen_at_import() -> None:
    """A port picked while pytest collects is free then, not minutes later when the module
    runs: another test's server can take it meanwhile (CI failed on this once)."""
    found = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in module_level_calls(ast.parse(path.read_text()), "free_port")
    ]
    assert found == []


def test_the_rule_finds_a_port_chosen_at_import() -> None:
    tree = ast.parse("PORT = free_port()\n\ndef f():\n    return free_port()\n")
    assert module_level_calls(tree, "free_port") == [1]
