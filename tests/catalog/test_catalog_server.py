"""A sharing server on a catalog database: per-recipient tokens and grants, partition
filters, live changes, the catalog commands, and the official client with a generated
profile. The access matrix runs on SQLite (with a ``dir`` table in moto's S3, so that the
temporary credentials route is in it); two servers share one PostgreSQL."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from catalog_lake import storage_entry, write_config, write_lake_table
from deltaport.cli import main as cli
from emulators import S3Emulator, official_client_python, read_with_official_client  # noqa: F401
from postgres import postgres_server, postgres_url  # noqa: F401
from sharing_server import RunningServer, start_server, stop_server
from waiting import wait_until

FILTER = "region = CURRENT_RECIPIENT('region')"
LIVE_SECONDS = 5
BUCKET = "catalog-matrix"
LAKE = "/shares/s/schemas/sc/tables/lake"


def _catalog(url: str, *args: str) -> None:
    assert cli([*args, "--catalog", url]) == 0


def _profile(url: str, tmp: Path, name: str, *args: str) -> dict[str, Any]:
    path = tmp / f"{name}.share"
    _catalog(url, "recipient", "create", name, *args, "-o", str(path), "--endpoint", "http://x")
    return dict(json.loads(path.read_text()))


@pytest.fixture(scope="module")
def lake(s3_emulator: S3Emulator) -> S3Emulator:
    s3_emulator.create_bucket(BUCKET)
    return s3_emulator


def _storage(s3: S3Emulator) -> list[dict[str, Any]]:
    return [storage_entry(s3, BUCKET)]


def _seed(url: str, tables: Path, tmp: Path, s3: S3Emulator) -> dict[str, str]:
    """Shares s (a filtered and an unfiltered copy of a table partitioned by region, and
    a table in S3 shared for url and dir access) and hr; recipients eu and us (region
    property) and none (no property), and an hr-only one. Returns each recipient's token."""
    if url.startswith("sqlite:"):
        _catalog(url, "catalog", "init")
    parted = tables / "parted"
    for region in ("eu", "us", "asia"):
        rows = pa.table({"id": list(range(5)), "region": [region] * 5})
        write_deltalake(
            str(parted),
            rows,
            mode="append",
            partition_by=["region"],
            configuration={"delta.enableChangeDataFeed": "true"},
        )
    _catalog(url, "share", "create", "s")
    _catalog(url, "share", "create", "hr")
    _catalog(url, "table", "add", "s.sc.t", str(parted), "--history", "--partition-filter", FILTER)
    _catalog(url, "table", "add", "s.sc.whole", str(parted), "--history")
    _catalog(url, "table", "add", "hr.x.people", str(parted))
    location = f"s3://{BUCKET}/{tmp.name}/lake"
    write_lake_table(s3, location)
    config = write_config(tmp / "cli.yaml", {"storage": _storage(s3)})
    dir_args = ["--history", "--access-modes", "url,dir", "--config", str(config)]
    _catalog(url, "table", "add", "s.sc.lake", location, *dir_args)
    tokens = {}
    for name, extra in (
        ("eu", ["--property", "region=eu"]),
        ("us", ["--property", "region=us"]),
        ("none", []),
        ("hronly", []),
    ):
        tokens[name] = _profile(url, tmp, name, *extra)["bearerToken"]
    for name in ("eu", "us", "none"):
        _catalog(url, "share", "grant", "s", "--to", name)
    _catalog(url, "share", "grant", "hr", "--to", "hronly")
    return tokens


def _server(url: str, tmp: Path, s3: S3Emulator) -> RunningServer:
    config = {"catalog": url, "signingKey": "catalog-tests-key", "storage": _storage(s3)}
    return start_server(config, tmp)


@pytest.fixture(scope="module")
def sqlite_setup(
    tmp_path_factory: pytest.TempPathFactory, lake: S3Emulator
) -> Iterator[tuple[RunningServer, dict[str, str], str]]:
    tmp = tmp_path_factory.mktemp("catalog-server")
    url = f"sqlite:///{tmp}/catalog.db"
    tokens = _seed(url, tmp, tmp, lake)
    server = _server(url, tmp / "server", lake)
    yield server, tokens, url
    stop_server(server)


def _as(server: RunningServer, token: str) -> httpx.Client:
    return server.client(token)


def _regions(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    regions = set()
    for line in response.text.splitlines():
        record = json.loads(line)
        if "file" in record:
            regions.add(record["file"]["partitionValues"]["region"])
        for kind in ("add", "cdf", "remove"):
            if kind in record:
                regions.add(record[kind]["partitionValues"]["region"])
    return regions


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, LIVE_SECONDS, "the catalog's change to reach the server")


def test_each_recipient_sees_its_grants_and_partitions(sqlite_setup) -> None:  # type: ignore[no-untyped-def]
    server, tokens, _ = sqlite_setup
    table = "/shares/s/schemas/sc/tables/t"
    expected = {"eu": {"eu"}, "us": {"us"}, "none": set()}
    for name, regions in expected.items():
        with _as(server, tokens[name]) as client:
            shares = [s["name"] for s in client.get("/shares").json()["items"]]
            assert shares == ["s"], name
            for path in (
                "/shares/hr",
                "/shares/hr/schemas",
                "/shares/hr/all-tables",
                "/shares/hr/schemas/x/tables/people/version",
            ):
                hidden = client.get(path)
                assert hidden.status_code == 404, (name, path)
                assert hidden.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
            assert _regions(client.post(f"{table}/query", json={})) == regions
            delta = client.post(
                f"{table}/query",
                json={},
                headers={"delta-sharing-capabilities": "responseformat=delta"},
            )
            paths = [
                json.loads(line)["file"]["deltaSingleAction"]["add"]["partitionValues"]["region"]
                for line in delta.text.splitlines()
                if '"file"' in line
            ]
            assert set(paths) == regions
            assert _regions(client.post(f"{table}/query", json={"startingVersion": 0})) == regions
            cdf = client.get(f"{table}/changes", params={"startingVersion": 0})
            assert _regions(cdf) == regions
            meta = [json.loads(line) for line in client.get(f"{table}/metadata").text.splitlines()]
            assert meta[1]["metaData"]["numFiles"] == len(
                [
                    line
                    for line in client.post(f"{table}/query", json={}).text.splitlines()
                    if '"file"' in line
                ]
            )
            assert _regions(client.post("/shares/s/schemas/sc/tables/whole/query", json={})) == {
                "eu",
                "us",
                "asia",
            }
            vended = client.post(f"{LAKE}/temporary-table-credentials")
            assert vended.status_code == 200, (name, vended.text)
            assert "awsTempCredentials" in vended.json()["credentials"]
    with _as(server, tokens["hronly"]) as client:
        assert [s["name"] for s in client.get("/shares").json()["items"]] == ["hr"]
        assert client.post(f"{table}/query", json={}).status_code == 404
        for path in (table, LAKE):
            hidden = client.post(f"{path}/temporary-table-credentials")
            assert hidden.status_code == 404, path
            assert hidden.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"


def test_page_tokens_are_bound_to_their_recipient(sqlite_setup) -> None:  # type: ignore[no-untyped-def]
    server, tokens, _ = sqlite_setup
    table = "/shares/s/schemas/sc/tables/whole/query"
    with _as(server, tokens["eu"]) as eu, _as(server, tokens["us"]) as us:
        first = [
            json.loads(line) for line in eu.post(table, json={"maxFiles": 1}).text.splitlines()
        ]
        token = first[-1]["endStreamAction"]["nextPageToken"]
        assert eu.post(table, json={"maxFiles": 1, "pageToken": token}).status_code == 200
        stolen = us.post(table, json={"maxFiles": 1, "pageToken": token})
        assert stolen.status_code == 400


def test_revoked_grants_and_tokens_end_live(tmp_path: Path, lake: S3Emulator) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    tokens = _seed(url, tmp_path, tmp_path, lake)
    server = _server(url, tmp_path / "server", lake)
    try:
        table = "/shares/s/schemas/sc/tables/whole/query"
        with _as(server, tokens["eu"]) as eu:
            first = [
                json.loads(line) for line in eu.post(table, json={"maxFiles": 1}).text.splitlines()
            ]
            page = first[-1]["endStreamAction"]["nextPageToken"]
            refreshed = [
                json.loads(line)
                for line in eu.post(table, json={"includeRefreshToken": True}).text.splitlines()
            ]
            refresh = refreshed[-1]["endStreamAction"]["refreshToken"]
            assert eu.post(table, json={"refreshToken": refresh}).status_code == 200
            file_url = next(line["file"]["url"] for line in first if "file" in line)
            assert "rcp=eu." in file_url
            assert httpx.get(file_url).status_code == 200
            # the URL moved to another recipient's name is refused
            moved = file_url.replace("rcp=eu.", "rcp=us.")
            assert httpx.get(moved).status_code == 404
            assert eu.post(f"{LAKE}/temporary-table-credentials").status_code == 200
            _catalog(url, "share", "revoke", "s", "--to", "eu")
            _eventually(lambda: eu.post(table, json={}).status_code == 404)
            _eventually(lambda: httpx.get(file_url).status_code == 404)
            assert eu.post(table, json={"maxFiles": 1, "pageToken": page}).status_code == 404
            assert eu.post(table, json={"refreshToken": refresh}).status_code == 404
            assert eu.get("/shares").json()["items"] == []
            base = "/shares/s/schemas/sc/tables/whole"
            for path in (
                "/shares/s",
                "/shares/s/schemas",
                "/shares/s/schemas/sc/tables",
                "/shares/s/all-tables",
                f"{base}/version",
                f"{base}/metadata",
                f"{base}/changes?startingVersion=0",
            ):
                assert eu.get(path).status_code == 404, path
            for path in (base, LAKE):
                credentials = eu.post(f"{path}/temporary-table-credentials")
                assert credentials.status_code == 404, path
                assert credentials.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
        with _as(server, tokens["us"]) as us:
            answer = us.post(table, json={})
            us_url = next(
                json.loads(line)["file"]["url"]
                for line in answer.text.splitlines()
                if "file" in line
            )
            assert httpx.get(us_url).status_code == 200
            _catalog(url, "recipient", "revoke", "us")
            _eventually(lambda: us.get("/shares").status_code == 401)
            _eventually(lambda: httpx.get(us_url).status_code == 404)
            for path in ("/shares/s", "/shares/s/schemas/sc/tables/whole/version"):
                assert us.get(path).status_code == 401, path
            assert us.post(table, json={}).status_code == 401
            body = us.get("/shares").json()
            assert body["errorCode"] == "UNAUTHENTICATED" and "expired" in body["message"]
        # a new table and a new grant arrive without a restart
        _catalog(url, "share", "grant", "hr", "--to", "none")
        with _as(server, tokens["none"]) as none:
            _eventually(lambda: len(none.get("/shares").json()["items"]) == 2)
    finally:
        stop_server(server)


def test_the_official_client_reads_its_partitions(
    sqlite_setup,  # type: ignore[no-untyped-def]
    official_client_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    server, _, url = sqlite_setup
    profile = tmp_path / "official.share"
    _catalog(
        url,
        "recipient",
        "create",
        "official",
        "--property",
        "region=us",
        "-o",
        str(profile),
        "--endpoint",
        server.url,
    )
    _catalog(url, "share", "grant", "s", "--to", "official")
    time.sleep(1.5)
    results = read_with_official_client(
        official_client_python, [(profile, "parquet"), (profile, "delta")]
    )
    for result in results:
        assert "rows" in result, result.get("error")
        assert {r["region"] for r in result["rows"]} == {"us"}
        assert len(result["rows"]) == 5


def test_two_servers_on_one_postgresql(
    postgres_url: str,  # noqa: F811
    tmp_path: Path,
    lake: S3Emulator,
) -> None:
    tokens = _seed(postgres_url, tmp_path, tmp_path, lake)
    one = _server(postgres_url, tmp_path / "one", lake)
    two = _server(postgres_url, tmp_path / "two", lake)
    try:
        newcomer = _profile(postgres_url, tmp_path, "newcomer", "--property", "region=eu")
        _catalog(postgres_url, "share", "grant", "s", "--to", "newcomer")
        with _as(two, newcomer["bearerToken"]) as client:
            _eventually(
                lambda: (
                    client.get("/shares").status_code == 200
                    and bool(client.get("/shares").json()["items"])
                )
            )
        table = "/shares/s/schemas/sc/tables/whole/query"
        with _as(one, tokens["eu"]) as a, _as(two, tokens["eu"]) as b:
            whole = _file_lines(a.post(table, json={}))
            # one file a page, each page token carried to the other server
            paged: list[dict[str, Any]] = []
            body: dict[str, Any] = {"maxFiles": 1}
            for turn in range(len(whole) + 1):
                lines = [
                    json.loads(t)
                    for t in (b if turn % 2 else a).post(table, json=body).text.splitlines()
                ]
                paged.extend(_file_lines_of(lines))
                token = lines[-1].get("endStreamAction", {}).get("nextPageToken")
                if not token:
                    break
                body = {"maxFiles": 1, "pageToken": token}
            assert len(whole) >= 2 and turn == len(whole) - 1
            assert sorted(paged, key=str) == sorted(whole, key=str)
            for client in (a, b):
                assert client.post(f"{LAKE}/temporary-table-credentials").status_code == 200
            _catalog(postgres_url, "recipient", "revoke", "eu")
            _eventually(lambda: a.get("/shares").status_code == 401)
            _eventually(lambda: b.get("/shares").status_code == 401)
        with _as(one, tokens["us"]) as a, _as(two, tokens["us"]) as b:
            assert a.get("/shares").json()["items"] and b.get("/shares").json()["items"]
            _catalog(postgres_url, "share", "revoke", "s", "--to", "us")
            for client in (a, b):
                _eventually(lambda c=client: c.get("/shares").json()["items"] == [])
                assert client.post(table, json={}).status_code == 404
    finally:
        stop_server(one)
        stop_server(two)


def _file_lines_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The file lines of a query answer without their URLs (signed per server)."""
    return [
        {k: v for k, v in line["file"].items() if k not in ("url", "expirationTimestamp")}
        for line in lines
        if "file" in line
    ]


def _file_lines(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return _file_lines_of([json.loads(t) for t in response.text.splitlines()])
