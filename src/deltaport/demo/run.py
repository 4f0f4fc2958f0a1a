"""``deltaport demo``: sample tables on local disk, a config and a profile, then the server."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

import yaml

from deltaport.demo.samples import write_sample_tables

SHARE, SCHEMA = "demo", "sales"


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
        "bearerToken": token,
    }
    profile_path = root / "profile.share"
    _write_private(profile_path, json.dumps(profile, indent=2) + "\n")
    return config_path, profile_path


def run_demo(directory: str | Path, host: str = "127.0.0.1", port: int = 8080) -> None:
    """Prepare the demo and serve it until interrupted."""
    from deltaport.listeners import run

    config_path, profile_path = prepare_demo(directory, host, port)
    url = f"{profile_path}#{SHARE}.{SCHEMA}.orders"
    print(f"Sample tables and config written to {config_path.parent}")
    print(f"Profile file: {profile_path}")
    print("Read a shared table (in another shell):")
    print(f"  uv run python -c \"import deltaport; print(deltaport.load_as_pandas('{url}'))\"")
    print(f"  uv run deltaport cat '{url}'")
    print(f"Serving share '{SHARE}' on http://{host}:{port}/delta-sharing (Ctrl-C to stop)")
    run(config_path, host=host, port=port)
