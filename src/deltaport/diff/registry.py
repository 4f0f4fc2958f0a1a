"""Differs by table format, found through the ``deltaport.differs`` entry-point group.

A differ is a class with a ``format_name``, ``detect(location, storage_options)`` and
``diff(left_uri, right_uri, *, base_version, limit, page_token, storage_options)``.
Delta is built in and always asked first; other formats plug in from other packages::

    [project.entry-points."deltaport.differs"]
    iceberg = "mypackage.diff:IcebergDiffer"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import ClassVar, Protocol

from deltaport.diff.base.errors import DiffError, UnknownTableFormatError
from deltaport.diff.base.model import TableDiff

ENTRY_POINT_GROUP = "deltaport.differs"


class TableDiffer(Protocol):
    format_name: ClassVar[str]

    def detect(self, location: str, storage_options: Mapping[str, str] | None = None) -> bool: ...

    def diff(
        self,
        left_uri: str,
        right_uri: str,
        *,
        base_version: int | None = None,
        limit: int = 1000,
        page_token: str | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> TableDiff: ...


def _builtin_delta() -> type[TableDiffer]:
    from deltaport.diff.history.delta_differ import DeltaDiffer

    return DeltaDiffer


def registered_formats() -> dict[str, Callable[[], type[TableDiffer]]]:
    """Loaders of the registered differs by format name, Delta first."""
    loaders: dict[str, Callable[[], type[TableDiffer]]] = {"delta": _builtin_delta}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in loaders:
            loaders[ep.name] = _entry_point_loader(ep.name, ep.load)
    return loaders


def _entry_point_loader(name: str, load: Callable[[], object]) -> Callable[[], type[TableDiffer]]:
    def loader() -> type[TableDiffer]:
        try:
            differ = load()
        except Exception as exc:
            raise DiffError(f"the differ plugin {name!r} failed to load: {exc}") from exc
        if not isinstance(differ, type):
            raise DiffError(f"the differ plugin {name!r} is not a class")
        return differ

    return loader


def get_differ(table_format: str) -> TableDiffer:
    """The differ registered for ``table_format``."""
    loaders = registered_formats()
    loader = loaders.get(table_format.lower())
    if loader is None:
        known = ", ".join(sorted(loaders))
        raise UnknownTableFormatError(
            f"no differ for table format {table_format!r} (registered: {known})"
        )
    return loader()()


def detect_differ(
    left_uri: str, right_uri: str, storage_options: Mapping[str, str] | None = None
) -> TableDiffer:
    """The first registered differ that recognises a table at either location."""
    for loader in registered_formats().values():
        differ = loader()()
        if differ.detect(left_uri, storage_options) or differ.detect(right_uri, storage_options):
            return differ
    raise UnknownTableFormatError(
        f"no registered differ recognises a table at {left_uri} or {right_uri}"
    )
