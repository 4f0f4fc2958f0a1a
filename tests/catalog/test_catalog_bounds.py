"""The bounds of the catalog's admin API on a real server: durations, versions and fields
are checked before anything is written, bodies are bounded on the admin listener, the
differ's refusals are answered with an errorCode, a diff whose storage never answers ends
at ``admin.diffTimeoutSeconds``, and partition filters bind any property value as a value."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import start_with_admin
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import RunningServer, stop_server
from waiting import wait_until

ADMIN_TOKEN = "catalog-bounds-admin-token-4d2a"
COUNTRIES = ["FR", "F\\R", "FR\\", "O'Hara", "\\'", "''"]


class StalledStore:
    """A TCP listener that accepts connections and never answers: storage that hangs."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._held.append(conn)

    def close(self) -> None:
        self._listener.close()
        for conn in self._held:
            conn.close()


@pytest.fixture(scope="module")
def stalled() -> Iterator[StalledStore]:
    store = StalledStore()
    yield store
    store.close()


@pytest.fixture(scope="module")
def setup(
    tmp_path_factory: pytest.TempPathFactory, stalled: StalledStore
) -> Iterator[tuple[RunningServer, str, Path]]:
    tmp = tmp_path_factory.mktemp("catalog-bounds")
    table = tmp / "t"
    write_deltalake(
        str(table),
        pa.table({"id": list(range(len(COUNTRIES))), "country": COUNTRIES}),
        partition_by=["country"],
    )
    SqlCatalog(f"sqlite:///{tmp}/catalog.db")  # created, as `deltaport catalog init` does
    config = {
        "catalog": f"sqlite:///{tmp}/catalog.db",
        "signingKey": "catalog-bounds-key",
        "storage": [
            {
                "prefix": "s3://stalled/",
                "options": {
                    "aws_endpoint": f"http://127.0.0.1:{stalled.port}",
                    "aws_allow_http": "true",
                    "aws_access_key_id": "test",
                    "aws_secret_access_key": "test",
                    "aws_region": "us-east-1",
                },
            }
        ],
    }
    running = start_with_admin(config, tmp / "server", ADMIN_TOKEN, diffTimeoutSeconds=1)
    yield running.sharing, running.admin, table
    stop_server(running.sharing)


def _api(admin: str, method: str, path: str, body: object = None, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", **kwargs.pop("headers", {})}
    return httpx.request(method, admin + path, json=body, headers=headers, timeout=60, **kwargs)


def _generation(admin: str) -> int:
    return int(_api(admin, "GET", "/api/catalog").json()["generation"])


def _refused(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["errorCode"] == "INVALID_PARAMETER_VALUE"
    return str(body["message"])


# -- durations and versions are checked before anything is written -----------------------


@pytest.mark.parametrize("seconds", [10**12, 10**20, 2**63, 0, -5])
def test_an_out_of_bounds_token_lifetime_writes_nothing(setup, seconds: int) -> None:  # type: ignore[no-untyped-def]
    _, admin, _ = setup
    before = _generation(admin)
    body = {"name": f"life{seconds}", "expiresInSeconds": seconds}
    message = _refused(_api(admin, "POST", "/api/recipients", body))
    assert "expiresInSeconds must be between 1 and 3153600000 seconds" in message
    assert _generation(admin) == before
    # the name is free: nothing was written
    created = _api(admin, "POST", "/api/recipients", {**body, "expiresInSeconds": 3600})
    assert created.status_code == 201, created.text
    assert _api(admin, "POST", f"/api/recipients/{body['name']}/revoke").status_code == 204


@pytest.mark.parametrize(
    "fields",
    [
        {"graceSeconds": 10**12},
        {"graceSeconds": 10**20},
        {"graceSeconds": -1},
        {"graceSeconds": 60, "expiresInSeconds": 0},
        {"graceSeconds": 60, "expiresInSeconds": 2**63},
    ],
)
def test_an_out_of_bounds_rotation_changes_nothing(setup, fields: dict[str, int]) -> None:  # type: ignore[no-untyped-def]
    _, admin, _ = setup
    _api(admin, "POST", "/api/recipients", {"name": "rotated"})  # 409 after the first case
    before = _api(admin, "GET", "/api/catalog").json()
    message = _refused(_api(admin, "POST", "/api/recipients/rotated/rotate", fields))
    assert "must be between" in message
    after = _api(admin, "GET", "/api/catalog").json()
    assert after == before


@pytest.mark.parametrize("version", [2**63, 2**63 + 1, 10**20, -1])
def test_an_out_of_bounds_start_version_is_refused(setup, version: int) -> None:  # type: ignore[no-untyped-def]
    _, admin, table = setup
    _api(admin, "POST", "/api/shares", {"name": "versions"})
    before = _generation(admin)
    body = {"name": "versions.s.t", "location": str(table), "startVersion": version}
    message = _refused(_api(admin, "POST", "/api/tables", body))
    assert f"startVersion must be between 0 and {2**63 - 1}" in message
    assert _generation(admin) == before


# -- bodies and fields are bounded on the admin listener ----------------------------------


def test_the_admin_listener_bounds_request_bodies(setup) -> None:  # type: ignore[no-untyped-def]
    _, admin, _ = setup
    before = _generation(admin)
    body = {"name": "huge", "comment": "x" * (2 * 1024 * 1024)}
    response = _api(admin, "POST", "/api/shares", body)
    assert response.status_code == 413, response.text
    assert response.json()["errorCode"] == "REQUEST_TOO_LARGE"
    # sent in chunks, without a length, it is refused as well
    chunks = iter([b'{"name": "chunked", "comment": "', b"y" * (2 * 1024 * 1024), b'"}'])
    response = httpx.post(
        admin + "/api/shares",
        content=chunks,
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413
    assert _generation(admin) == before


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/api/shares", {"name": "long", "comment": "c" * 4097}, "comment is 4097 characters"),
        ("/api/shares", {"name": "n" * 256}, "at most 255 are allowed"),
        (
            "/api/recipients",
            {"name": "props", "properties": {"country": "v" * 1025}},
            "the value of 'country' has 1025 characters",
        ),
        (
            "/api/recipients",
            {"name": "props", "properties": {"k" * 256: "v"}},
            "a property name has 256 characters",
        ),
        (
            "/api/recipients",
            {"name": "props", "properties": {f"p{i}": "v" for i in range(101)}},
            "101 are given; at most 100 are allowed",
        ),
        (
            "/api/tables",
            {"name": "fields.s.t", "location": "/x", "partitionFilter": "a = 'b'" * 600},
            "partitionFilter is 4200 characters long",
        ),
        (
            "/api/tables",
            {"name": "fields.s.t", "location": "/" + "l" * 4096},
            "location is 4097 characters long",
        ),
    ],
)
def test_fields_are_bounded_and_nothing_is_written(  # type: ignore[no-untyped-def]
    setup, path: str, body: dict[str, Any], message: str
) -> None:
    _, admin, _ = setup
    _api(admin, "POST", "/api/shares", {"name": "fields"})
    before = _generation(admin)
    assert message in _refused(_api(admin, "POST", path, body))
    assert _generation(admin) == before


# -- the differ's refusals ----------------------------------------------------------------


def test_a_diff_of_a_file_location_is_not_a_server_error(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _, admin, table = setup
    plain = tmp_path / "passwd"
    plain.write_text("root:x:0:0\n")
    cases = [
        {"left": str(tmp_path), "right": str(plain)},
        {"left": str(plain), "right": str(plain / "below")},
        {"left": str(plain), "right": str(plain), "left_version": "0", "right_version": "1"},
        {"left": str(plain), "right": str(table), "rows": "true"},
    ]
    for params in cases:
        response = _api(admin, "GET", "/api/diff", params=params)
        assert response.status_code == 404, (params, response.text)
        assert response.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"


@pytest.mark.parametrize(
    ("field", "names"), [("key", "id,id"), ("key", "id,ID"), ("columns", "country,country")]
)
def test_a_row_diff_naming_a_column_twice_is_refused(setup, field: str, names: str) -> None:  # type: ignore[no-untyped-def]
    _, admin, table = setup
    params = {"left": str(table), "right": str(table), "rows": "true", "key": "id", field: names}
    message = _refused(_api(admin, "GET", "/api/diff", params=params))
    assert f"{field} names the column" in message and "more than once" in message


def test_a_diff_whose_storage_never_answers_ends_at_the_timeout(setup) -> None:  # type: ignore[no-untyped-def]
    _, admin, table = setup
    params = {"left": "s3://stalled/a", "right": "s3://stalled/b"}
    response = _api(admin, "GET", "/api/diff", params=params)
    assert response.status_code == 504, response.text
    assert response.json() == {
        "errorCode": "REQUEST_TIMEOUT",
        "message": "the diff did not finish within 1 seconds (admin.diffTimeoutSeconds); "
        "its tables' storage may be unreachable or slow",
    }
    # the listener still answers other requests, diffs included
    other = _api(admin, "GET", "/api/diff", params={"left": str(table), "right": str(table)})
    assert other.status_code == 200, other.text


# -- partition filters bind property values as values -------------------------------------


def _regions_seen(server: RunningServer, token: str) -> set[str]:
    with server.client(token) as client:
        wait_until(
            lambda: (
                (shares := client.get("/shares")).status_code == 200 and shares.json().get("items")
            ),
            10,
            "the recipient to see its share",
        )
        answer = client.post("/shares/filtered/schemas/s/tables/t/query", json={})
        assert answer.status_code == 200, answer.text
        return {
            json.loads(line)["file"]["partitionValues"]["country"]
            for line in answer.text.splitlines()
            if '"file"' in line
        }


@pytest.mark.parametrize(
    ("value", "seen"),
    [
        ("FR", {"FR"}),
        ("F\\R", {"F\\R"}),
        ("FR\\", {"FR\\"}),
        ("O'Hara", {"O'Hara"}),
        ("\\'", {"\\'"}),
        ("''", {"''"}),
        ("x' OR country <> '", set()),
        ("FR' OR '1'='1", set()),
        ("\\' OR TRUE OR '", set()),
        ("F\\\\R", set()),
    ],
)
def test_a_property_value_is_bound_as_a_value(setup, value: str, seen: set[str]) -> None:  # type: ignore[no-untyped-def]
    server, admin, table = setup
    if _api(admin, "POST", "/api/shares", {"name": "filtered"}).status_code == 201:
        body = {
            "name": "filtered.s.t",
            "location": str(table),
            "partitionFilter": "country = CURRENT_RECIPIENT('country')",
        }
        assert _api(admin, "POST", "/api/tables", body).status_code == 201
    name = "filter" + hashlib.sha256(value.encode()).hexdigest()[:12]
    created = _api(
        admin, "POST", "/api/recipients", {"name": name, "properties": {"country": value}}
    )
    assert created.status_code == 201, created.text
    assert (
        _api(admin, "POST", "/api/shares/filtered/grants", {"recipient": name}).status_code == 204
    )
    assert _regions_seen(server, created.json()["profile"]["bearerToken"]) == seen
