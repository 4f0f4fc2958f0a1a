"""What the docs say is missing is missing: a "Not supported yet" list names no console page
that the console has."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "src" / "deltaport" / "console" / "templates"


def _not_supported(page: Path) -> str:
    return page.read_text(encoding="utf-8").split("## Not supported yet", 1)[1].split("\n## ")[0]


def test_the_catalog_page_does_not_call_existing_console_pages_missing() -> None:
    assert (TEMPLATES / "manage" / "recipients.html").is_file()
    assert (TEMPLATES / "manage" / "share.html").is_file()  # where a share's grants are made
    missing = _not_supported(ROOT / "docs" / "server" / "catalog.md").lower()
    assert "console's pages for recipients" not in missing
    assert not ("console" in missing and "grants" in missing), missing
