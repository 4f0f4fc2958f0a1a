"""The legacy Databricks CLI (``databricks-cli``, ``databricks unity-catalog ...``) against
the provider API of a real ``deltaport serve``: host and token from its environment
variables.

The CLI drops the port of its host (it builds ``scheme://hostname/api/``), so the admin
listener of this server listens on port 80 of a loopback address of its own (the tests run
as root, as CI does)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from admin_support import ADMIN_TOKEN
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import start_server, stop_server
from waiting import wait_until

CLI = Path(sys.executable).parent / "databricks"


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The admin listener's URL, without a port."""
    tmp = tmp_path_factory.mktemp("legacy-cli")
    url = f"sqlite:///{tmp}/catalog.db"
    SqlCatalog(url)
    host = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
    config = {
        "signingKey": "legacy-cli-key",
        "admin": {"host": host, "port": 80, "tokens": [ADMIN_TOKEN]},
    }
    sharing = start_server(config, tmp / "server", catalog=url)
    document = f"http://{host}/api/openapi.json"
    wait_until(
        lambda: httpx.get(document, timeout=1), 30, "the admin listener", ignore=(httpx.HTTPError,)
    )
    yield f"http://{host}"
    stop_server(sharing)


def _cli(admin: str, *args: str) -> Any:
    env = {
        **os.environ,
        "DATABRICKS_HOST": admin,
        "DATABRICKS_TOKEN": ADMIN_TOKEN,
        "DATABRICKS_CONFIG_FILE": "/nonexistent",
    }
    done = subprocess.run(
        [str(CLI), "unity-catalog", *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_the_legacy_cli_manages_shares_and_recipients(
    admin: str, admin_tables: dict[str, Path]
) -> None:
    s = admin
    assert _cli(s, "shares", "create", "--name", "cli_share")["name"] == "cli_share"
    table = str(admin_tables["left"])
    _cli(s, "shares", "add-table", "--share", "cli_share", "--table", table, "--shared-as", "eu.t")
    (obj,) = _cli(s, "shares", "get", "--name", "cli_share")["objects"]
    assert (obj["name"], obj["shared_as"]) == (table, "eu.t")
    assert "cli_share" in {share["name"] for share in _cli(s, "shares", "list")["shares"]}

    made = _cli(
        s,
        "recipients",
        "create",
        "--name",
        "cli_partner",
        "--allowed-ip-address",
        "127.0.0.1",
        "--property",
        "country=FR",
    )
    assert made["ip_access_list"] == {"allowed_ip_addresses": ["127.0.0.1"]}
    assert made["properties_kvpairs"] == {"properties": {"country": "FR"}}
    assert httpx.get(made["activation_url"]).json()["bearerToken"].startswith("dpt_")
    rotated = _cli(
        s,
        "recipients",
        "rotate-token",
        "--name",
        "cli_partner",
        "--existing-token-expire-in-seconds",
        "0",
    )
    assert rotated["activation_url"] != made["activation_url"]
    listed = _cli(s, "recipients", "list")["recipients"]
    assert "cli_partner" in {r["name"] for r in listed}
    _cli(s, "recipients", "delete", "--name", "cli_partner")
    _cli(s, "shares", "delete", "--name", "cli_share")
    assert (
        httpx.get(
            s + "/api/2.1/unity-catalog/shares/cli_share",
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        ).status_code
        == 404
    )
