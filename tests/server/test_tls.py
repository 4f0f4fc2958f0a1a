"""TLS: a self-signed certificate generated at start; an open server without a token; the
client over TLS, with the certificate trusted and without."""

from __future__ import annotations

import json
import socket
import ssl
from pathlib import Path
from typing import Any

import deltalake
import httpx
import pyarrow as pa
import pytest

import deltaport.client as dc
from sharing_server import free_port, start_server, stop_server, table_entry


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


def test_client_over_tls_trusts_only_what_the_trust_store_holds(
    tables: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the server's certificate in ``SSL_CERT_FILE`` the client reads the table, its
    file batches and downloads going over TLS too; without it the read fails at once with
    a message saying what to do (a refused certificate is not retried)."""
    config: dict[str, Any] = {
        "ssl": {"selfSigned": True},
        "shares": [
            {"name": "s", "schemas": [{"name": "d", "tables": [table_entry("t", tables["basic"])]}]}
        ],
    }
    server = start_server(config, tmp_path / "server", scheme="https")
    try:
        host, port = server.base.removeprefix("https://").split(":")
        certificate = tmp_path / "server.pem"
        certificate.write_text(ssl.get_server_certificate((host, int(port))))
        profile = tmp_path / "profile.share"
        profile.write_text(
            json.dumps({"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": "-"})
        )
        url = f"{profile}#s.d.t"
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        with pytest.raises(dc.SharingError, match="TLS certificate was not accepted") as refused:
            dc.load_as_arrow(url)
        assert "attempts" not in str(refused.value)
        assert "SSL_CERT_FILE" in str(refused.value)

        monkeypatch.setenv("SSL_CERT_FILE", str(certificate))
        table = dc.load_as_arrow(url)
        expected = pa.table(deltalake.DeltaTable(str(tables["basic"])).to_pyarrow_table())
        assert table.num_rows == expected.num_rows > 0
        assert sorted(table.to_pylist(), key=str) == sorted(
            expected.select(table.column_names).to_pylist(), key=str
        )
    finally:
        stop_server(server)


STRONG = "ECDHE-ECDSA-AES128-GCM-SHA256:@SECLEVEL=0"
WEAK = "ECDHE-ECDSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA:AES128-GCM-SHA256:@SECLEVEL=0"
"""CBC modes and RSA key exchange: what a TLS 1.2 client must not get."""


def handshake(port: int, version: ssl.TLSVersion, ciphers: str = "ALL:@SECLEVEL=0") -> str | None:
    """The protocol a client offering only ``version`` and ``ciphers`` gets, or None."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_ciphers(ciphers)
    context.minimum_version = context.maximum_version = version
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            context.wrap_socket(raw) as wrapped,
        ):
            return wrapped.version()
    except (ssl.SSLError, OSError):
        return None


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1_1 is deprecated:DeprecationWarning")
def test_tls_answers_carry_hsts_and_the_generated_key_is_removed_on_stop(
    tables: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both listeners send Strict-Transport-Security over TLS and accept only TLS 1.2 with
    forward-secret AEAD suites, or TLS 1.3; the generated key's directory
    (under TMPDIR) is gone once the server stops; an admin listener bound to a non-loopback
    address is warned about."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    admin_port = free_port()
    config: dict[str, Any] = {
        "ssl": {"selfSigned": True},
        "admin": {"port": admin_port, "host": "0.0.0.0", "tokens": ["tls-admin-token-0123456"]},
        "shares": [
            {"name": "s", "schemas": [{"name": "d", "tables": [table_entry("t", tables["basic"])]}]}
        ],
    }
    server = start_server(config, tmp_path / "server", scheme="https")
    try:
        assert [p.name[:13] for p in temporary.iterdir()] == ["deltaport-tls"]
        with httpx.Client(verify=False, timeout=60) as client:
            sharing = client.get(server.url + "/shares")
            admin = client.get(f"https://127.0.0.1:{admin_port}/console/login")
        assert sharing.headers["strict-transport-security"] == "max-age=31536000"
        assert admin.headers["strict-transport-security"] == "max-age=31536000"
        for port in (int(server.base.rsplit(":", 1)[1]), admin_port):
            assert handshake(port, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
            assert handshake(port, ssl.TLSVersion.TLSv1_2, STRONG) == "TLSv1.2"
            assert handshake(port, ssl.TLSVersion.TLSv1_1) is None
            assert handshake(port, ssl.TLSVersion.TLSv1_2, WEAK) is None
    finally:
        stop_server(server)
    assert server.process.returncode == 0
    assert list(temporary.iterdir()) == []
    assert "admin listener (console and admin API) is bound to 0.0.0.0" in server.log()
