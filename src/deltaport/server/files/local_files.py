"""Table files on the server's disk, opened for the signed URLs that name them."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from typing import NamedTuple

from deltaport.protocol.errors import SharingError
from deltaport.storage.local_urls import (
    InvalidSignatureError,
    LocalUrlSigner,
    PathEscapeError,
    resolve_local_file,
)
from deltaport.storage.uri import Location

_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
"""Opening a FIFO placed among the table's files must not block the event loop."""


Admit = Callable[[str, Mapping[str, str], str | None], bool]
"""Whether a signed URL of a table may still be answered to a client at an address (its
recipient's grant; a refused address raises a 403 :class:`SharingError`)."""


class FileError(Exception):
    """Why a signed file URL is not answered with its file: a status, code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def _no_such_file() -> FileError:
    return FileError(404, "RESOURCE_DOES_NOT_EXIST", "the file does not exist")


class OpenFile(NamedTuple):
    """A table file opened for a signed URL: its descriptor (the caller closes it), its
    ``fstat`` and its resolved local path."""

    fd: int
    stat: os.stat_result
    path: str


class LocalFiles:
    """Opens the table files named by signed URLs, after checking the signature."""

    def __init__(
        self,
        signer: LocalUrlSigner,
        resolve_table_root: Callable[[str], Location | None],
        admit: Admit | None = None,
    ) -> None:
        self.signer = signer
        self._resolve_table_root = resolve_table_root
        self._admit = admit

    def open(
        self, table_key: str, relative_path: str, query: dict[str, str], client: str | None
    ) -> OpenFile:
        """The regular file ``relative_path`` of the table, for a client at ``client``, or
        :class:`FileError`."""
        try:
            self.signer.verify(table_key, relative_path, query)
        except InvalidSignatureError as exc:
            raise FileError(403, "PERMISSION_DENIED", str(exc)) from None
        try:
            root = self._resolve_table_root(table_key)
            admit = self._admit
            if root is not None and admit is not None and not admit(table_key, query, client):
                root = None  # its recipient may no longer read it: as if it were not shared
        except SharingError as exc:  # the catalog cannot say (503 while its database is away)
            raise FileError(exc.status, exc.error_code, exc.message) from None
        if root is None or root.kind != "local":
            raise FileError(404, "RESOURCE_DOES_NOT_EXIST", "the table is not served here")
        try:
            path = resolve_local_file(root, relative_path)
        except PathEscapeError as exc:
            raise FileError(403, "PERMISSION_DENIED", str(exc)) from None
        try:
            fd = os.open(path, os.O_RDONLY | _NONBLOCK)
        except OSError:
            raise _no_such_file() from None
        stat_result = os.fstat(fd)
        if not stat.S_ISREG(stat_result.st_mode):
            os.close(fd)
            raise _no_such_file()
        return OpenFile(fd, stat_result, path)


class Part(NamedTuple):
    """Bytes ``[begin, end)`` of a file; ``ranged``: asked for with a Range header (206)."""

    begin: int
    end: int
    ranged: bool

    @property
    def length(self) -> int:
        return self.end - self.begin


def read_part(fd: int, part: Part) -> bytes:
    """The bytes of ``part`` (fewer if the file shrank since)."""
    chunks = []
    offset, length = part.begin, part.length
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
