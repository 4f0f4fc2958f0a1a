"""The queries behind the console's overview, on SQLite and PostgreSQL: the audit log's
volume by stretch of time and its newest errors, the catalog's counts and the credentials
that expire soon; SQLite answers them from the indexes of the migration that added them;
and the export reads the log a page at a time as it is consumed."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest

from deltaport.catalog.rows import RecipientSpec, TableSpec, counts
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import expiring
from deltaport.console.activity import export
from deltaport.console.activity.overview import activity
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import (
    MAX_PAGE_SIZE,
    AuditFilter,
    Volume,
    newest_errors,
    volume,
    write,
)
from postgres import postgres_server, postgres_url  # noqa: F401

NOW = 1_800_000_000_000
MINUTE = 60_000


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlCatalog:
    if request.param == "sqlite":
        return SqlCatalog(f"sqlite:///{tmp_path}/catalog.db")
    return SqlCatalog(str(request.getfixturevalue("postgres_url")))


def _record(time_ms: int, status: int = 200, size: int | None = 10) -> AuditRecord:
    return AuditRecord(
        time_ms=time_ms, operation="deltaSharingQueriedTable", status=status, duration_ms=1,
        recipient="acme", bytes=size,
    )  # fmt: skip


def test_volume_sums_each_stretch_from_the_oldest(store: SqlCatalog) -> None:
    write(
        store.database,
        [
            _record(NOW - 60 * MINUTE),  # the first bucket's first millisecond
            _record(NOW - 31 * MINUTE, 404, None),
            _record(NOW - 30 * MINUTE, 500),
            _record(NOW - 1),  # the last bucket's last millisecond
            _record(NOW),  # not yet: until is exclusive
            _record(NOW - 60 * MINUTE - 1),  # before since
        ],
    )
    found = volume(store.database, NOW - 60 * MINUTE, NOW, 30 * MINUTE)
    assert found == [Volume(2, 10, 1), Volume(2, 20, 1)]
    assert volume(store.database, NOW - 90 * MINUTE, NOW, 60 * MINUTE) == [
        Volume(3, 20, 1),
        Volume(2, 20, 1),
    ]
    assert volume(store.database, NOW + 1, NOW + 10, 5) == [Volume(), Volume()]


def test_newest_errors_are_the_newest_of_status_400_and_up(store: SqlCatalog) -> None:
    write(
        store.database,
        [_record(NOW - i, 200) for i in range(50)]
        + [_record(NOW - 1000 - i, 400 + i) for i in range(5)]
        + [_record(NOW - 5000, 399)],
    )
    assert [r.status for r in newest_errors(store.database, 3)] == [400, 401, 402]
    assert len(newest_errors(store.database, 10)) == 5


def test_counts_and_the_credentials_that_expire_soon(store: SqlCatalog) -> None:
    store.create_share("sales")
    store.add_table("sales", "eu", "orders", TableSpec("/data/orders"))
    store.create_recipient("acme", RecipientSpec(token_lifetime=timedelta(days=2)))
    store.create_recipient("globex", RecipientSpec(token_lifetime=timedelta(days=20)))
    store.create_recipient("never")
    store.create_recipient("initech", RecipientSpec(token_lifetime=timedelta(days=1)))
    store.revoke("initech")
    store.create_recipient(
        "oauth",
        RecipientSpec(
            token_lifetime=timedelta(days=3), authentication_type="OAUTH_CLIENT_CREDENTIALS"
        ),
    )
    store.create_recipient_with_link(
        "hooli",
        RecipientSpec(endpoint="https://x.test/delta-sharing"),
        link_lifetime=timedelta(hours=5),
    )
    now = int(time.time() * 1000)
    week = 7 * 86_400_000
    assert counts(store.database).__dict__ == {"shares": 1, "tables": 1, "recipients": 6}
    soon = expiring(store.database, now, now + week, 10)
    assert [(e.recipient, e.kind) for e in soon] == [
        ("hooli", "activation link"),
        ("acme", "token"),
        ("oauth", "OAuth client"),
    ]
    assert [e.recipient for e in expiring(store.database, now, now + week, 1)] == ["hooli"]


def test_sqlite_reads_the_overview_from_its_indexes(tmp_path: Path) -> None:
    store = SqlCatalog(f"sqlite:///{tmp_path}/catalog.db")
    database = store.database
    volume_plan = database.query(
        "EXPLAIN QUERY PLAN SELECT COUNT(*), SUM(bytes), "
        "SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END) FROM audit_records "
        "WHERE time_ms >= 1 AND time_ms < 2"
    )
    assert "COVERING INDEX audit_records_volume" in str(volume_plan)
    errors_plan = database.query(
        "EXPLAIN QUERY PLAN SELECT id FROM audit_records WHERE status >= 400 "
        "ORDER BY time_ms DESC, id DESC LIMIT 10"
    )
    assert "audit_records_errors" in str(errors_plan)
    assert "TEMP B-TREE" not in str(errors_plan)


def test_the_export_reads_a_page_as_it_is_consumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlCatalog(f"sqlite:///{tmp_path}/catalog.db")
    write(store.database, [_record(NOW - i) for i in range(2 * MAX_PAGE_SIZE + 5)])
    reads: list[str | None] = []
    real = export.read_page

    def counted(*args: object) -> object:
        reads.append(args[3])  # type: ignore[arg-type]
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(export, "read_page", counted)
    chunks = export.json_lines_chunks(export.records(store.database, AuditFilter()))
    first = next(chunks)
    assert len(reads) == 1 and first.count(b"\n") == MAX_PAGE_SIZE
    rest = list(chunks)
    assert len(reads) == 3 and sum(c.count(b"\n") for c in [first, *rest]) == 2 * MAX_PAGE_SIZE + 5


def test_the_overview_at_a_given_moment(store: SqlCatalog) -> None:
    hour = 60 * MINUTE
    write(
        store.database,
        [
            _record(NOW - hour),  # the last hour's first millisecond
            _record(NOW - hour - 1, 503),  # the hour before
            _record(NOW - 24 * hour),  # the day's first millisecond
            _record(NOW - 24 * hour - 1),  # older than a day
            _record(NOW),  # not yet
        ],
    )
    found = activity(store.database, NOW)
    assert (found.hour, found.day) == (Volume(1, 10, 0), Volume(3, 30, 1))
    assert [bar.label.split(": ")[1] for bar in found.chart.bars] == (
        ["1 request"] + ["0 requests"] * 21 + ["1 request, 1 error", "1 request"]
    )
    assert found.chart.peak == 1
    assert found.chart.bars[0].label.startswith("08:00–09:00 UTC")  # NOW is 08:00 UTC
    assert [r.status for r in found.errors] == [503]
