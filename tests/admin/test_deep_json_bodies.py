"""A JSON body nested deeper than the decoder recurses (100,000 nested arrays in a field
nobody asked for, or in a field that takes any value) is a 400 with its errorCode on every
route that takes JSON, never a 500: a decoder skips or keeps such a value by recursing
into it."""

from __future__ import annotations

import httpx

from admin_support import CatalogAdminServer
from sharing_server import RunningServer

NESTED = b"[" * 100_000 + b"]" * 100_000
DEEP = b'{"nested": ' + NESTED + b"}"
UC = "/api/2.1/unity-catalog"


def _refused(response: httpx.Response, code: str) -> None:
    assert response.status_code == 400, response.text[:300]
    body = response.json()
    assert body.get("errorCode", body.get("error_code")) == code, body


def test_the_sharing_listener_refuses_a_deep_body(server: RunningServer) -> None:
    with server.client() as http:
        table = "/shares/sales/schemas/default/tables/parted"
        _refused(http.post(f"{table}/query", content=DEEP), "MALFORMED_REQUEST")
    batch = httpx.post(server.base + "/delta-sharing/files", content=DEEP, timeout=30)
    _refused(batch, "INVALID_PARAMETER_VALUE")


def test_the_admin_listener_refuses_a_deep_body(catalog_admin_server: CatalogAdminServer) -> None:
    with catalog_admin_server.running.api() as api:
        share = b'{"name": "nested", "storage_root": ' + NESTED + b"}"  # a field of any value
        _refused(api.post(f"{UC}/shares", content=share), "MALFORMED_REQUEST")
        _refused(api.post(f"{UC}/recipients", content=DEEP), "INVALID_PARAMETER_VALUE")
        _refused(api.post("/api/shares", content=DEEP), "MALFORMED_REQUEST")
        assert api.get(f"{UC}/shares/nested").status_code == 404  # nothing was made
