"""Fetching many small files of a scan in one request, where the server offers it.

A deltaport server names a file batch endpoint in its query answers for the tables it
serves itself (``deltaport.protocol.file_batch``). Runs of files that are small and
whose URLs lie below that endpoint are then fetched a batch at a time: one request instead
of one per file, which on a table of small files is most of the time of a read. Files
are only ever sent to the endpoint their own URLs point below. Anything a batch does not
deliver (a refused URL, a file too big, a failed request) is fetched on its own, the
usual way, with its retries and URL refreshes.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import msgspec

from deltaport.client.base.errors import UrlExpiredError
from deltaport.client.base.models import RemoteFile
from deltaport.client.files.downloads import Body, Downloads
from deltaport.client.files.remote_file import FetchedFile, FileReader
from deltaport.protocol.file_batch import (
    FILE_MAX_BYTES,
    MAX_FILES,
    FrameError,
    frames,
)

BATCH_FILE_MAX_BYTES = 4 * 1024 * 1024
"""Bigger files are fetched on their own: one request costs little next to their bytes,
and they are read while others download."""
BATCH_MAX_BYTES = 8 * 1024 * 1024
BATCH_MAX_FILES = 64
"""A batch holds at most this many files: enough to make the per-request cost small,
few enough that a scan has many batches to fetch and decode at once."""


def batched_files(
    files: Sequence[RemoteFile], batch_url: str | None
) -> list[tuple[RemoteFile, ...]]:
    """``files`` in order, in groups to fetch together: runs of files a batch can carry
    (at most ``BATCH_MAX_FILES`` files and ``BATCH_MAX_BYTES`` bytes each), and
    every other file on its own."""
    if batch_url is None:
        return [(file,) for file in files]
    prefix = batch_url.rstrip("/") + "/"
    limit = min(BATCH_FILE_MAX_BYTES, FILE_MAX_BYTES)
    max_files = min(BATCH_MAX_FILES, MAX_FILES)
    groups: list[tuple[RemoteFile, ...]] = []
    run: list[RemoteFile] = []
    run_bytes = 0
    for file in files:
        if not (file.url.startswith(prefix) and 0 <= file.size <= limit):
            if run:
                groups.append(tuple(run))
                run, run_bytes = [], 0
            groups.append((file,))
            continue
        if run and (len(run) >= max_files or run_bytes + file.size > BATCH_MAX_BYTES):
            groups.append(tuple(run))
            run, run_bytes = [], 0
        run.append(file)
        run_bytes += file.size
    if run:
        groups.append(tuple(run))
    return groups


def fetch_batch(downloads: Downloads, batch_url: str, urls: Sequence[str]) -> list[bytes | None]:
    """The content of each of ``urls`` fetched in one batch request, or None for those
    the batch did not deliver (all of them when the request failed)."""
    missing: list[bytes | None] = [None] * len(urls)
    body = msgspec.json.encode({"files": list(urls)})
    try:
        answer = downloads.post(batch_url, body, "application/json")
    except httpx.TransportError:
        return missing
    if not isinstance(answer, Body) or answer.status != 200:
        return missing
    contents: list[bytes | None] = []
    try:
        for status, content in frames(answer.content):
            contents.append(bytes(content) if status == 200 else None)
    except FrameError:
        return missing
    return contents if len(contents) == len(urls) else missing


def fetched_in_batch(
    reader: FileReader, batch_url: str, files: Sequence[RemoteFile]
) -> list[FetchedFile | None]:
    """``files`` fetched in one batch request, with their deletion vectors; None for each
    file the batch did not deliver, or whose deletion vector URL has expired (to be
    fetched on its own)."""
    contents = fetch_batch(reader.downloads, batch_url, [file.url for file in files])
    fetched: list[FetchedFile | None] = []
    for file, data in zip(files, contents, strict=True):
        try:
            fetched.append(None if data is None else reader.fetched(file, data))
        except UrlExpiredError:
            fetched.append(None)
    return fetched
