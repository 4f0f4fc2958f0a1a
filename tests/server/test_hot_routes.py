"""``GET /shares`` and ``GET .../version`` are answered before routing: the answers must
be the ones the routes give, for every outcome (found, not found, bad token, bad page)."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import deltalake
import httpx
import msgspec
import pyarrow as pa
import pytest

from deltaport.config.loading import parse_config
from deltaport.server import create_app
from deltaport.server.http.hot_routes import table_names

TOKEN = "hot-routes-token"
ENDPOINT = "/delta-sharing"


def answers(app: Any, requests: list[tuple[str | None, str]]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            out = []
            for token, path in requests:
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                out.append(await client.get(path, headers=headers))
            return out

    return asyncio.run(run())


@pytest.fixture
def app(tmp_path: Path) -> Any:
    deltalake.write_deltalake(str(tmp_path / "t"), pa.table({"id": [1, 2]}))
    deltalake.write_deltalake(str(tmp_path / "t"), pa.table({"id": [3]}), mode="append")
    tables = [{"name": "T", "location": str(tmp_path / "t")}]
    raw = {
        "authorization": {"bearerToken": TOKEN},
        "shares": [
            {"name": "S", "schemas": [{"name": "d", "tables": tables}]},
            {"name": "other", "schemas": []},
        ],
    }
    return create_app(parse_config(raw, {}))


def _opened(body: bytes) -> Any:
    """A JSON answer with its ``nextPageToken`` opened to what it seals, less its expiry:
    the token carries the time, so two answers a second apart differ there alone."""
    if not body.startswith(b"{"):
        return body
    answer = json.loads(body)
    token = answer.get("nextPageToken")
    if token is not None:
        sealed = token.partition(".")[0]
        purpose, expires_at, payload = msgspec.msgpack.decode(
            base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))
        )
        assert expires_at > time.time()
        answer["nextPageToken"] = [purpose, payload]
    return answer


def test_answers_before_routing_equal_the_routes(app: Any) -> None:
    version = f"{ENDPOINT}/shares/s/schemas/D/tables/t/version"
    paths = [
        f"{ENDPOINT}/shares",
        f"{ENDPOINT}/shares?maxResults=1",
        f"{ENDPOINT}/shares?maxResults=-1",
        f"{ENDPOINT}/shares?pageToken=forged",
        version,
        version + "?startingTimestamp=2000-01-01T00:00:00Z",
        version + "?startingTimestamp=yesterday",
        f"{ENDPOINT}/shares/s/schemas/d/tables/nope/version",
        f"{ENDPOINT}/shares/nope/schemas/d/tables/t/version",
    ]
    requests = [(token, path) for token in (TOKEN, None, "wrong") for path in paths]
    fast = answers(app, requests)
    routed = answers(app.router, requests)
    statuses = set()
    for (_, path), a, b in zip(requests, fast, routed, strict=True):
        assert (a.status_code, _opened(a.content)) == (b.status_code, _opened(b.content)), path
        for header in ("delta-table-version", "content-type", "content-length"):
            assert a.headers.get(header) == b.headers.get(header), (path, header)
        statuses.add(a.status_code)
    assert statuses == {200, 400, 401, 404}
    assert fast[4].headers["delta-table-version"] == "1"
    assert _opened(fast[1].content)["nextPageToken"][1] == [ANY, 1]  # the next page: offset 1
    assert [s["name"] for s in fast[0].json()["items"]] == ["S", "other"]


def test_only_whole_version_paths_are_answered_before_routing() -> None:
    prefix = "/delta-sharing/shares/"
    assert table_names(prefix + "s/schemas/d/tables/t/version", prefix) == ("s", "d", "t")
    for path in (
        prefix + "s/schemas/d/tables/t/versions",
        prefix + "s/schemas/d/tables//version",
        prefix + "s/schemas/d/tables/t/x/version",
        prefix + "s/schema/d/tables/t/version",
        prefix + "s/schemas/d/table/t/version",
        "/other/shares/s/schemas/d/tables/t/version",
    ):
        assert table_names(path, prefix) is None, path
