"""Activation links on a real server on a catalog database: a recipient created with
``--activation`` (or ``"activation": true`` through the admin API) gets its profile from
the link's first download; a second download, an expired link and an unknown one answer
404; a download from outside the recipient's IP access list answers 403 and leaves the link
usable."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

import deltaport
from deltaport.catalog.recipient_access import ACTIVATION_INFO_PATH, ACTIVATION_PATH
from deltaport.cli import main as cli
from sharing_server import RunningServer, free_port, start_server, stop_server
from waiting import wait_until

LIVE_SECONDS = 5
ADMIN_TOKEN = "activation-admin-token-3b9d"


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, LIVE_SECONDS, "the catalog's change to reach the server")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, str, Path]]:
    tmp = tmp_path_factory.mktemp("activation")
    url = f"sqlite:///{tmp}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    write_deltalake(str(tmp / "t"), pa.table({"id": [1, 2, 3]}))
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    assert cli(["table", "add", "s.sc.t", str(tmp / "t"), "--catalog", url]) == 0
    admin_port = free_port()
    config = {
        "catalog": url,
        "signingKey": "activation-key",
        "admin": {"port": admin_port, "tokens": [ADMIN_TOKEN]},
    }
    server = start_server(config, tmp / "server")
    admin = f"http://127.0.0.1:{admin_port}"
    _eventually(lambda: _answers(admin + "/api/openapi.json"))
    yield server, admin, tmp
    stop_server(server)


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
    except httpx.HTTPError:
        return False
    return True


def _link(
    server: RunningServer, tmp: Path, capsys: pytest.CaptureFixture[str], name: str, *args: str
) -> str:
    """``recipient create NAME --activation``, granted share s; the link it prints."""
    url = f"sqlite:///{tmp}/catalog.db"
    created = ["recipient", "create", name, "--activation", "--endpoint", server.url, *args]
    capsys.readouterr()
    assert cli([*created, "--catalog", url]) == 0
    printed = capsys.readouterr().out
    assert cli(["share", "grant", "s", "--to", name, "--catalog", url]) == 0
    link = printed.splitlines()[0]
    assert "cannot be used again" in printed
    return link


def test_a_link_gives_the_profile_once(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, _, tmp = setup
    link = _link(server, tmp, capsys, "once")
    token = link.rsplit("/", 1)[1]
    assert link == f"{server.base}{ACTIVATION_PATH}/{token}"
    info = f"{server.base}{ACTIVATION_INFO_PATH}/{token}"
    assert httpx.get(info).status_code == 200
    first = httpx.get(link)
    assert first.status_code == 200, first.text
    assert first.headers["cache-control"] == "no-store"
    profile = first.json()
    assert profile["shareCredentialsVersion"] == 1
    assert profile["endpoint"] == server.url
    assert profile["bearerToken"].startswith("dpt_")
    again = httpx.get(link)
    assert again.status_code == 404
    assert again.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    assert httpx.get(info).status_code == 404
    with server.client(profile["bearerToken"]) as client:
        _eventually(lambda: client.get("/shares").status_code == 200)
    path = tmp / "once.share"
    path.write_text(json.dumps(profile))
    frame = deltaport.load_as_pandas(f"{path}#s.sc.t")
    assert sorted(frame["id"]) == [1, 2, 3]


def test_unknown_and_expired_links_answer_404(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, _, tmp = setup
    for token in ("nope", "x" * 200):
        unknown = httpx.get(f"{server.base}{ACTIVATION_PATH}/{token}")
        assert unknown.status_code == 404
        assert unknown.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    link = _link(server, tmp, capsys, "late")
    with sqlite3.connect(tmp / "catalog.db") as db:
        db.execute("UPDATE activation_links SET expires_at = 1 WHERE recipient_key = 'late'")
    assert httpx.get(link).status_code == 404


def test_the_link_lifetime_comes_from_the_configuration(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, _, tmp = setup
    config = tmp / "cli.yaml"
    config.write_text("activationLinkLifetimeSeconds: 3600\n")
    _link(server, tmp, capsys, "hourly", "--config", str(config))
    _link(server, tmp, capsys, "weekly")
    with sqlite3.connect(tmp / "catalog.db") as db:
        lifetimes = dict(
            db.execute(
                "SELECT recipient_key, expires_at - created_at FROM activation_links "
                "WHERE recipient_key IN ('hourly', 'weekly')"
            ).fetchall()
        )
    assert lifetimes == {"hourly": 3600 * 1000, "weekly": 7 * 86400 * 1000}


def test_a_link_refuses_an_address_outside_the_list_and_stays_usable(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, _, tmp = setup
    link = _link(server, tmp, capsys, "walled", "--ip", "10.0.0.0/8")
    token = link.rsplit("/", 1)[1]
    for url in (link, f"{server.base}{ACTIVATION_INFO_PATH}/{token}"):
        refused = httpx.get(url)
        assert refused.status_code == 403
        assert refused.json()["errorCode"] == "PERMISSION_DENIED"
    catalog = f"sqlite:///{tmp}/catalog.db"
    assert cli(["recipient", "set-ip", "walled", "--ip", "127.0.0.1", "--catalog", catalog]) == 0
    assert httpx.get(link).status_code == 200


def test_activation_through_the_admin_api(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, admin, tmp = setup
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    body = {"name": "api", "activation": True, "expiresInSeconds": 86400}
    created = httpx.post(admin + "/api/recipients", json=body, headers=headers)
    assert created.status_code == 201, created.text
    answer = created.json()
    assert "profile" not in answer
    assert answer["activation"]["url"].startswith(f"{server.base}{ACTIVATION_PATH}/")
    profile = httpx.get(answer["activation"]["url"]).json()
    assert "expirationTime" in profile
    assert httpx.get(answer["activation"]["url"]).status_code == 404
    capsys.readouterr()
    remote = ["--server", admin, "--admin-token", ADMIN_TOKEN]
    assert cli(["recipient", "create", "viacli", "--activation", *remote]) == 0
    link = capsys.readouterr().out.splitlines()[0]
    assert link.startswith(f"{server.base}{ACTIVATION_PATH}/")
    assert httpx.get(link).status_code == 200
    refused = ["recipient", "create", "both", "--activation", "-o", str(tmp / "both.share")]
    assert cli([*refused, "--catalog", f"sqlite:///{tmp}/catalog.db"]) != 0
    assert not (tmp / "both.share").exists()
