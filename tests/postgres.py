"""A private PostgreSQL server for tests: Debian's ``postgresql`` binaries (installed by
scripts/test.sh), a cluster in a temporary directory on a free loopback port, stopped at
the end of the session; a test may also run a cluster of its own and stop, start and
pause it (:class:`PostgresCluster`). PostgreSQL refuses to run as root, so as root the cluster runs
as the ``postgres`` user the package creates."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from waiting import wait_until


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        pytest.fail(f"PostgreSQL's {name} is not installed (scripts/test.sh installs it)")
    return found[-1]


class PostgresCluster:
    """A cluster in a temporary directory on a free loopback port, which a test may stop,
    start again (on the same port) and pause (SIGSTOP every process of it)."""

    def __init__(self) -> None:
        self._user = "postgres" if os.geteuid() == 0 else None
        self.folder = tempfile.mkdtemp(prefix="deltaport-pg-")
        self._data = os.path.join(self.folder, "data")
        if self._user:
            entry = pwd.getpwnam(self._user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        role = self._user or pwd.getpwuid(os.geteuid()).pw_name
        subprocess.run(
            self._as_owner(
                [_bin("initdb"), "-D", self._data, "-A", "trust", "-U", role, "--no-sync"]
            ),
            check=True,
            capture_output=True,
        )
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self._options = f"-h 127.0.0.1 -p {port} -k {self.folder} -c fsync=off"
        self.url = f"postgresql://{role}@127.0.0.1:{port}"
        """The base URL (``postgresql://user@127.0.0.1:port``)."""

    def start(self) -> None:
        """Start the cluster unless it is running."""
        status = subprocess.run(
            self._as_owner([_bin("pg_ctl"), "-D", self._data, "status"]), capture_output=True
        )
        if status.returncode != 0:
            log = os.path.join(self.folder, "log")
            self._pg_ctl("-o", self._options, "-l", log, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._pg_ctl("-m", mode, "-w", "stop")

    def pause(self) -> None:
        """Stop the postmaster and every backend (SIGSTOP): connections stay open and
        nothing answers."""
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self._processes():
            os.kill(pid, signal.SIGCONT)

    def remove(self) -> None:
        self.resume()
        self._pg_ctl("-m", "immediate", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _processes(self) -> list[int]:
        try:
            with open(os.path.join(self._data, "postmaster.pid")) as pid_file:
                postmaster = int(pid_file.readline())
        except FileNotFoundError:
            return []  # stopped
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
        return [postmaster, *(int(c) for c in children)]

    def _pg_ctl(self, *args: str, check: bool = True) -> None:
        subprocess.run(
            self._as_owner([_bin("pg_ctl"), "-D", self._data, *args]),
            check=check,
            capture_output=True,
        )

    def _as_owner(self, command: list[str]) -> list[str]:
        return ["runuser", "-u", self._user, "--", *command] if self._user else command


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The base URL (``postgresql://user@127.0.0.1:port``) of a running server."""
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster.url
    finally:
        cluster.remove()


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the session's server."""
    return new_database(postgres_server)


def new_database(server: str) -> str:
    """The URL of a new, empty database on ``server`` (a base URL)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')

    def connected() -> bool:
        psycopg.connect(f"{server}/{name}").close()
        return True

    wait_until(connected, 10, f"database {name}", ignore=(psycopg.OperationalError,))
    return f"{server}/{name}"
