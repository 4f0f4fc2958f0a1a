"""A server on a SQLite catalog of its own for the activity pages' tests: two shares, three
tables, recipients with credentials that expire at known times, and audit records written
at known times around now (so the overview's figures are exact: nothing else writes
records on this server unless a test calls the catalog API)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from admin_support import ADMIN_TOKEN, AdminServer, _await_admin
from deltaport.catalog.rows import RecipientSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.observe import audit_record as ops
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import write
from sharing_server import free_port, start_server, stop_server

HOUR = 3_600_000
DAY = 24 * HOUR
SIGNING_KEY = "a-fixed-key-for-activity-tests"
STORAGE_KEY = "c3RvcmFnZS1rZXktbmV2ZXItdG8tYmUtc2hvd24="
EVIL_AGENT = '=HYPERLINK("http://x")'
N_PAGED = 2_500
"""Records of the recipient ``bulk``: three export pages, fifty-one page pages."""


@dataclass
class ActivityServer:
    running: AdminServer
    catalog: SqlCatalog
    now_ms: int
    secrets: list[str] = field(default_factory=list)
    """Every credential the catalog handed out: never to be rendered."""


def records(now: int) -> list[AuditRecord]:
    """Three requests in the last hour (one refused), two more in the last day, one two
    days ago, and :data:`N_PAGED` of ``bulk`` eight days ago."""
    query = ops.QUERIED_TABLE
    made = [
        AuditRecord(
            time_ms=now - 10 * 60_000,
            operation=query,
            status=200,
            duration_ms=4,
            recipient="acme",
            share="sales",
            table="sales.eu.orders",
            version=3,
            files=2,
            bytes=1000,
            client_address="203.0.113.7",
            user_agent=EVIL_AGENT,
        ),
        AuditRecord(
            time_ms=now - 20 * 60_000,
            operation=query,
            status=404,
            duration_ms=1,
            recipient="acme",
            share="sales",
            table="sales.eu.gone",
            error_code="RESOURCE_DOES_NOT_EXIST",
        ),
        AuditRecord(
            time_ms=now - 30 * 60_000,
            operation=ops.LIST_SHARES,
            status=200,
            duration_ms=2,
            recipient="globex",
            bytes=200,
        ),
        AuditRecord(
            time_ms=now - 5 * HOUR,
            operation=query,
            status=200,
            duration_ms=9,
            recipient="globex",
            share="lab",
            table="lab.corpus.dvcm",
            version=1,
            end_version=2,
            files=4,
            bytes=4000,
        ),
        AuditRecord(
            time_ms=now - 6 * HOUR,
            operation=ops.CREATE_SHARE,
            status=201,
            duration_ms=3,
            admin="token-1",
            share="lab",
        ),
        AuditRecord(
            time_ms=now - 2 * DAY,
            operation=query,
            status=500,
            duration_ms=1,
            recipient="acme",
            table="sales.eu.orders",
            error_code="INTERNAL_ERROR",
        ),
    ]
    made += [
        AuditRecord(
            time_ms=now - 8 * DAY + i,
            operation=ops.LIST_SHARES,
            status=200,
            duration_ms=1,
            recipient="bulk",
            bytes=10,
        )
        for i in range(N_PAGED)
    ]
    return made


@pytest.fixture(scope="module")
def activity_server(
    admin_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ActivityServer]:
    tmp = tmp_path_factory.mktemp("activity-server")
    url = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(url)
    catalog.create_share("sales")
    catalog.create_share("lab")
    catalog.add_table("sales", "eu", "orders", TableSpec(str(admin_tables["left"])))
    catalog.add_table("sales", "eu", "orders_v2", TableSpec(str(admin_tables["right"])))
    catalog.add_table("lab", "corpus", "dvcm", TableSpec(str(admin_tables["dvcm"])))
    soon = catalog.create_recipient("acme", RecipientSpec(token_lifetime=timedelta(days=3)))
    later = catalog.create_recipient("globex", RecipientSpec(token_lifetime=timedelta(days=30)))
    revoked = catalog.create_recipient("initech", RecipientSpec(token_lifetime=timedelta(days=1)))
    catalog.revoke("initech")
    client = catalog.create_recipient(
        "umbrella",
        RecipientSpec(
            token_lifetime=timedelta(days=60), authentication_type="OAUTH_CLIENT_CREDENTIALS"
        ),
    )
    link = catalog.create_recipient_with_link(
        "hooli",
        RecipientSpec(endpoint="http://127.0.0.1:1/delta-sharing"),
        link_lifetime=timedelta(days=2),
    )
    now = int(time.time() * 1000)
    write(catalog.database, records(now))
    port = free_port()
    config = {
        "signingKey": SIGNING_KEY,
        "storage": [
            {
                "prefix": "az://vault/",
                "options": {
                    "azure_storage_account_name": "vault",
                    "azure_storage_account_key": STORAGE_KEY,
                },
            }
        ],
        "admin": {"port": port, "tokens": [ADMIN_TOKEN], "failedAuthLimit": 1000},
    }
    sharing = start_server(config, tmp / "server", catalog=url)
    server = ActivityServer(_await_admin(sharing, port), catalog, now)
    server.secrets += [soon.token, later.token, revoked.token, link.token, link.url]
    server.secrets += [client.token, ADMIN_TOKEN, SIGNING_KEY, STORAGE_KEY]
    server.secrets += [catalog.hash_token(soon.token), catalog.hash_token(client.token)]
    yield server
    stop_server(sharing)
