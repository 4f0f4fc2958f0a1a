"""Bearer tokens on a catalog server (real process, SQLite): what tokens a client makes the
server hold, and what page tokens, refresh tokens and local file URLs are bound to.

Regressions of issue 30: a server that kept every presented token (1 MB ones included),
file URLs that came back to life when their recipient got a new token, and listing page
tokens another recipient could replay.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from deltaport.catalog.rows import RotationSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import RunningServer, start_server, stop_server, write_partitioned_table
from waiting import wait_until

LIVE_SECONDS = 10
TABLE = "/shares/s/schemas/sc/tables/t"
MiB = 2**20


@dataclass
class CatalogServer:
    server: RunningServer
    store: SqlCatalog

    def recipient(self, name: str) -> str:
        """A new recipient granted shares s and s2; its first token."""
        token = self.store.create_recipient(name).token
        for share in ("s", "s2"):
            self.store.grant(share, name)
        with self.server.client(token) as client:
            _eventually(lambda: client.get("/shares").status_code == 200)
        return token


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogServer]:
    tmp = tmp_path_factory.mktemp("catalog-tokens")
    table = str(write_partitioned_table(tmp / "t"))
    url = f"sqlite:///{tmp}/catalog.db"
    store = SqlCatalog(url)
    for share in ("s", "s2"):
        store.create_share(share)
    store.add_table("s", "sc", "t", TableSpec(table, history_shared=True))
    store.add_table("s", "sc", "u", TableSpec(table))
    store.add_table("s2", "sc", "t", TableSpec(table))
    # the memory test sends hundreds of wrong tokens from one address: past the default
    # limit they would be refused before being read (tests/catalog/test_sharing_limits.py)
    config = {
        "catalog": url,
        "signingKey": "catalog-tokens-key",
        "rateLimits": {"failedAuthLimit": 100_000},
    }
    server = start_server(config, tmp / "server")
    yield CatalogServer(server, store)
    stop_server(server)


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, LIVE_SECONDS, "the catalog's change to reach the server")


def _resident_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _lines(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


def _end(response: httpx.Response) -> dict[str, Any]:
    return dict(_lines(response)[-1]["endStreamAction"])


def _file_url(response: httpx.Response) -> str:
    return str(next(line["file"]["url"] for line in _lines(response) if "file" in line))


# -- item 1: nothing of an unauthenticated token stays behind ------------------------------


def test_large_unauthenticated_tokens_do_not_grow_the_server(catalog: CatalogServer) -> None:
    server = catalog.server
    pid = server.process.pid

    def send(count: int, size: int, first: int = 0) -> None:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            for i in range(first, first + count):
                token = f"{i:08d}" + "x" * size
                answer = client.get("/shares", headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code in (401, 431), answer.text
                assert answer.json()["errorCode"] in ("UNAUTHENTICATED", "REQUEST_HEADER_TOO_LARGE")

    send(20, MiB)  # the allocator's working set for such requests, before measuring
    before = _resident_bytes(pid)
    send(300, MiB, first=20)
    send(300, 8000)
    grown = _resident_bytes(pid) - before
    assert grown < 32 * MiB, f"the server grew by {grown / MiB:.0f} MiB"


def test_over_long_tokens_and_headers_are_refused(catalog: CatalogServer) -> None:
    token = catalog.recipient("long")
    with httpx.Client(base_url=catalog.server.url) as client:
        answer = client.get("/shares", headers={"Authorization": "Bearer " + "t" * 1025})
        assert answer.status_code == 401
        assert answer.json()["errorCode"] == "UNAUTHENTICATED"
        assert "longer than 1024 characters" in answer.json()["message"]
        for path in ("/shares", f"{TABLE}/version", "/files/anything"):
            big = client.get(
                path, headers={"Authorization": f"Bearer {token}", "X-Filler": "f" * 20_000}
            )
            assert big.status_code == 431, path
            assert big.json()["errorCode"] == "REQUEST_HEADER_TOO_LARGE"
        fine = client.get("/shares", headers={"Authorization": f"Bearer {token}"})
        assert fine.status_code == 200


# -- item 4: what a token obtained ends with it ----------------------------------------------


def test_file_urls_stay_dead_after_revoke_and_reissue(catalog: CatalogServer) -> None:
    server, store = catalog.server, catalog.store
    with server.client(catalog.recipient("leaked")) as old:
        url = _file_url(old.post(f"{TABLE}/query", json={}))
        assert httpx.get(url).status_code == 200
        store.revoke("leaked")
        _eventually(lambda: httpx.get(url).status_code == 404)
    reissued = store.rotate("leaked", RotationSpec(timedelta(0))).token
    with server.client(reissued) as new:
        _eventually(lambda: new.get("/shares").status_code == 200)
        assert httpx.get(url).status_code == 404
        assert httpx.get(_file_url(new.post(f"{TABLE}/query", json={}))).status_code == 200


def test_file_urls_end_with_their_token_after_a_rotation(catalog: CatalogServer) -> None:
    server, store = catalog.server, catalog.store
    with server.client(catalog.recipient("rotated")) as old:
        url = _file_url(old.post(f"{TABLE}/query", json={}))
        store.rotate("rotated", RotationSpec(timedelta(seconds=2)))
        _eventually(lambda: old.get("/shares").status_code == 401)
    assert httpx.get(url).status_code == 404
    # the URL moved to the recipient's new token is refused (the MAC covers it)
    credential = url.split("rcp=")[1].split(".")[1]
    assert httpx.get(url.replace(credential, "0" * len(credential))).status_code == 404


def test_page_and_refresh_tokens_are_bound_to_their_bearer_token(catalog: CatalogServer) -> None:
    server, store = catalog.server, catalog.store
    with server.client(catalog.recipient("twice")) as first:
        page = _end(first.post(f"{TABLE}/query", json={"maxFiles": 1}))["nextPageToken"]
        refresh = _end(first.post(f"{TABLE}/query", json={"includeRefreshToken": True}))[
            "refreshToken"
        ]
        ranged = {"startingVersion": 0, "maxFiles": 1}
        range_page = _end(first.post(f"{TABLE}/query", json=ranged))["nextPageToken"]
        listing = first.get("/shares", params={"maxResults": 1}).json()["nextPageToken"]
        second_token = store.rotate("twice", RotationSpec(timedelta(hours=1))).token
        with server.client(second_token) as second:
            _eventually(lambda: second.get("/shares").status_code == 200)
            for client, status in ((first, 200), (second, 400)):
                answers = (
                    client.post(f"{TABLE}/query", json={"maxFiles": 1, "pageToken": page}),
                    client.post(f"{TABLE}/query", json={"refreshToken": refresh}),
                    client.post(f"{TABLE}/query", json={**ranged, "pageToken": range_page}),
                    client.get("/shares", params={"maxResults": 1, "pageToken": listing}),
                )
                for answer in answers:
                    assert answer.status_code == status, answer.text
                    if status == 400:
                        assert answer.json()["errorCode"] == "INVALID_PARAMETER_VALUE"


# -- item 12: listing page tokens are bound to their recipient --------------------------------


def test_listing_page_tokens_are_bound_to_their_recipient(catalog: CatalogServer) -> None:
    server = catalog.server
    with (
        server.client(catalog.recipient("lister")) as owner,
        server.client(catalog.recipient("replayer")) as other,
    ):
        for path in ("/shares", "/shares/s/schemas/sc/tables", "/shares/s/all-tables"):
            token = owner.get(path, params={"maxResults": 1}).json()["nextPageToken"]
            assert owner.get(path, params={"pageToken": token}).status_code == 200, path
            stolen = other.get(path, params={"pageToken": token})
            assert stolen.status_code == 400, path
            assert stolen.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
