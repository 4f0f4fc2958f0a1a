"""A private PostgreSQL server for tests: Debian's ``postgresql`` binaries (installed by
scripts/test.sh), a cluster in a temporary directory on a free loopback port, stopped at
the end of the session. PostgreSQL refuses to run as root, so as root the cluster runs
as the ``postgres`` user the package creates."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator

import pytest


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        pytest.fail(f"PostgreSQL's {name} is not installed (scripts/test.sh installs it)")
    return found[-1]


def _as_owner(command: list[str], user: str | None) -> list[str]:
    return ["runuser", "-u", user, "--", *command] if user else command


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The base URL (``postgresql://user@127.0.0.1:port``) of a running server."""
    user = "postgres" if os.geteuid() == 0 else None
    folder = tempfile.mkdtemp(prefix="deltaport-pg-")
    data = os.path.join(folder, "data")
    if user:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    role = user or pwd.getpwuid(os.geteuid()).pw_name
    subprocess.run(
        _as_owner([_bin("initdb"), "-D", data, "-A", "trust", "-U", role, "--no-sync"], user),
        check=True,
        capture_output=True,
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off"
    subprocess.run(
        _as_owner(
            [
                _bin("pg_ctl"),
                "-D",
                data,
                "-o",
                options,
                "-l",
                os.path.join(folder, "log"),
                "-w",
                "start",
            ],
            user,
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://{role}@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_owner([_bin("pg_ctl"), "-D", data, "-m", "immediate", "stop"], user),
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A new, empty database on the session's server."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    deadline = time.monotonic() + 10
    while True:
        try:
            psycopg.connect(f"{postgres_server}/{name}").close()
            break
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    return f"{postgres_server}/{name}"
