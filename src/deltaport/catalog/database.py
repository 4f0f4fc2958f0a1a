"""One connection to the catalog's database, SQLite or PostgreSQL, with one SQL dialect.

Statements are written once with ``?`` placeholders and types both databases share
(``TEXT``, ``BIGINT``); for PostgreSQL the placeholders become ``%s``. SQLite needs nothing
beyond the standard library; PostgreSQL needs ``psycopg`` (``pip install deltaport[postgres]``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

Row = tuple[Any, ...]


class CatalogUrlError(ValueError):
    """The catalog URL names no database deltaport can open."""


class CatalogMissingError(RuntimeError):
    """The catalog's SQLite file does not exist (it is created only when asked to), or went
    away while in use (an operator's fault, not the caller's: a 500 on the admin API)."""


class Database:
    """A connection used by one thread at a time (a lock serialises callers).

    A SQLite file is created (mode 0600, which its ``-wal`` and ``-shm`` files take) only
    with ``create``; otherwise a missing file is :class:`CatalogMissingError`, and so is a
    file deleted or replaced while open (checked before every statement), so that no write
    is acknowledged into a file nobody will read again."""

    def __init__(self, url: str, create: bool = False) -> None:
        self.url = url
        self.kind, self._connection = _connect(url, create)
        self._file = sqlite_path(url) if self.kind == "sqlite" else None
        self._identity = _identity(self._file) if self._file else None
        self._lock = threading.RLock()

    def _check_file(self) -> None:
        if self._file is not None and _identity(self._file) != self._identity:
            raise CatalogMissingError(
                f"the catalog database {self._file} was deleted or replaced while in use; "
                "restore it and restart deltaport"
            )

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._check_file()
        with self._lock:
            cursor = self._connection.cursor()
            try:
                cursor.execute(self._dialect(sql), tuple(params))
                rows = cursor.fetchall() if cursor.description else []
            finally:
                cursor.close()
            if self.kind == "postgresql":
                self._connection.rollback()  # reads end their snapshot: see later commits
            return [tuple(r) for r in rows]

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Statements that all happen or none does."""
        self._check_file()
        with self._lock:
            cursor = self._connection.cursor()
            try:
                if self.kind == "sqlite":
                    cursor.execute("BEGIN IMMEDIATE")
                yield Transaction(self, cursor)
                self._connection.commit()
            except BaseException:
                self._connection.rollback()
                raise
            finally:
                cursor.close()

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def _dialect(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.kind == "postgresql" else sql


class Transaction:
    def __init__(self, database: Database, cursor: Any) -> None:
        self._database = database
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._cursor.execute(self._database._dialect(sql), tuple(params))
        return [tuple(r) for r in self._cursor.fetchall()] if self._cursor.description else []


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def _connect(url: str, create: bool) -> tuple[str, Any]:
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        path = sqlite_path(url)
        if not path.exists():
            if not create:
                raise CatalogMissingError(
                    f"there is no catalog database at {path}: create one with "
                    f"`deltaport catalog init --catalog {url}`, or restore the file"
                )
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        try:
            connection = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=30
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise CatalogUrlError(f"the catalog database {path} cannot be opened: {exc}") from None
        return "sqlite", _SqliteConnection(connection)
    if scheme in ("postgresql", "postgres"):
        try:
            import psycopg
        except ImportError:
            raise CatalogUrlError(
                "a PostgreSQL catalog needs psycopg: pip install deltaport[postgres]"
            ) from None
        return "postgresql", psycopg.connect(url)
    raise CatalogUrlError(
        f"unknown catalog URL scheme {scheme!r}: use sqlite:///PATH or postgresql://..."
    )


def sqlite_path(url: str) -> Path:
    """The file of ``sqlite:///relative/path`` or ``sqlite:////absolute/path``."""
    rest = url[len("sqlite://") :]
    if not rest.startswith("/") or len(rest) < 2:
        raise CatalogUrlError(f"a SQLite catalog URL is sqlite:///PATH, got {url!r}")
    return Path(rest[1:])


class _SqliteConnection:
    """sqlite3 in autocommit mode with explicit transactions (BEGIN IMMEDIATE takes the
    write lock at once, so two writers never deadlock on an upgrade)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def cursor(self) -> sqlite3.Cursor:
        return self._connection.cursor()

    def commit(self) -> None:
        if self._connection.in_transaction:
            self._connection.execute("COMMIT")

    def rollback(self) -> None:
        if self._connection.in_transaction:
            self._connection.execute("ROLLBACK")

    def close(self) -> None:
        self._connection.close()
