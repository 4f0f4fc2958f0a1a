"""Bounds on a request's head: the segments of its path (:class:`PathLimit`) and the size
of its headers (:class:`HeaderLimit`).

The HTTP server hands over paths of about 65 KB and headers of any size. A path with a
segment longer than any a valid request has (a table's ``share.schema.table`` of valid
names, at most 767 characters; an asynchronous query's id after ``queries``) is answered
``414`` with errorCode ``REQUEST_PATH_TOO_LONG``, and a request whose header names and
values add up to more than :data:`MAX_HEADER_BYTES` ``431`` with errorCode
``REQUEST_HEADER_TOO_LARGE``, before any route, authentication included, looks at them.
Nothing of such a request is kept: no audit record, no count of a failed authentication.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.types import ASGIApp, Receive, Scope, Send

from deltaport.protocol.errors import PathTooLongError, RequestHeaderTooLargeError, SharingError
from deltaport.protocol.names import MAX_FULL_NAME_LENGTH
from deltaport.web.body_limit import refuse

MAX_HEADER_BYTES = 16 * 1024


class PathLimit:
    """ASGI middleware refusing a path with a segment longer than ``limit`` characters
    (decoded); the segment after one named in ``longer`` may be as long as it says (the
    sharing listener's query ids, after ``queries``). ``shape`` gives the error's JSON body
    for a path, as :class:`~deltaport.web.body_limit.BodyLimit`'s does."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int = MAX_FULL_NAME_LENGTH,
        longer: Mapping[str, int] | None = None,
        shape: Callable[[str, SharingError], object] | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.longer = dict(longer or {})
        self.shape = shape

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and len(scope["path"]) > self.limit:
            longest = self._longest_over(scope["path"])
            if longest is not None:
                error = PathTooLongError(
                    f"a segment of the path is {longest} characters long; at most "
                    f"{self.limit} are allowed (a table's full name)"
                )
                body = self.shape(scope["path"], error) if self.shape else None
                await refuse(error, send, body)
                return
        await self.app(scope, receive, send)

    def _longest_over(self, path: str) -> int | None:
        """The length of the first segment of ``path`` over its limit, or None."""
        before = ""
        for segment in path.split("/"):
            if len(segment) > self.longer.get(before, self.limit):
                return len(segment)
            before = segment
        return None


class HeaderLimit:
    """ASGI middleware refusing requests whose headers pass ``limit`` bytes. ``shape`` gives
    the error's JSON body for a path, as :class:`~deltaport.web.body_limit.BodyLimit`'s does."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int = MAX_HEADER_BYTES,
        shape: Callable[[str, SharingError], object] | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.shape = shape

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _header_bytes(scope) > self.limit:
            error = RequestHeaderTooLargeError(
                f"the request headers are larger than {self.limit} bytes"
            )
            await refuse(error, send, self.shape(scope["path"], error) if self.shape else None)
            return
        await self.app(scope, receive, send)


def _header_bytes(scope: Scope) -> int:
    return sum(len(name) + len(value) for name, value in scope["headers"])
