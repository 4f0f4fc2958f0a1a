"""A table whose history is shared from a ``startVersion`` past its latest version: the
same refusal, a 400, on every surface that reads it -- the sharing API's query and
metadata, and the Iceberg catalog's loadTable (a BadRequestException, the Iceberg REST
specification's error type for a request it will not serve), over real HTTP on a real
server. The same table from a reachable ``startVersion`` is served by all of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from sharing_server import TOKEN, RunningServer, start_server, stop_server, table_entry

TABLES = "/shares/s/schemas/d/tables"
ICEBERG_TABLES = "/iceberg/v1/shares/s/namespaces/d/tables"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("start-version")
    location = root / "t"
    for version in range(2):  # versions 0 and 1
        write_deltalake(location, pa.table({"id": [version]}), mode="append")
    config: dict[str, Any] = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "start-version-tests",
        "iceberg": {"metadataDirectory": str(root / "metadata")},
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {
                        "name": "d",
                        "tables": [
                            table_entry("ahead", location, historyShared=True, startVersion=5),
                            table_entry("from1", location, historyShared=True, startVersion=1),
                        ],
                    }
                ],
            }
        ],
    }
    running = start_server(config, root / "server")
    yield running
    stop_server(running)


@pytest.fixture
def sharing(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client() as client:
        yield client


@pytest.fixture
def iceberg(server: RunningServer) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=server.base, headers=headers, timeout=30) as client:
        yield client


REFUSAL = "data of this table is shared from version 5"


def test_the_sharing_query_refuses_it(sharing: httpx.Client) -> None:
    response = sharing.post(f"{TABLES}/ahead/query", json={})
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
    assert REFUSAL in response.json()["message"]


def test_the_sharing_metadata_refuses_it(sharing: httpx.Client) -> None:
    response = sharing.get(f"{TABLES}/ahead/metadata")
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
    assert REFUSAL in response.json()["message"]


def test_iceberg_load_table_refuses_it_as_a_bad_request(iceberg: httpx.Client) -> None:
    for snapshots in ("all", "refs"):
        response = iceberg.get(f"{ICEBERG_TABLES}/ahead", params={"snapshots": snapshots})
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert (error["type"], error["code"]) == ("BadRequestException", 400)
        assert REFUSAL in error["message"]


def test_a_reachable_start_version_is_served_everywhere(
    sharing: httpx.Client, iceberg: httpx.Client
) -> None:
    query = sharing.post(f"{TABLES}/from1/query", json={})
    assert query.status_code == 200, query.text
    assert query.headers["delta-table-version"] == "1"
    loaded = iceberg.get(f"{ICEBERG_TABLES}/from1")
    assert loaded.status_code == 200, loaded.text
    snapshots = loaded.json()["metadata"]["snapshots"]
    assert [s["summary"]["delta.version"] for s in snapshots] == ["1"]
