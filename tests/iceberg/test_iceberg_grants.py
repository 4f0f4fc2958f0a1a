"""What a recipient of a catalog server sees through the Iceberg catalog is what its grants
allow on the Delta Sharing routes: its shares only (another share answers like one that does
not exist), no table with a partition filter, and nothing once its grant or token ends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from iceberg_readers import deltalake_read, first_difference
from pyiceberg.catalog.rest import RestCatalog

from deltaport.cli import main as cli
from sharing_server import RunningServer, start_server, stop_server
from waiting import wait_until


def _catalog(url: str, *args: str) -> None:
    assert cli([*args, "--catalog", url]) == 0


def _token(url: str, tmp: Path, name: str, *args: str) -> str:
    path = tmp / f"{name}.share"
    _catalog(url, "recipient", "create", name, *args, "-o", str(path), "--endpoint", "http://x")
    return str(json.loads(path.read_text())["bearerToken"])


@pytest.fixture(scope="module")
def granted(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[RunningServer, dict[str, str], str, Path]]:
    tmp = tmp_path_factory.mktemp("iceberg-grants")
    url = f"sqlite:///{tmp}/catalog.db"
    _catalog(url, "catalog", "init")
    parted = tmp / "parted"
    for region in ("eu", "us"):
        rows = pa.table({"id": list(range(3)), "region": [region] * 3})
        write_deltalake(str(parted), rows, mode="append", partition_by=["region"])
    _catalog(url, "share", "create", "s")
    _catalog(url, "share", "create", "hr")
    _catalog(url, "table", "add", "s.sc.whole", str(parted))
    _catalog(
        url,
        "table",
        "add",
        "s.sc.mine",
        str(parted),
        "--partition-filter",
        "region = CURRENT_RECIPIENT('region')",
    )
    _catalog(url, "table", "add", "hr.x.people", str(parted))
    tokens = {
        "eu": _token(url, tmp, "eu", "--property", "region=eu"),
        "hronly": _token(url, tmp, "hronly"),
    }
    _catalog(url, "share", "grant", "s", "--to", "eu")
    _catalog(url, "share", "grant", "hr", "--to", "hronly")
    config = {
        "catalog": url,
        "signingKey": "iceberg-grants-key",
        "iceberg": {"metadataDirectory": str(tmp / "iceberg")},
    }
    server = start_server(config, tmp / "server")
    yield server, tokens, url, parted
    stop_server(server)


def _get(server: RunningServer, token: str, path: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(server.base + "/iceberg" + path, headers=headers, timeout=60)


def test_a_recipient_sees_its_grants_without_filtered_tables(granted) -> None:  # type: ignore[no-untyped-def]
    server, tokens, _, parted = granted
    catalog = RestCatalog("s", uri=server.base + "/iceberg", token=tokens["eu"], warehouse="s")
    assert catalog.list_tables("sc") == [("sc", "whole")]
    got = catalog.load_table("sc.whole").scan().to_arrow()
    assert first_difference(got, deltalake_read(str(parted))) is None
    filtered = _get(server, tokens["eu"], "/v1/shares/s/namespaces/sc/tables/mine")
    assert filtered.status_code == 404
    assert filtered.json()["error"]["type"] == "NoSuchTableException"


def test_another_share_answers_like_a_missing_one(granted) -> None:  # type: ignore[no-untyped-def]
    server, tokens, _, _ = granted
    for path in ("/v1/config?warehouse=hr", "/v1/shares/hr/namespaces"):
        other = _get(server, tokens["eu"], path)
        missing = _get(server, tokens["eu"], path.replace("hr", "nothing"))
        assert (other.status_code, other.json()["error"]["type"]) == (
            missing.status_code,
            missing.json()["error"]["type"],
        )
        # the same words, the asked name echoed: nothing says that "hr" exists
        assert other.text.replace("'hr'", "'nothing'") == missing.text
    config = _get(server, tokens["hronly"], "/v1/config").json()  # one share: the default
    assert config["overrides"] == {"prefix": "shares/hr"}


def test_a_revoked_grant_and_a_revoked_token_end_iceberg_access(granted) -> None:  # type: ignore[no-untyped-def]
    server, tokens, url, _ = granted
    path = "/v1/shares/hr/namespaces/x/tables/people"
    assert _get(server, tokens["hronly"], path).status_code == 200
    _catalog(url, "share", "revoke", "hr", "--to", "hronly")
    wait_until(lambda: _get(server, tokens["hronly"], path).status_code == 404, 10, "the revoke")
    _catalog(url, "recipient", "revoke", "hronly")
    wait_until(
        lambda: _get(server, tokens["hronly"], "/v1/config").status_code == 401, 20, "the revoke"
    )
