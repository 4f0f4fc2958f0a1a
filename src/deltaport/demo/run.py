"""``deltaport demo``: sample tables on local disk, a config and a profile, then the server.

A second demo must not break a running one: the port is checked before anything is
written, and a demo holds a lock on its directory while it serves, so that no other demo
rewrites the tables and the token the running one serves.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from deltaport.demo.samples import write_sample_tables

SHARE, SCHEMA = "demo", "sales"
LOCK_FILE = ".demo.lock"


class DemoError(Exception):
    """The demo cannot start; nothing was written."""


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _signing_key(config_path: Path) -> str:
    """The key of the demo's earlier configuration, else a new one: the demo keeps its own
    key, so its tokens and URLs outlive a restart and it never warns of a missing one."""
    try:
        key = yaml.safe_load(config_path.read_text(encoding="utf-8")).get("signingKey")
    except (OSError, yaml.YAMLError, AttributeError):
        key = None
    return key if isinstance(key, str) and key else secrets.token_urlsafe(32)


def prepare_demo(directory: str | Path, host: str, port: int) -> tuple[Path, Path]:
    """Write sample tables, ``server.yaml`` and ``profile.share`` under ``directory``;
    returns (config path, profile path)."""
    root = Path(directory).resolve()
    tables = write_sample_tables(root / "tables")
    token = secrets.token_urlsafe(24)
    config_path = root / "server.yaml"
    config: dict[str, Any] = {
        "version": 1,
        "host": host,
        "port": port,
        "endpoint": "/delta-sharing",
        "authorization": {"bearerToken": token},
        "signingKey": _signing_key(config_path),
        "iceberg": {"metadataDirectory": str(root / "iceberg")},
        "shares": [
            {
                "name": SHARE,
                "comment": "Sample tables written by deltaport demo",
                "schemas": [
                    {
                        "name": SCHEMA,
                        "tables": [
                            {
                                "name": name,
                                "location": str(path),
                                "historyShared": True,
                                "id": f"demo-{name}",
                            }
                            for name, path in tables.items()
                        ],
                    }
                ],
            }
        ],
    }
    _write_private(config_path, yaml.safe_dump(config, sort_keys=False))
    profile = {
        "shareCredentialsVersion": 1,
        "endpoint": f"http://{host}:{port}/delta-sharing",
        "icebergEndpoint": f"http://{host}:{port}/iceberg",
        "bearerToken": token,
    }
    profile_path = root / "profile.share"
    _write_private(profile_path, json.dumps(profile, indent=2) + "\n")
    return config_path, profile_path


def check_port(host: str, port: int) -> None:
    """Refuse a port another process listens on."""
    from deltaport.listeners.startup import ListenError, port_in_use

    try:
        busy = port_in_use(host, port)
    except ListenError as exc:
        raise DemoError(str(exc)) from None
    if busy:
        raise DemoError(
            f"port {port} on {host} is in use (a demo already running?): stop it, "
            "or choose another port with --port"
        )


@contextmanager
def demo_directory(directory: str | Path) -> Iterator[Path]:
    """The demo's directory, locked for as long as the demo serves it (the lock ends with
    the process, however it ends)."""
    root = Path(directory).resolve()
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
            raise DemoError(
                f"{root} is served by a running demo (pid {holder}): stop it, or use "
                "--dir for another directory"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield root
    finally:
        os.close(fd)


def run_demo(directory: str | Path, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Prepare the demo and serve it until interrupted; a port in use or a directory a
    running demo serves stops it before anything is written."""
    check_port(host, port)
    with demo_directory(directory) as root:
        _serve(root, host, port)


def _serve(root: Path, host: str, port: int) -> None:
    from deltaport.listeners import run

    config_path, profile_path = prepare_demo(root, host, port)
    url = f"{profile_path}#{SHARE}.{SCHEMA}.orders"
    print(f"Sample tables and config written to {config_path.parent}")
    print(f"Profile file: {profile_path}")
    print("Read a shared table (in another shell):")
    load = f"import deltaport; print(deltaport.load_as_pandas('{url}'))"
    print(f'  uv run --no-dev python -c "{load}"')
    print(f"  uv run --no-dev deltaport cat '{url}'")
    print(f"Serving share '{SHARE}' on http://{host}:{port}/delta-sharing (Ctrl-C to stop)")
    run(config_path, host=host, port=port)
