"""One connection to the catalog's database, SQLite or PostgreSQL, with one SQL dialect.

Statements are written once with ``?`` placeholders and types both databases share
(``TEXT``, ``BIGINT``); for PostgreSQL the placeholders become ``%s``. SQLite needs nothing
beyond the standard library; PostgreSQL needs ``psycopg`` (``pip install deltaport[postgres]``).
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

Row = tuple[Any, ...]
_T = TypeVar("_T")
log = logging.getLogger(__name__)
_READ_ONLY = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"

STATEMENT_TIMEOUT_SECONDS = 5
"""PostgreSQL's ``statement_timeout`` on every connection."""
STALLED_SECONDS = 10
"""A query, read or transaction still unanswered after this long is cut off: a stopped
backend never applies its own statement timeout, so the client ends the wait itself."""
CONNECT_TIMEOUT_SECONDS = 10


class CatalogUrlError(ValueError):
    """The catalog URL names no database deltaport can open."""


class CatalogMissingError(RuntimeError):
    """The catalog's SQLite file does not exist (it is created only when asked to), or went
    away while in use (an operator's fault, not the caller's: a 500 on the admin API)."""


class DatabaseUnavailableError(Exception):
    """The database cannot be reached, or did not answer in time (locked, stopped,
    restarting). The connection is opened again on the next use."""


class DuplicateKeyError(Exception):
    """A row was refused because its key is taken (a primary or unique key): the
    database's own answer to two writers creating the same thing."""


class DatabaseFullError(Exception):
    """The database's disk (or its quota) is full: the write was refused and rolled back,
    and writes succeed again once space is freed, without a restart."""


class Database:
    """A connection used by one thread at a time (a lock serialises callers). A PostgreSQL
    connection lost to a restart is opened again on the next call.

    A SQLite file is created (mode 0600, which its ``-wal`` and ``-shm`` files take) only
    with ``create``; otherwise a missing file is :class:`CatalogMissingError`, and so is a
    file deleted or replaced while open (checked before every statement), so that no write
    is acknowledged into a file nobody will read again."""

    def __init__(self, url: str, create: bool = False) -> None:
        self.url = url
        self.kind = _kind(url)
        self._lock = threading.RLock()
        try:
            self._connection: Any = _connect(url, create)
        except Exception as exc:
            if _unavailable(exc):
                raise DatabaseUnavailableError(
                    f"the catalog database {displayed(url)} cannot be reached: {first_line(exc)}"
                ) from exc
            raise
        self._file = sqlite_path(url) if self.kind == "sqlite" else None
        self._identity = _identity(self._file) if self._file else None

    def _check_file(self) -> None:
        if self._file is not None and _identity(self._file) != self._identity:
            raise CatalogMissingError(
                f"the catalog database {self._file} was deleted or replaced while in use; "
                "restore it and restart deltaport"
            )

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows of one statement that changes nothing (run again on a new connection
        when the one it found had been lost: a read cannot apply twice)."""
        self._check_file()

        def run(connection: Any) -> list[Row]:
            cursor = connection.cursor()
            try:
                cursor.execute(self._dialect(sql), tuple(params))
                rows = cursor.fetchall() if cursor.description else []
            finally:
                cursor.close()
            if self.kind == "postgresql":
                connection.rollback()  # a read ends its snapshot
            return [tuple(r) for r in rows]

        with self._lock, self._guarded(run) as rows:
            return rows

    @contextmanager
    def read(self) -> Iterator[Transaction]:
        """Statements that see one consistent state and change nothing: a deferred SQLite
        transaction (in WAL mode it never waits for a writer's lock), a read-only
        PostgreSQL one. Cut off after :data:`STALLED_SECONDS`."""
        self._check_file()
        first = "BEGIN" if self.kind == "sqlite" else _READ_ONLY
        with self._lock, self._guarded(_begin(first)) as connection:
            cursor = connection.cursor()
            try:
                yield Transaction(self, cursor)
            finally:
                cursor.close()
                _quietly(connection.rollback)

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """Statements that all happen or none does.

        A connection lost while the database was away (a restart) is found by the
        transaction's first statement, before any of the caller's: the transaction then
        starts again on a new connection, once. A failure later (a statement of the
        caller's, or the commit, whose answer may be lost after the database applied it)
        is never retried here: it is :class:`DatabaseUnavailableError`."""
        self._check_file()
        first = "BEGIN IMMEDIATE" if self.kind == "sqlite" else "SELECT 1"
        with self._lock, self._guarded(_begin(first)) as connection:
            cursor = connection.cursor()
            try:
                yield Transaction(self, cursor)
                connection.commit()
            except BaseException:
                _quietly(connection.rollback)
                raise
            finally:
                cursor.close()

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    @contextmanager
    def _guarded(self, start: Callable[[Any], _T]) -> Iterator[_T]:
        """What ``start`` returns, run on the connection (opened again if it was lost),
        for one unit of work that a watchdog cuts off once stalled; connection failures
        become :class:`DatabaseUnavailableError`.

        ``start`` changes nothing the database keeps, so when it fails because a
        connection opened earlier was lost meanwhile (not cut off by the watchdog), it
        runs again, once, on a new connection."""
        watchdog: _Watchdog | None = None
        try:
            reused = not self._connection.closed
            if not reused:
                self._reconnect()
            watchdog = _Watchdog(self._connection, STALLED_SECONDS)
            try:
                started = start(self._connection)
            except Exception as exc:
                watchdog.stop()
                if not (reused and _lost(self._connection, exc) and not watchdog.fired):
                    raise
                log.info("the catalog database's connection was lost (%s): opening a new one", exc)
                self._reconnect()
                watchdog = _Watchdog(self._connection, STALLED_SECONDS)
                started = start(self._connection)
            yield started
        except Exception as exc:
            if _full(exc):
                raise DatabaseFullError(f"the catalog database's disk is full: {exc}") from exc
            if _unavailable(exc):
                raise DatabaseUnavailableError(
                    f"the catalog database is unavailable: {exc}"
                ) from exc
            if _read_only(exc):
                raise DatabaseUnavailableError(
                    f"the catalog database cannot be written (its file or directory is "
                    f"read-only for this user): {exc}"
                ) from exc
            raise
        finally:
            if watchdog is not None:
                watchdog.stop()

    def _reconnect(self) -> None:
        _quietly(self._connection.close)
        self._connection = _connect(self.url, create=False)

    def _dialect(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.kind == "postgresql" else sql


class Transaction:
    def __init__(self, database: Database, cursor: Any) -> None:
        self._database = database
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows ``sql`` answers; :class:`DuplicateKeyError` when it would write a row
        whose key is taken (the transaction is then to be rolled back)."""
        try:
            self._cursor.execute(self._database._dialect(sql), tuple(params))
        except Exception as exc:
            if _duplicate_key(exc):
                raise DuplicateKeyError(first_line(exc)) from exc
            raise
        return [tuple(r) for r in self._cursor.fetchall()] if self._cursor.description else []

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement for each of ``rows``, in one call (pipelined on PostgreSQL)."""
        self._cursor.executemany(self._database._dialect(sql), [tuple(r) for r in rows])


class _Watchdog:
    """Ends a stalled unit of work from another thread, from its creation until
    :meth:`stop`: SQLite's ``interrupt()``, or the PostgreSQL socket shut down under libpq
    (its wait then fails, and the connection is marked broken, to be opened again)."""

    def __init__(self, connection: Any, seconds: float) -> None:
        self._connection = connection
        self._done = False
        self.fired = False
        self._mutex = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut_off)
        self._timer.daemon = True
        self._timer.start()

    def stop(self) -> None:
        with self._mutex:
            self._done = True
        self._timer.cancel()

    def _cut_off(self) -> None:
        with self._mutex:
            if not self._done:
                self.fired = True
                self._connection.interrupt()


def _begin(first: str) -> Callable[[Any], Any]:
    """A start that runs the transaction's first statement (it opens the transaction)."""

    def start(connection: Any) -> Any:
        cursor = connection.cursor()
        try:
            cursor.execute(first)
        finally:
            cursor.close()
        return connection

    return start


def _lost(connection: Any, exc: Exception) -> bool:
    """``exc`` is a connection failure and ``connection`` is broken by it (a PostgreSQL
    server restarted or gone; SQLite has no connection to lose)."""
    return bool(connection.closed) and _unavailable(exc)


def _kind(url: str) -> str:
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        return "sqlite"
    if scheme in ("postgresql", "postgres"):
        return "postgresql"
    raise CatalogUrlError(
        f"unknown catalog URL scheme {scheme!r}: use sqlite:///PATH or postgresql://..."
    )


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def _connect(url: str, create: bool) -> Any:
    if _kind(url) == "sqlite":
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
        return _SqliteConnection(connection)
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise CatalogUrlError(
            "a PostgreSQL catalog needs psycopg: pip install deltaport[postgres]"
        ) from None
    given = conninfo_to_dict(url)
    timeout = {} if "connect_timeout" in given else {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
    postgres = psycopg.connect(url, **timeout)  # type: ignore[arg-type]
    postgres.execute(f"SET statement_timeout = {STATEMENT_TIMEOUT_SECONDS * 1000}")
    postgres.commit()
    return _PostgresConnection(postgres)


def _full(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL"
    return getattr(exc, "sqlstate", None) == "53100"  # PostgreSQL's disk_full


def _duplicate_key(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.IntegrityError):
        return getattr(exc, "sqlite_errorname", "") in (
            "SQLITE_CONSTRAINT_PRIMARYKEY",
            "SQLITE_CONSTRAINT_UNIQUE",
        )
    return getattr(exc, "sqlstate", None) == "23505"  # PostgreSQL's unique_violation


def _read_only(exc: Exception) -> bool:
    return getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY")


def _unavailable(exc: Exception) -> bool:
    if isinstance(exc, sqlite3.OperationalError):
        return "locked" in str(exc) or "interrupted" in str(exc)
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


def _quietly(action: Callable[[], None]) -> None:
    """A rollback that may find the connection gone already (it then has nothing to undo)."""
    with suppress(Exception):
        action()


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (libpq adds hints on lines of their own)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def displayed(url: str) -> str:
    """``url`` as logs and errors may show it: without a password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    user = f"{parts.username}@" if parts.username else ""
    return parts._replace(netloc=user + host).geturl()


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

    @property
    def closed(self) -> bool:
        return False

    def interrupt(self) -> None:
        self._connection.interrupt()

    def close(self) -> None:
        self._connection.close()


class _PostgresConnection:
    """A psycopg connection whose stalled wait another thread can end."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    @property
    def closed(self) -> bool:
        return bool(self._connection.closed)

    def cursor(self) -> Any:
        return self._connection.cursor()

    def commit(self) -> None:
        self._connection.commit()

    def rollback(self) -> None:
        self._connection.rollback()

    def interrupt(self) -> None:
        """Shut the socket down under libpq (closing it from here would not wake a thread
        waiting on it; shutting it down does)."""
        with suppress(Exception):  # the connection is gone already
            fd = self._connection.pgconn.socket
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._connection.close()
