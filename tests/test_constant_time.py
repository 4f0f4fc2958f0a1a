"""Secrets are compared in constant time: no ``==`` / ``!=`` on a value named like one.

Every comparison under ``src/`` whose side is named ``*token``, ``*secret``, ``*mac``,
``*signature``, ``*sig``, ``*password``, ``*hash`` or ``*digest`` fails this test: such
values go through :func:`hmac.compare_digest` (or are looked up by their keyed hash, which
a guesser cannot compute). Comparisons with literals and constants (``== TOKEN``, a kind)
are not secrets and pass.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
SECRET_NAME = re.compile(r"(^|_)(secret|mac|signature|sig|password|token|hash|digest)$")
NOT_SECRETS = {"file_id_hash"}
"""Names that match but hold no secret: ``file_id_hash`` is the name of a hash function
(the ``fileidhash`` capability)."""


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return None


def _secret_like(node: ast.expr) -> bool:
    name = _name(node)
    if name is None or name.isupper() or name in NOT_SECRETS:
        return False
    return bool(SECRET_NAME.search(name.lower()))


def equality_on_secrets(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        if not any(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            continue
        sides = [node.left, *node.comparators]
        if any(isinstance(side, ast.Constant) for side in sides):
            continue
        if any(_secret_like(side) for side in sides):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_sees_a_plain_comparison() -> None:
    assert equality_on_secrets("ok = given_token == stored.token\n") == [
        "1: given_token == stored.token"
    ]
    assert equality_on_secrets("ok = mac != expected_mac\n") == ["1: mac != expected_mac"]
    assert equality_on_secrets("ok = kind == BEARER_TOKEN or t.token == None\n") == []


def test_no_secret_is_compared_with_equality() -> None:
    found = [
        f"{path.relative_to(SRC)}:{hit}"
        for path in sorted(SRC.rglob("*.py"))
        for hit in equality_on_secrets(path.read_text())
    ]
    assert found == [], "compare secrets with hmac.compare_digest:\n" + "\n".join(found)
