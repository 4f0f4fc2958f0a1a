"""The JSON body of an error answered before any route (a body, path or header over its
limit), by the path's prefix: an API served in another error shape (the Iceberg catalog
on the sharing listener, the provider API in Unity Catalog's shape on the admin listener)
registers its prefix, and its clients get its shape; every other path gets deltaport's
own (``{"errorCode", "message"}``)."""

from __future__ import annotations

from collections.abc import Callable

from deltaport.protocol.errors import SharingError

Shape = Callable[[SharingError], object]


class ErrorShapes:
    """Error bodies by path prefix; called as ``shapes(path, error)`` by the limits."""

    def __init__(self) -> None:
        self._shapes: list[tuple[str, Shape]] = []

    def add(self, prefix: str, shape: Shape) -> None:
        """Answer paths at or below ``prefix`` (no trailing slash) in ``shape``."""
        self._shapes.append((prefix.rstrip("/"), shape))

    def __call__(self, path: str, error: SharingError) -> object:
        for prefix, shape in self._shapes:
            if path == prefix or path.startswith(prefix + "/"):
                return shape(error)
        return error.body()
