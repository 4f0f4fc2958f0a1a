"""The documentation site keeps up with the code: every configuration key and every
errorCode the server can answer is documented, and the configuration and profile examples
load."""

from __future__ import annotations

import importlib.util
import json
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import msgspec
import pytest
import yaml
from mkdocs.exceptions import PluginError

from deltaport.config import loading
from deltaport.config import model as config
from deltaport.protocol import errors
from deltaport.protocol.profile import parse_profile

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
CONFIG_PAGE = DOCS / "server" / "configuration.md"
ERRORS_PAGE = DOCS / "errors.md"


def _struct_types(annotation: object) -> Iterator[type[msgspec.Struct]]:
    """The msgspec structs an annotation refers to (through lists, dicts and unions)."""
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _struct_types(arg)


def config_keys() -> set[str]:
    """The YAML names of every field of ServerConfig and of the structs inside it."""
    keys: set[str] = set()
    pending: list[type[msgspec.Struct]] = [config.ServerConfig]
    seen: set[type[msgspec.Struct]] = set()
    while pending:
        struct = pending.pop()
        if struct in seen:
            continue
        seen.add(struct)
        hints = typing.get_type_hints(struct)
        for field in msgspec.structs.fields(struct):
            keys.add(field.encode_name)
            pending.extend(_struct_types(hints[field.name]))
    return keys


def test_config_keys_are_read_from_the_code() -> None:
    keys = config_keys()
    assert {"publicUrl", "historyShared", "certificateKeyFile", "bearerToken", "prefix"} <= keys


@pytest.mark.parametrize("key", sorted(config_keys() | config.REFERENCE_KEYS_WITHOUT_EFFECT))
def test_every_config_key_is_in_the_configuration_reference(key: str) -> None:
    page = CONFIG_PAGE.read_text(encoding="utf-8")
    assert re.search(rf"`(?:[\w.\[\]]*\.)?{re.escape(key)}`", page), (
        f"configuration key {key!r} is not documented in {CONFIG_PAGE.relative_to(ROOT)}"
    )


@pytest.mark.parametrize(
    "page", [CONFIG_PAGE, DOCS / "getting-started.md", ROOT / "README.md"], ids=lambda p: p.name
)
def test_the_configuration_examples_load(page: Path) -> None:
    page_text = page.read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", page_text, flags=re.DOTALL)
    assert blocks
    environ = {name: "x" for name in re.findall(r"\$\{(\w+)\}", page_text)}
    for block in blocks:
        loaded = loading.parse_config(yaml.safe_load(block), environ)
        assert loaded.shares


def server_error_codes() -> dict[str, set[int]]:
    """errorCode -> statuses: the protocol's error classes, and the codes the file
    endpoints write themselves (``FileError(403, "PERMISSION_DENIED", ...)``)."""
    codes: dict[str, set[int]] = {}
    for value in vars(errors).values():
        if isinstance(value, type) and issubclass(value, errors.SharingError):
            codes.setdefault(value.error_code, set()).add(value.status)
    literal = re.compile(r"(?:FileError|_error)\(\s*(\d{3}),\s*\"([A-Z_]+)\"")
    for path in (ROOT / "src" / "deltaport").rglob("*.py"):
        for status, code in literal.findall(path.read_text(encoding="utf-8")):
            codes.setdefault(code, set()).add(int(status))
    return codes


def test_error_codes_are_read_from_the_code() -> None:
    codes = server_error_codes()
    assert codes["RESOURCE_DOES_NOT_EXIST"] == {404}
    assert 413 in codes["INVALID_PARAMETER_VALUE"]


@pytest.mark.parametrize(("code", "statuses"), sorted(server_error_codes().items()))
def test_every_error_code_is_in_the_error_reference(code: str, statuses: set[int]) -> None:
    page = ERRORS_PAGE.read_text(encoding="utf-8")
    documented = {
        int(row.group(1))
        for row in re.finditer(rf"^\| (\d{{3}}) \| `{code}` \|", page, flags=re.MULTILINE)
    }
    missing = statuses - documented
    assert not missing, (
        f"errorCode {code} with status {sorted(missing)} has no row in "
        f"{ERRORS_PAGE.relative_to(ROOT)}"
    )


@pytest.mark.parametrize("page", ["getting-started.md", "reading.md", "server/operating.md"])
def test_profile_examples_parse(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL) if "shareCr" in b]
    assert blocks
    for block in blocks:
        parse_profile(json.loads(block))


def test_readme_links_into_the_docs_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", readme)
    assert "docs/server/configuration.md" in targets
    missing = sorted({t for t in targets if not (ROOT / t).is_file()})
    assert not missing, f"README.md links to missing pages: {missing}"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts/mkdocs_hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_build_refuses_a_raw_sphinx_role() -> None:
    hooks = _hooks()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/client.md"))
    rendered = "<p>returns a picklable :class:<code>ScanPlan</code> of files</p>"
    assert hooks.raw_roles(rendered) == [":class:`ScanPlan`"]
    with pytest.raises(PluginError, match=re.escape("reference/client.md shows 1 Sphinx role")):
        hooks.on_post_page(rendered, page, None)
    linked = '<p>a <a href="#deltaport.client.ScanPlan"><code>ScanPlan</code></a>, 12:30</p>'
    assert hooks.on_post_page(linked, page, None) == linked
    assert "hooks:\n  - scripts/mkdocs_hooks.py" in (ROOT / "mkdocs.yml").read_text()


REFERENCE_SOURCES = ["client", "delta", "read", "diff", "spark", "direct.py", "server/__init__.py"]
"""What the API reference pages render (docs/reference/*.md)."""


def test_the_api_reference_docstrings_link_rather_than_use_sphinx_roles() -> None:
    package = ROOT / "src" / "deltaport"
    files = [
        f
        for name in REFERENCE_SOURCES
        for f in ([package / name] if name.endswith(".py") else (package / name).rglob("*.py"))
    ]
    hooks = _hooks()
    found = [
        f"{f.relative_to(ROOT)}: {role}"
        for f in files
        for role in hooks.raw_roles(f.read_text(encoding="utf-8"))
    ]
    assert not found, found


def test_every_image_is_shown_on_a_page() -> None:
    pages = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    unused = [
        image.name for image in (DOCS / "images").iterdir() if f"images/{image.name}" not in pages
    ]
    assert not unused, f"images no page shows: {unused}"


def test_no_page_tells_to_install_from_pypi() -> None:
    """deltaport is not on PyPI yet: the install lines are a clone or a built wheel."""
    pages = [ROOT / "README.md", *DOCS.rglob("*.md")]
    told = [
        f"{page.relative_to(ROOT)}: {line.strip()}"
        for page in pages
        for line in page.read_text(encoding="utf-8").splitlines()
        if re.search(r"pip install \"?deltaport(\[|\"|\s*$|\s+#)", line)
    ]
    assert not told, told
