"""A copy of the catalog database (a backup, a replica's disk) is not a credential: with
everything in it, an attacker can neither find nor compute a bearer token, an OAuth client
secret or access token, or an activation link that a real server on that catalog accepts.
Page tokens, refresh tokens and file URLs are signed with the server's signing key, which
the copy does not hold either (console sessions live in the server's memory only)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from corpus import corpus_table
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH
from deltaport.cli import main as cli
from sharing_server import RunningServer, start_server, stop_server
from waiting import wait_until

SIGNING_KEY = "copy-test-signing-key-77c1"
ENDPOINT = "https://sharing.example.com/delta-sharing"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    tmp = tmp_path_factory.mktemp("copy")
    url = f"sqlite:///{tmp}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    location = str(corpus_table("dat__basic_append").path)
    assert cli(["table", "add", "s.sc.t", location, "--catalog", url]) == 0
    server = start_server({"catalog": url, "signingKey": SIGNING_KEY}, tmp / "server")
    yield server, tmp / "catalog.db"
    stop_server(server)


def _copy(database: Path, into: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of a byte copy of the database file (and its WAL)."""
    for suffix in ("", "-wal"):
        if Path(f"{database}{suffix}").exists():
            shutil.copy(f"{database}{suffix}", f"{into}{suffix}")
    with sqlite3.connect(into) as db:
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {name: db.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}


def _answers(server: RunningServer, token: str) -> None:
    """Wait for the server to accept ``token`` (it polls the catalog)."""

    def accepted() -> bool:
        with server.client(token) as client:
            return client.get("/shares").status_code == 200

    wait_until(accepted, 10, "the server to accept the token")


def test_a_copy_of_the_catalog_yields_no_working_credential(
    served: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    server, database = served
    store = SqlCatalog(f"sqlite:///{database}")
    bearer = store.create_recipient("b", endpoint=ENDPOINT)
    oauth = store.create_recipient("o", endpoint=ENDPOINT, authentication_type=OAUTH)
    link = store.create_recipient_with_link("l", endpoint=ENDPOINT)
    for name in ("b", "o", "l"):
        store.grant("s", name)
    assert oauth.client_id is not None
    _answers(server, bearer.token)
    basic = base64.b64encode(f"{oauth.client_id}:{oauth.token}".encode()).decode()
    granted = httpx.post(
        server.url + "/oauth/token",
        data={"grant_type": "client_credentials"},
        headers={"Authorization": f"Basic {basic}"},
    )
    assert granted.status_code == 200, granted.text
    genuine = granted.json()["access_token"]
    _answers(server, genuine)

    copy = _copy(database, tmp_path / "stolen.db")
    text = repr(copy)
    server_key = hashlib.sha256(SIGNING_KEY.encode()).digest()
    for secret in (bearer.token, oauth.token, link.token, genuine, SIGNING_KEY):
        assert secret not in text
    assert server_key.hex() not in text

    (token_key,) = [bytes.fromhex(v) for k, v in copy["deltaport_meta"] if k == "token_key"]
    (client_id,) = [row[0] for row in copy["oauth_clients"]]
    access_key = hmac.digest(token_key, b"oauth-access-tokens", "sha256")
    body = f"dpa_{client_id}.{int(time.time()) + 10 * 365 * 86400}"
    forged = f"{body}.{hmac.digest(access_key, body.encode(), 'sha256').hex()}"
    with server.client(forged) as client:
        assert client.get("/shares").status_code == 401
    _answers(server, genuine)
