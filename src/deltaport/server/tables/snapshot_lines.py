"""The file lines of snapshot answers (``/query`` without ``startingVersion``).

A slice of lines is the prepared per-file pieces of its rows (see
:mod:`deltaport.server.tables.snapshot_cache`) joined with freshly signed URLs and a constant
suffix (version, timestamp, expiry). URL expiries are rounded to steps
(:func:`deltaport.server.files.signing.url_expiry`), so a repeated request in the same step
gets the same bytes: :class:`AnswerCache` keeps the encoded answers of requests asked
more than once, within a byte budget, and serves them again without signing. A request
seen for the first time is not kept: most are one-off, and keeping a 40 MB answer takes
fresh memory while it is built (a tenth of a cold full query's server CPU).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.catalog.model import SharedTable
from deltaport.delta import Snapshot
from deltaport.delta.cache import TABLE_BUDGET, MemoryBudget
from deltaport.protocol.capabilities import DELTA
from deltaport.read.prefetch import ordered_map
from deltaport.server.answers.line_encoding import joined, json_strings, text_view
from deltaport.server.answers.ndjson import Chunk
from deltaport.server.files.signing import UrlSigner
from deltaport.server.tables.snapshot_cache import ROW_COLUMN, PreparedSnapshot, SnapshotCache
from deltaport.storage.local_urls import Rows, gathered, row_range

FILES_PER_SLICE = 1000
MAX_BLOCK_SLICES = 16
ANSWER_CACHE_BYTES = 256 * 2**20
"""Memory for reusable encoded answers (a 100,000-file answer takes about 45 MB)."""
ANSWER_KEYS_SEEN = 1024
"""How many recent answer keys :class:`AnswerCache` remembers to admit their repeats."""


class AnswerCache:
    """Encoded file lines of recent answers, least recently used dropped first once the
    total passes ``budget`` bytes, or when the process's one budget (``shared``) drops
    them. An entry only serves the snapshot object it came from. Only answers asked for
    before are admitted (see :meth:`admits`)."""

    def __init__(
        self, budget: int = ANSWER_CACHE_BYTES, shared: MemoryBudget = TABLE_BUDGET
    ) -> None:
        self.budget = budget
        self._shared = shared
        self._entries: OrderedDict[Hashable, tuple[Snapshot, list[Chunk], int]] = OrderedDict()
        self._bytes = 0
        self._seen: OrderedDict[Hashable, None] = OrderedDict()
        self._lock = threading.Lock()

    def admits(self, key: Hashable) -> bool:
        """Whether to keep the answer for ``key`` being built: only when ``key`` was asked
        for before (among the last :data:`ANSWER_KEYS_SEEN`); the first time, it is noted."""
        with self._lock:
            if key in self._seen:
                self._seen.move_to_end(key)
                return True
            self._seen[key] = None
            if len(self._seen) > ANSWER_KEYS_SEEN:
                self._seen.popitem(last=False)
            return False

    def get(self, key: Hashable, snapshot: Snapshot) -> list[Chunk] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] is not snapshot:
                return None
            self._entries.move_to_end(key)
        self._shared.touch(("answer", id(self), key))
        return entry[1]

    def put(self, key: Hashable, snapshot: Snapshot, chunks: list[Chunk]) -> None:
        size = sum(len(c) for c in chunks)
        if size > self.budget:
            return
        gone = []
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[2]
            self._entries[key] = (snapshot, chunks, size)
            self._bytes += size
            while self._bytes > self.budget:
                dropped_key, (_, _, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped
                gone.append(dropped_key)
        for dropped_key in gone:
            self._shared.release(("answer", id(self), dropped_key))
        self._shared.hold(("answer", id(self), key), size, lambda: self._forget(key, chunks))

    def _forget(self, key: Hashable, chunks: list[Chunk]) -> None:
        """Drop the answer of ``key`` (the shared budget's eviction), unless replaced."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[1] is chunks:
                del self._entries[key]
                self._bytes -= entry[2]


class SnapshotLines:
    """Encodes the file lines of snapshot answers, reusing prepared snapshots and answers."""

    def __init__(
        self,
        signer: UrlSigner,
        snapshots: SnapshotCache | None = None,
        answers: AnswerCache | None = None,
    ) -> None:
        self._signer = signer
        self._snapshots = snapshots or SnapshotCache(signer)
        self._answers = answers or AnswerCache()

    def prepared(
        self, table: SharedTable, snapshot: Snapshot, id_scheme: str | None = None
    ) -> PreparedSnapshot:
        """The snapshot's prepared pieces, with file ids in ``id_scheme`` (``fileidhash``)."""
        return self._snapshots.prepared(table, snapshot, id_scheme)

    def segments(
        self,
        table: SharedTable,
        prepared: PreparedSnapshot,
        files: pa.Table,
        response_format: str,
        version: int | None,
        timestamp: int | None,
        expires_at: int,
        selection: Hashable | None,
    ) -> Iterator[Chunk]:
        """Encoded lines of ``files`` (rows of ``prepared.files``), slice by slice.

        ``selection`` identifies which rows ``files`` holds (the hints, limit and page of
        the request); answers are reused only when it is given.
        """
        suffix = file_line_suffix(version, timestamp, expires_at * 1000)
        key = None
        if selection is not None:
            key = (
                table.key,
                prepared.snapshot.version,
                response_format,
                prepared.id_scheme,
                suffix,
                selection,
            )
            cached = self._answers.get(key, prepared.snapshot)
            if cached is not None:
                yield from cached
                return
            if not self._answers.admits(key):
                key = None  # a first request: its answer is not kept
        # every file of a snapshot whose pieces are not built yet: build them block by
        # block as the lines leave, and hand them to the snapshot at the end
        by_block = not prepared.whole or (
            files.num_rows == prepared.files.num_rows and not prepared.built(response_format)
        )
        parts: list[PreparedSnapshot] = []
        chunks: list[Chunk] = []
        size = 0
        for source, rows in _slices(prepared, files, by_block, response_format):
            chunk = self._encode(table, source, rows, response_format, suffix, expires_at)
            size += len(chunk)
            if key is not None and size <= self._answers.budget:
                chunks.append(chunk)
            if prepared.whole and source is not prepared and (not parts or parts[-1] is not source):
                parts.append(source)
            yield chunk
        if parts:
            prepared.adopt(parts)
        if key is not None and size <= self._answers.budget:
            self._answers.put(key, prepared.snapshot, chunks)

    def _encode(
        self,
        table: SharedTable,
        prepared: PreparedSnapshot,
        rows: pa.Array,
        response_format: str,
        suffix: str,
        expires_at: int,
    ) -> memoryview:
        numbers = rows.to_numpy()
        run = row_range(numbers)
        indices: Rows = numbers if run is None else run
        urls = self._signer.json_url_pieces(table, prepared.signable, indices, expires_at)
        if response_format != DELTA:
            pieces = [p if isinstance(p, str) else gathered(p, indices) for p in prepared.parquet]
            return text_view(joined(['{"file":{"url":"', *urls, '"', *pieces, suffix]))
        delta = prepared.delta
        dv_urls: pa.Array | str = ""
        if delta.dv_paths is not None:
            dv_urls = self._dv_urls(table, gathered(delta.dv_paths, indices), expires_at)
        return text_view(
            joined(
                [
                    gathered(delta.head, indices),
                    '"',
                    *urls,
                    '"',
                    gathered(delta.middle, indices),
                    dv_urls,
                    gathered(delta.tail, indices),
                    suffix,
                ]
            )
        )

    def _dv_urls(self, table: SharedTable, paths: pa.Array, expires_at: int) -> pa.Array | str:
        """Signed URLs (as JSON strings) of file-backed deletion vectors, each signed once."""
        distinct = pc.unique(paths.drop_null())
        if not len(distinct):
            return ""
        signed = pa.array(
            self._signer.sign_until(table, distinct.to_pylist(), expires_at), pa.string()
        )
        urls = signed.take(pc.index_in(paths, distinct))
        return pc.fill_null(json_strings(urls), "")


def _slices(
    prepared: PreparedSnapshot, files: pa.Table, by_block: bool, response_format: str
) -> Iterator[tuple[PreparedSnapshot, pa.Array]]:
    """Slices of :data:`FILES_PER_SLICE` rows of ``files``, each with the preparation whose
    rows they are. ``by_block``: preparations of blocks of ``files``, the first one slice
    long so the first lines leave early, each next one twice as long up to
    :data:`MAX_BLOCK_SLICES` slices (fewer, larger blocks cost fewer kernel calls); the
    next block is prepared in another thread while the lines of one are encoded (its
    Arrow kernels run in parallel with them)."""
    if not by_block:
        for offset in range(0, files.num_rows, FILES_PER_SLICE):
            part = files.slice(offset, FILES_PER_SLICE)
            yield prepared, part.column(ROW_COLUMN).combine_chunks()
        return

    def prepare(block: tuple[int, int]) -> PreparedSnapshot:
        offset, length = block
        part = prepared.subset(files.slice(offset, length))
        part.build(response_format)
        return part

    for source in ordered_map(prepare, _blocks(files.num_rows), workers=1, window=1):
        rows = source.files.column(ROW_COLUMN).combine_chunks()
        for start in range(0, len(rows), FILES_PER_SLICE):
            yield source, rows.slice(start, FILES_PER_SLICE)


def _blocks(count: int) -> list[tuple[int, int]]:
    """(offset, length) of the blocks of :func:`_slices` over ``count`` files."""
    blocks, offset, length = [], 0, FILES_PER_SLICE
    while offset < count:
        blocks.append((offset, min(length, count - offset)))
        offset += length
        length = min(2 * length, MAX_BLOCK_SLICES * FILES_PER_SLICE)
    return blocks


def file_line_suffix(version: int | None, timestamp: int | None, expiration_ms: int) -> str:
    """The members after a file's own ones, closing the ``file`` object and the line."""
    text = ""
    if version is not None:
        text += f',"version":{version}'
    if timestamp is not None:
        text += f',"timestamp":{timestamp}'
    return text + f',"expirationTimestamp":{expiration_ms}}}}}\n'
