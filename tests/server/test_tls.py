"""TLS: a self-signed certificate generated at start; an open server without a token."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest

from sharing_server import start_server, stop_server, table_entry


def test_self_signed_tls_open_server(tables: dict[str, Path], tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "ssl": {"selfSigned": True},
        "endpoint": "/sharing/v1",
        "shares": [
            {"name": "s", "schemas": [{"name": "d", "tables": [table_entry("t", tables["basic"])]}]}
        ],
    }
    server = start_server(config, tmp_path, scheme="https")
    try:
        with pytest.raises(httpx.ConnectError):
            httpx.get(server.url + "/shares")  # the certificate is not trusted
        with httpx.Client(base_url=server.url, verify=False, timeout=60) as client:
            assert client.get("/shares").json() == {"items": [{"name": "s"}]}
            lines = client.post("/shares/s/schemas/d/tables/t/query", json={}).text.splitlines()
            assert lines[2].startswith('{"file":{"url":"https://127.0.0.1:')
        host, port = server.base.removeprefix("https://").split(":")
        pem = ssl.get_server_certificate((host, int(port)))
        assert "BEGIN CERTIFICATE" in pem
    finally:
        stop_server(server)
