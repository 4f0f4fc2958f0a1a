"""Server-side failures answer with the spec's error bodies and no internals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from deltaport.config.loading import parse_config
from deltaport.server import create_app


class AppClient:
    """Drives the ASGI app in process (the failures here need no network)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                return await client.request(method, path, **kwargs)

        return asyncio.run(send())

    def get(self, path: str) -> httpx.Response:
        return self.request("GET", path)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)


@pytest.fixture
def app_client(tmp_path: Path) -> AppClient:
    corrupt = tmp_path / "corrupt-table-location"
    (corrupt / "_delta_log").mkdir(parents=True)
    (corrupt / "_delta_log" / f"{0:020d}.json").write_text("{this is not json\n")
    tables: list[dict[str, Any]] = [
        {"name": "corrupt", "location": str(corrupt)},
        {"name": "missing", "location": str(tmp_path / "secret-missing-place")},
    ]
    raw = {"shares": [{"name": "s", "schemas": [{"name": "d", "tables": tables}]}]}
    return AppClient(create_app(parse_config(raw, {})))


def test_corrupt_log_names_table_and_version_without_details(app_client: AppClient) -> None:
    for response in (
        app_client.post("/delta-sharing/shares/s/schemas/d/tables/corrupt/query", json={}),
        app_client.get("/delta-sharing/shares/s/schemas/d/tables/corrupt/metadata"),
        app_client.get("/delta-sharing/shares/s/schemas/d/tables/corrupt/version"),
    ):
        assert response.status_code == 500
        assert response.json() == {
            "errorCode": "TABLE_CORRUPT",
            "message": "table s.d.corrupt cannot be read at version 0: its Delta log is "
            "corrupt and the provider has to repair it",
        }
        assert "corrupt-table-location" not in response.text


def test_missing_table_data_is_404_without_location(app_client: AppClient) -> None:
    response = app_client.get("/delta-sharing/shares/s/schemas/d/tables/missing/version")
    assert response.status_code == 404
    body = response.json()
    assert body["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    assert "secret-missing-place" not in json.dumps(body)
