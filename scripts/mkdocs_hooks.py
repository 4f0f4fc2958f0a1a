"""MkDocs hooks (``hooks:`` in mkdocs.yml).

A Sphinx role in a docstring (``:class:`X```, ``:func:`y```) is shown by mkdocstrings as
raw text, not as a link: docstrings link with Markdown references instead
(``[`ScanPlan`][deltaport.client.ScanPlan]``). Every page is checked once rendered, and a
raw role stops the build: an error rather than a warning, because ``--quiet`` drops
warnings before ``--strict`` counts them.
"""

from __future__ import annotations

import re
from typing import Any

from mkdocs.exceptions import PluginError

RAW_ROLE = re.compile(
    r"(?<![\w:-]):(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const|ref|doc|term)"
    r":(?:<code>|`)([^<`]*)"
)


def raw_roles(html: str) -> list[str]:
    """The Sphinx roles left as text in a rendered page (``:func:`name`` each)."""
    return [match.group(0).replace("<code>", "`") + "`" for match in RAW_ROLE.finditer(html)]


def on_post_page(output: str, page: Any, config: Any) -> str:
    roles = raw_roles(output)
    if roles:
        raise PluginError(
            f"{page.file.src_uri} shows {len(roles)} Sphinx role(s) as text "
            f"({', '.join(roles[:5])}): link with [`name`][dotted.path] instead"
        )
    return output
