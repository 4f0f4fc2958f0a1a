"""deltaport: Delta Sharing server, client, Spark connector and table differ.

The recipient functions of [`deltaport.client`][deltaport.client] are available here too, with the
official ``delta_sharing`` package's names (``deltaport.load_as_pandas(url)``). They are imported on
first use so that ``import deltaport`` (and the CLI) stays light.
"""

from __future__ import annotations

import importlib
from importlib.metadata import version
from typing import Any

__version__ = version("deltaport")

_CLIENT_EXPORTS = frozenset(
    {
        "SharingClient",
        "SharingError",
        "get_table_metadata",
        "get_table_protocol",
        "get_table_version",
        "load_as_arrow",
        "load_as_pandas",
        "load_as_polars",
        "load_table_changes_as_arrow",
        "load_table_changes_as_pandas",
        "load_table_changes_as_polars",
    }
)

__all__ = ["__version__", *sorted(_CLIENT_EXPORTS)]


def __getattr__(name: str) -> Any:
    if name in _CLIENT_EXPORTS:
        return getattr(importlib.import_module("deltaport.client"), name)
    raise AttributeError(f"module 'deltaport' has no attribute {name!r}")
