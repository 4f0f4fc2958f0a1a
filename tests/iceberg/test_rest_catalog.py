"""The Iceberg REST catalog of a real server on loopback, driven by pyiceberg's
``RestCatalog``, by DuckDB's ``ATTACH ... (TYPE iceberg)`` and over raw HTTP: what it
lists, what readers read (at the latest version and by time travel), the ETag, paging,
pruning, and its errors in the specification's shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import deltalake
import httpx
import pyarrow as pa
import pytest
from iceberg_readers import duckdb_arrow, duckdb_connection, first_difference, independent_read
from pyiceberg.catalog.rest import (
    ConfigResponse,
    ListNamespaceResponse,
    ListTablesResponse,
    LoadCredentialsResponse,
    RestCatalog,
    TableResponse,
)
from pyiceberg.catalog.rest.response import ErrorResponse
from pyiceberg.exceptions import NoSuchTableError

from corpus import corpus_table
from sharing_server import TOKEN, RunningServer

OFFERED = ["ranges", "basic", "dv", "cm", "variant"]
CORPUS = {
    "basic": "dat__basic_append",
    "dv": "drs__table-with-dv-small",
    "cm": "drs__table_with_column_mapping",
}


def _holds(tables: dict[str, Path], name: str, version: int | None = None) -> pa.Table:
    """What the table holds, read by a reader independent of deltaport."""
    if name in CORPUS:
        found = independent_read(corpus_table(CORPUS[name]), version)
        assert found is not None
        return found[1]
    return deltalake.DeltaTable(str(tables[name]), version=version).to_pyarrow_table()


def _catalog(uri: str) -> RestCatalog:
    return RestCatalog("deltaport", uri=uri, token=TOKEN, warehouse="Sales")


def _get(uri: str, path: str, token: str | None = TOKEN, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    headers.update(kwargs.pop("headers", {}))
    return httpx.get(uri + path, headers=headers, timeout=60, **kwargs)


def test_config_names_the_share_and_the_routes(catalog_uri: str) -> None:
    answer = _get(catalog_uri, "/v1/config", params={"warehouse": "Sales"})
    config = ConfigResponse.model_validate_json(answer.content)
    assert config.overrides == {"prefix": "shares/Sales"}
    endpoints = {str(e) for e in config.endpoints or []}
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}" in endpoints
    assert all(not e.startswith(("PUT", "DELETE")) for e in endpoints)
    # with two shares, the warehouse must be named
    missing = _get(catalog_uri, "/v1/config")
    assert missing.status_code == 400
    assert _error(missing).type == "BadRequestException"


def _error(answer: httpx.Response) -> Any:
    """The error of an answer, as pyiceberg's REST client parses it."""
    return ErrorResponse.model_validate_json(answer.content).error


def test_listings_parse_as_pyiceberg_models(catalog_uri: str) -> None:
    namespaces = _get(catalog_uri, "/v1/shares/Sales/namespaces")
    parsed = ListNamespaceResponse.model_validate_json(namespaces.content)
    assert parsed.namespaces == [("d",), ("other",)]
    tables = _get(catalog_uri, "/v1/shares/Sales/namespaces/d/tables")
    listed = ListTablesResponse.model_validate_json(tables.content)
    assert [(t.namespace, t.name) for t in listed.identifiers] == [(("d",), n) for n in OFFERED]


def test_listing_through_pyiceberg(catalog_uri: str) -> None:
    catalog = _catalog(catalog_uri)
    assert catalog.list_namespaces() == [("d",), ("other",)]
    assert catalog.list_namespaces(("d",)) == []  # flat: a namespace has no children
    assert catalog.list_tables("d") == [("d", name) for name in OFFERED]
    assert catalog.namespace_exists("d") and not catalog.namespace_exists("nope")


@pytest.mark.parametrize("name", ["ranges", "basic", "dv", "cm"])
def test_pyiceberg_reads_each_table(
    catalog_uri: str, iceberg_tables: dict[str, Path], name: str
) -> None:
    table = _catalog(catalog_uri).load_table(f"d.{name}")
    expected = _holds(iceberg_tables, name)
    assert first_difference(table.scan().to_arrow(), expected) is None


def test_time_travel_means_what_it_means_in_delta(
    catalog_uri: str, iceberg_tables: dict[str, Path]
) -> None:
    table = _catalog(catalog_uri).load_table("d.ranges")
    snapshots = table.metadata.snapshots
    assert [s.snapshot_id for s in snapshots] == [1, 2, 3]
    for snapshot in snapshots:
        version = int(snapshot.summary["delta.version"])
        expected = _holds(iceberg_tables, "ranges", version)
        got = table.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
        assert first_difference(got, expected) is None
    refs = _catalog(catalog_uri).load_table("d.ranges")  # the reader's default
    assert refs.metadata.current_snapshot_id == 3


def test_partition_and_statistics_pruning_keep_every_matching_row(
    catalog_uri: str, iceberg_tables: dict[str, Path]
) -> None:
    table = _catalog(catalog_uri).load_table("d.ranges")
    assert len(list(table.scan().plan_files())) == 3
    assert len(list(table.scan(row_filter="region == 'us'").plan_files())) == 1
    assert len(list(table.scan(row_filter="id >= 200").plan_files())) == 1
    got = table.scan(row_filter="id >= 200 and id < 203").to_arrow()
    assert sorted(got.column("id").to_pylist()) == [200, 201, 202]
    everything = _holds(iceberg_tables, "ranges").to_pylist()
    eu = table.scan(row_filter="region == 'eu'").to_arrow().to_pylist()
    assert sorted(r["id"] for r in eu) == sorted(r["id"] for r in everything if r["region"] == "eu")


def test_duckdb_attaches_the_share(
    iceberg_server: RunningServer, iceberg_tables: dict[str, Path]
) -> None:
    con = duckdb_connection()
    con.execute(f"CREATE SECRET deltaport (TYPE iceberg, TOKEN '{TOKEN}')")
    con.execute(
        f"ATTACH 'Sales' AS sales (TYPE iceberg, ENDPOINT '{iceberg_server.base}/iceberg', "
        "SECRET deltaport)"
    )
    listed = {row[2] for row in con.execute("SHOW ALL TABLES").fetchall()}
    assert listed == set(OFFERED)
    for name in ("ranges", "basic", "dv", "cm"):
        got = duckdb_arrow(con, f"SELECT * FROM sales.d.{name}")
        assert first_difference(got, _holds(iceberg_tables, name)) is None, name
    pruned = duckdb_arrow(con, "SELECT id FROM sales.d.ranges WHERE region = 'us'")
    assert sorted(pruned.column("id").to_pylist()) == [100, 101, 102, 103, 104]


def test_etag_and_not_modified(catalog_uri: str) -> None:
    path = "/v1/shares/Sales/namespaces/d/tables/ranges"
    first = _get(catalog_uri, path)
    assert first.status_code == 200
    loaded = TableResponse.model_validate_json(first.content)
    assert loaded.metadata.current_snapshot_id == 3
    etag = first.headers["etag"]
    again = _get(catalog_uri, path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    refs = _get(catalog_uri, path, params={"snapshots": "refs"})
    assert refs.headers["etag"] != etag
    only = TableResponse.model_validate_json(refs.content).metadata
    assert [s.snapshot_id for s in only.snapshots] == [3]
    assert first.json()["metadata-location"].endswith(".metadata.json")
    bad = _get(catalog_uri, path, params={"snapshots": "some"})
    assert bad.status_code == 400


def test_head_routes(catalog_uri: str) -> None:
    head = httpx.head
    auth = {"Authorization": f"Bearer {TOKEN}"}
    base = catalog_uri + "/v1/shares/Sales/namespaces"
    assert head(base + "/d", headers=auth).status_code == 204
    assert head(base + "/nope", headers=auth).status_code == 404
    assert head(base + "/d/tables/basic", headers=auth).status_code == 204
    assert head(base + "/d/tables/nope", headers=auth).status_code == 404


def test_paging(catalog_uri: str) -> None:
    path = "/v1/shares/Sales/namespaces/d/tables"
    names: list[str] = []
    token = None
    while True:
        params = {"pageSize": "2", **({"pageToken": token} if token else {})}
        body = _get(catalog_uri, path, params=params)
        page = ListTablesResponse.model_validate_json(body.content)
        names += [i.name for i in page.identifiers]
        token = body.json()["next-page-token"]
        if token is None:
            break
    assert names == OFFERED
    # a digit that int() refuses (superscript two), and more digits than int() reads, too
    for size in ("0", "1001", "-1", "²", "٣", "9" * 5000):
        refused = _get(catalog_uri, path, params={"pageSize": size})
        assert refused.status_code == 400, (size[:10], refused.text)
        assert _error(refused).type == "BadRequestException"


def test_a_table_iceberg_cannot_hold_is_named_on_load(catalog_uri: str) -> None:
    answer = _get(catalog_uri, "/v1/shares/Sales/namespaces/d/tables/variant")
    assert answer.status_code == 400
    error = _error(answer)
    assert error.type == "BadRequestException" and "variant" in error.message


@pytest.mark.parametrize(
    ("path", "token", "status", "kind"),
    [
        ("/v1/shares/Sales/namespaces", None, 401, "NotAuthorizedException"),
        ("/v1/shares/Sales/namespaces", "wrong-token", 401, "NotAuthorizedException"),
        ("/v1/shares/Nope/namespaces", TOKEN, 404, "NoSuchNamespaceException"),
        ("/v1/shares/Sales/namespaces/nope/tables", TOKEN, 404, "NoSuchNamespaceException"),
        ("/v1/shares/Sales/namespaces/d/tables/nope", TOKEN, 404, "NoSuchTableException"),
        ("/v1/shares/Sales/views", TOKEN, 404, "NoSuchResourceException"),
    ],
)
def test_errors_in_the_specification_shape(
    catalog_uri: str, path: str, token: str | None, status: int, kind: str
) -> None:
    answer = _get(catalog_uri, path, token=token)
    assert answer.status_code == status
    error = _error(answer)
    assert (error.type, error.code) == (kind, status)
    assert set(answer.json()["error"]) == {"message", "type", "code"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/shares/Sales/namespaces"),
        ("DELETE", "/v1/shares/Sales/namespaces/d"),
        ("POST", "/v1/shares/Sales/namespaces/d/tables"),
        ("POST", "/v1/shares/Sales/namespaces/d/tables/basic"),
        ("DELETE", "/v1/shares/Sales/namespaces/d/tables/basic"),
    ],
)
def test_the_catalog_is_read_only(catalog_uri: str, method: str, path: str) -> None:
    answer = httpx.request(
        method, catalog_uri + path, headers={"Authorization": f"Bearer {TOKEN}"}, json={}
    )
    assert answer.status_code == 406
    assert _error(answer).type == "UnsupportedOperationException"


def test_credentials_and_metrics(catalog_uri: str) -> None:
    table = "/v1/shares/Sales/namespaces/d/tables/basic"
    credentials = _get(catalog_uri, table + "/credentials")
    assert (
        LoadCredentialsResponse.model_validate_json(credentials.content).storage_credentials == []
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    report = {"report-type": "scan-report", "table-name": "d.basic", "snapshot-id": 2}
    sent = httpx.post(catalog_uri + table + "/metrics", headers=auth, json=report)
    assert sent.status_code == 204
    # the specification's scan report: the fields no one here reads are accepted as they are
    scan = {**report, "filter": True, "schema-id": 0, "projected-field-ids": [1], "metrics": {}}
    assert httpx.post(catalog_uri + table + "/metrics", headers=auth, json=scan).status_code == 204
    bad = httpx.post(catalog_uri + table + "/metrics", headers=auth, content=b"[1")
    assert bad.status_code == 400
    # nested deeper than the decoder recurses (RecursionError was a 500), out of range
    for body in (
        b"[" * 100_000,
        b'{"a":' * 100_000,
        b"1e999999",
        b"[1]",
        # a field the document types, of another type
        b'{"snapshot-id": "2"}',
        b'{"report-type": 7}',
        b'{"table-name": []}',
    ):
        refused = httpx.post(catalog_uri + table + "/metrics", headers=auth, content=body)
        assert refused.status_code == 400, (body[:10], refused.text)
        assert _error(refused).type == "BadRequestException"
    with pytest.raises(NoSuchTableError):
        _catalog(catalog_uri).load_table("d.nope")
