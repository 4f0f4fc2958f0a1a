"""Profiles name the Iceberg catalog (``icebergEndpoint``) beside the sharing endpoint:
those the catalog commands write, those an activation link hands over, and the demo's; an
Iceberg reader connects with nothing but the profile."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from pyiceberg.catalog.rest import RestCatalog

from deltaport.cli import main as cli
from sharing_server import free_port, start_server, stop_server
from waiting import wait_until

DELTAPORT = str(Path(sys.executable).parent / "deltaport")


def _catalog(url: str, *args: str) -> None:
    assert cli([*args, "--catalog", url]) == 0


def test_written_profiles_name_the_catalog_beside_the_endpoint(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    _catalog(url, "catalog", "init")
    out = tmp_path / "a.share"
    _catalog(
        url, "recipient", "create", "a", "-o", str(out), "--endpoint", "https://h:1/delta-sharing"
    )
    assert json.loads(out.read_text())["icebergEndpoint"] == "https://h:1/iceberg"
    # an endpoint this server's configuration does not serve: no guess
    other = tmp_path / "b.share"
    _catalog(
        url, "recipient", "create", "b", "-o", str(other), "--endpoint", "https://h:1/elsewhere"
    )
    assert "icebergEndpoint" not in json.loads(other.read_text())
    # OAuth clients sign in at the token endpoint, which the Iceberg catalog does not take
    oauth = tmp_path / "c.share"
    _catalog(
        url,
        "recipient",
        "create",
        "c",
        "--oauth",
        "-o",
        str(oauth),
        "--endpoint",
        "https://h:1/delta-sharing",
    )
    assert "icebergEndpoint" not in json.loads(oauth.read_text())


def test_an_activation_link_hands_over_a_profile_an_iceberg_reader_uses(
    tmp_path: Path, capsys
) -> None:  # type: ignore[no-untyped-def]
    url = f"sqlite:///{tmp_path}/catalog.db"
    _catalog(url, "catalog", "init")
    table = Path(__file__).resolve().parents[2] / ".." / "shared" / "delta-corpus"
    location = (table / "tables" / "dat__basic_append" / "delta").resolve()
    _catalog(url, "share", "create", "s")
    _catalog(url, "table", "add", "s.d.basic", str(location))
    server = start_server(
        {"catalog": url, "signingKey": "k", "iceberg": {"metadataDirectory": str(tmp_path / "m")}},
        tmp_path / "server",
    )
    try:
        capsys.readouterr()
        _catalog(url, "recipient", "create", "r", "--activation", "--endpoint", server.url)
        link = capsys.readouterr().out.split()[0]
        _catalog(url, "share", "grant", "s", "--to", "r")
        profile = httpx.get(link.replace("http://x", server.base), timeout=30).json()
        assert profile["icebergEndpoint"] == server.base + "/iceberg"
        auth = {"Authorization": f"Bearer {profile['bearerToken']}"}
        config = profile["icebergEndpoint"] + "/v1/config"
        wait_until(  # until the server's live catalog has the new token
            lambda: httpx.get(config, headers=auth).status_code == 200, 10, "the new token"
        )
        catalog = RestCatalog(
            "s", uri=profile["icebergEndpoint"], token=profile["bearerToken"], warehouse="s"
        )
        assert catalog.load_table("d.basic").scan().to_arrow().num_rows == 5
    finally:
        stop_server(server)


def test_the_demo_profile_reads_through_iceberg(tmp_path: Path) -> None:
    port = free_port()
    directory = tmp_path / "demo-data"
    process = subprocess.Popen(
        [DELTAPORT, "demo", "--dir", str(directory), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def serving() -> dict[str, Any] | None:
            assert process.poll() is None
            profile: dict[str, Any] = json.loads((directory / "profile.share").read_text())
            config = httpx.get(
                profile["icebergEndpoint"] + "/v1/config",
                headers={"Authorization": f"Bearer {profile['bearerToken']}"},
                timeout=2,
            )
            return profile if config.status_code == 200 else None

        errors = (OSError, ValueError, KeyError, httpx.HTTPError)
        profile = wait_until(serving, 120, "the demo's Iceberg catalog", 0.2, ignore=errors)
        catalog = RestCatalog("demo", uri=profile["icebergEndpoint"], token=profile["bearerToken"])
        namespace = catalog.list_namespaces()[0]
        tables = catalog.list_tables(namespace)
        assert tables
        assert catalog.load_table(tables[0]).scan().to_arrow().num_rows > 0
        assert (directory / "iceberg").is_dir()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
