"""No secret leaks: a full scenario on a catalog server, then a scan of everything it wrote
or answered besides the answers meant to carry a secret.

The scenario: recipients with a token, an OAuth client and an activation link; a table in
S3 (moto) read through pre-signed URLs and through vended STS credentials (dir access), and
a local table through the server's own signed file URLs; refused requests of every kind
(wrong token, wrong client secret, a used link, a forged page token, an unknown share, bad
bodies, a wrong admin token); the console's pages.
Scanned: the server log (both listeners, one file), every error body, the audit records in
the database and as JSON lines, ``/metrics`` and the console pages. Searched for: bearer
tokens, the OAuth client secret and access token, the activation token, admin tokens, the
signing key, the storage secret key, the vended secret key and session token, page and
refresh tokens, and the query strings (signatures) of signed URLs.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import ADMIN_TOKEN, AdminServer, login
from catalog_lake import storage_entry, write_lake_table
from deltaport.catalog.database.connection import sqlite_path
from deltaport.catalog.sql_store import SqlCatalog
from emulators import S3Emulator
from sharing_server import RunningServer, free_port, start_server, stop_server
from waiting import wait_until

BUCKET = "secret-scan"
LOCATION = f"s3://{BUCKET}/tables/t"
SIGNING_KEY = "scan-signing-key-8c1f2d0b"
STORAGE_SECRET = "scan-storage-secret-7d3e9a21"
TABLE = "/shares/s/schemas/sc/tables/t"
SIGNED = ("x-amz-signature=", "sig=", "x-amz-security-token=")
END = {"delta-sharing-capabilities": "responseformat=parquet;includeendstreamaction=true"}


@dataclass
class Scan:
    server: RunningServer
    admin: AdminServer
    catalog: str
    audit_lines: Path
    local: Path
    secrets: set[str] = field(default_factory=set)
    error_bodies: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)

    def keep(self, *values: Any) -> None:
        self.secrets.update(str(v) for v in values if v)

    def refused(self, answer: httpx.Response, status: int) -> None:
        assert answer.status_code == status, answer.text
        self.error_bodies.append(answer.text)


@pytest.fixture(scope="module")
def scan(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scan]:
    tmp = tmp_path_factory.mktemp("secret-scan")
    s3_emulator.create_bucket(BUCKET)
    write_lake_table(s3_emulator, LOCATION)
    local = tmp / "local"
    write_deltalake(str(local), pa.table({"id": [1, 2, 3]}))
    entry = storage_entry(s3_emulator, BUCKET)
    entry["options"] = {**entry["options"], "aws_secret_access_key": STORAGE_SECRET}
    port = free_port()
    catalog = f"sqlite:///{tmp}/catalog.db"
    audit_lines = tmp / "audit.jsonl"
    config = {
        "signingKey": SIGNING_KEY,
        "storage": [entry],
        "admin": {"port": port, "tokens": [ADMIN_TOKEN], "failedAuthLimit": 1000},
        "audit": {"jsonLines": str(audit_lines)},
    }
    SqlCatalog(catalog).database.close()  # a new, empty catalog
    server = start_server(config, tmp / "server", catalog=catalog)
    try:
        admin = AdminServer(server, f"http://127.0.0.1:{port}")
        scan = Scan(server, admin, catalog, audit_lines, local=local)
        scan.keep(ADMIN_TOKEN, SIGNING_KEY, STORAGE_SECRET)
        _scenario(scan)
        yield scan
    finally:
        stop_server(server)


def _scenario(scan: Scan) -> None:
    server = scan.server
    with scan.admin.api() as api:
        _made(api.post("/api/shares", json={"name": "s"}))
        body = {
            "name": "s.sc.t",
            "location": LOCATION,
            "accessModes": ["url", "dir"],
            "historyShared": True,
        }
        _made(api.post("/api/tables", json=body))
        _made(api.post("/api/tables", json={"name": "s.sc.local", "location": str(scan.local)}))
        plain = _made(api.post("/api/recipients", json={"name": "plain"}))["profile"]
        oauth = _made(
            api.post(
                "/api/recipients",
                json={"name": "oauth", "authenticationType": "OAUTH_CLIENT_CREDENTIALS"},
            )
        )["profile"]
        link = _made(
            api.post(
                "/api/recipients",
                json={"name": "linked", "activation": True, "endpoint": server.url},
            )
        )["activation"]
        for name in ("plain", "oauth", "linked"):
            granted = api.post("/api/shares/s/grants", json={"recipient": name})
            assert granted.status_code in (200, 201, 204), granted.text
        scan.keep(plain["bearerToken"], oauth["clientSecret"], link["token"])
        scan.refused(api.post("/api/recipients", json={"name": 3}), 400)
    with httpx.Client(base_url=scan.admin.admin, timeout=30) as stranger:
        wrong_admin = "wrong-admin-token-0f9e8d"
        scan.keep(wrong_admin)
        stranger.headers["Authorization"] = f"Bearer {wrong_admin}"
        scan.refused(stranger.get("/api/catalog"), 401)

    activated = httpx.get(link["url"])
    assert activated.status_code == 200, activated.text
    scan.keep(activated.json()["bearerToken"])
    scan.refused(httpx.get(link["url"]), 404)

    token_url = server.url + "/oauth/token"
    form = {"grant_type": "client_credentials"}
    credentials = (oauth["clientId"], oauth["clientSecret"])
    issued = wait_until(  # until the server's catalog has the new client (polled)
        lambda: (a := httpx.post(token_url, data=form, auth=credentials)).status_code == 200 and a,
        10,
        "the new OAuth client",
        0.05,
    )
    scan.keep(issued.json()["access_token"])
    scan.refused(httpx.post(token_url, data=form, auth=(oauth["clientId"], "not-it")), 401)

    with server.client(plain["bearerToken"]) as c:
        assert c.get("/shares").status_code == 200
        first = _lines(c.post(f"{TABLE}/query", json={"maxFiles": 1}, headers=END))
        whole = _lines(c.post(f"{TABLE}/query", json={"includeRefreshToken": True}, headers=END))
        end = first[-1]["endStreamAction"]
        scan.keep(end["nextPageToken"], whole[-1]["endStreamAction"]["refreshToken"])
        for line in first + whole:
            if "file" in line:
                query = urlsplit(line["file"]["url"]).query
                signatures = [p for p in query.split("&") if p.lower().startswith(SIGNED)]
                assert signatures, query
                scan.keep(query, *(part.split("=", 1)[1] for part in signatures))
                assert httpx.get(line["file"]["url"]).status_code == 200
        local = _lines(c.post("/shares/s/schemas/sc/tables/local/query", json={}))
        for line in local:
            if "file" in line:
                query = urlsplit(line["file"]["url"]).query
                scan.keep(query, query.split("sig=", 1)[1].split("&")[0])
                assert httpx.get(line["file"]["url"]).status_code == 200
        vended = c.post(f"{TABLE}/temporary-table-credentials", json={})
        assert vended.status_code == 200, vended.text
        aws = vended.json()["credentials"]["awsTempCredentials"]
        scan.keep(aws["secretAccessKey"], aws["sessionToken"])
        forged = end["nextPageToken"][:-4] + "AAAA"
        scan.refused(c.post(f"{TABLE}/query", json={"maxFiles": 1, "pageToken": forged}), 400)
        scan.refused(c.post(f"{TABLE}/query", json={"maxFiles": "x"}), 400)
        scan.refused(c.get("/shares/nope/schemas"), 404)
    with server.client(issued.json()["access_token"]) as c:
        assert c.get("/shares").status_code == 200
    with server.client("not-a-token-" + plain["bearerToken"][::-1]) as c:
        scan.keep("not-a-token-" + plain["bearerToken"][::-1])
        scan.refused(c.get("/shares"), 401)

    with login(scan.admin) as console:
        for path in (
            "/console",
            "/console/shares",
            "/console/tables",
            "/console/recipients",
            "/console/recipients/plain",
            "/console/recipients/oauth",
            "/console/recipients/linked",
            "/console/audit",
        ):
            page = console.get(path, follow_redirects=True)
            assert page.status_code == 200, path
            scan.pages.append(page.text)


def _made(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code in (200, 201), answer.text
    return dict(answer.json()) if answer.content else {}


def _lines(answer: httpx.Response) -> list[dict[str, Any]]:
    assert answer.status_code == 200, answer.text
    return [json.loads(line) for line in answer.text.splitlines()]


def _leaks(scan: Scan, where: str, text: str) -> list[str]:
    return [f"{where}: {secret[:12]}..." for secret in scan.secrets if secret in text]


def test_the_scenario_collected_every_kind_of_secret(scan: Scan) -> None:
    assert len(scan.secrets) >= 15
    assert len(scan.error_bodies) >= 8


def test_no_secret_in_logs_error_bodies_audit_metrics_or_pages(scan: Scan) -> None:
    with scan.admin.api() as api:
        metrics = api.get("/metrics")
    assert metrics.status_code == 200
    stop_server(scan.server)  # the audit log's last records and the log's last lines written
    with sqlite3.connect(sqlite_path(scan.catalog)) as db:
        records = db.execute("SELECT * FROM audit_records").fetchall()
    log = scan.server.log()
    assert "/public/data_sharing_activation/REDACTED HTTP/1.1" in log  # access lines kept
    assert "sig=REDACTED" in log  # the downloads of local files
    audit_lines = scan.audit_lines.read_text()
    assert len(records) >= 15 and len(audit_lines.splitlines()) >= 15
    leaks = [
        *_leaks(scan, "server log", log),
        *_leaks(scan, "audit records", repr(records)),
        *_leaks(scan, "audit JSON lines", audit_lines),
        *_leaks(scan, "/metrics", metrics.text),
        *[leak for body in scan.error_bodies for leak in _leaks(scan, "error body", body)],
        *[leak for page in scan.pages for leak in _leaks(scan, "console page", page)],
    ]
    assert leaks == []
