"""Audit records of bounded size, and storms of refused requests kept as summaries, on a
real SQLite catalog with an injected clock: whatever a request sends, its record holds at
most the catalog's name limits (cut names marked) and numbers a BIGINT holds; from one
address, the first refusals of a window are kept whole and the rest counted in one
summary per status, written when the window ends or the log closes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from deltaport.catalog.database.connection import Database
from deltaport.catalog.database.migrations import migrate
from deltaport.observe import audit_storms
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import AuditFilter, read_page
from deltaport.observe.audit_storms import RefusalStorms

NOW_MS = 1_800_000_000_000
HOUR = 3600.0
WINDOW_MS = 60_000
LONG = "A" * 63_000


def _database(tmp_path: Path) -> Database:
    database = Database(f"sqlite:///{tmp_path}/catalog.db", create=True)
    migrate(database)
    return database


def _stored(database: Database) -> list[AuditRecord]:
    return read_page(database, AuditFilter(), 1000).records


def _refused(time_ms: int, address: str, status: int = 401) -> AuditRecord:
    return AuditRecord(
        time_ms=time_ms,
        operation="deltaSharingGetTableMetadata",
        status=status,
        duration_ms=0,
        client_address=address,
        share="sales",
        error_code="UNAUTHENTICATED" if status == 401 else "TOO_MANY_REQUESTS",
    )


def test_every_field_is_cut_to_its_bound_and_marked(tmp_path: Path) -> None:
    database = _database(tmp_path)
    lines = io.StringIO()
    log = AuditLog(database, lines, clock=lambda: NOW_MS / 1000, flush_seconds=HOUR)
    log.record(
        AuditRecord(
            time_ms=NOW_MS,
            operation="deltaSharingQueriedTable",
            status=200,
            duration_ms=3,
            recipient="R" * 300,
            admin="N" * 300,
            client_address="9" * 300,
            user_agent="U" * 10_000,
            share=LONG,
            table=f"{LONG}.{LONG}.{LONG}",
            target=LONG,
            version=2**64,
            end_version=-(2**70),
            files=3,
            bytes=2**63 - 1,
            error_code="E" * 1000,
        )
    )
    log.close()
    (stored,) = _stored(database)
    assert stored.share == "a" * 255 + "…"  # names are kept case-folded
    assert stored.table == "a" * 767 + "…"
    assert stored.target == "a" * 255 + "…"
    assert stored.recipient == "r" * 255 + "…"
    assert stored.admin == "N" * 255 + "…"
    assert stored.user_agent == "U" * 256 + "…"
    assert stored.client_address == "9" * 64 + "…"
    assert stored.error_code == "E" * 64 + "…"
    assert (stored.version, stored.end_version, stored.files) == (None, None, 3)
    assert stored.bytes == 2**63 - 1
    (line,) = lines.getvalue().splitlines()
    assert len(line.encode()) < 2500
    assert json.loads(line)["share"] == "A" * 255 + "…"


def test_a_storm_from_one_address_is_kept_as_summaries_once_its_window_ends(
    tmp_path: Path,
) -> None:
    database = _database(tmp_path)
    lines = io.StringIO()
    now = [NOW_MS / 1000]
    storms = RefusalStorms(WINDOW_MS, recorded=10)
    log = AuditLog(database, lines, clock=lambda: now[0], flush_seconds=HOUR, storms=storms)
    for i in range(10_000):
        log.record(_refused(NOW_MS + i, "203.0.113.9", 401 if i < 100 else 429))
    for i in range(3):
        log.record(_refused(NOW_MS + i, "198.51.100.4"))
    accepted = _refused(NOW_MS + 5, "203.0.113.9", 404)
    accepted.recipient = "acme"  # a recipient's refusal is its own record
    log.record(accepted)
    log.flush()
    first = _stored(database)
    assert len(first) == 10 + 3 + 1
    assert sum(r.client_address == "203.0.113.9" and r.recipient is None for r in first) == 10

    now[0] = (NOW_MS + WINDOW_MS) / 1000  # the window of both addresses ended
    log.flush()
    summaries = [r for r in _stored(database) if r.operation == "refusedRequests"]
    assert sorted((r.status, r.count, r.client_address) for r in summaries) == [
        (401, 90, "203.0.113.9"),
        (429, 9900, "203.0.113.9"),
    ]
    by_status = {r.status: r for r in summaries}
    assert (by_status[401].time_ms, by_status[401].duration_ms) == (NOW_MS + 10, 89)
    assert by_status[429].error_code == "TOO_MANY_REQUESTS"
    assert by_status[429].share is None
    assert sum(line.count('"refusedRequests"') for line in lines.getvalue().splitlines()) == 2

    # the next window keeps its first refusals whole again; a close writes its summary
    for i in range(12):
        log.record(_refused(NOW_MS + WINDOW_MS + i, "203.0.113.9", 429))
    log.close()
    stored = _stored(database)
    assert len(stored) == 14 + 2 + 10 + 1
    assert stored[0].operation == "refusedRequests" and stored[0].count == 2
    assert sum(r.count or 1 for r in stored if r.client_address == "203.0.113.9") == 10_000 + 1 + 12


def test_addresses_past_the_tracked_ones_are_counted_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(audit_storms, "ADDRESSES_KEPT", 3)
    database = _database(tmp_path)
    log = AuditLog(
        database,
        clock=lambda: NOW_MS / 1000,
        flush_seconds=HOUR,
        storms=RefusalStorms(WINDOW_MS, recorded=10),
    )
    for address in range(5):
        for i in range(20):
            log.record(_refused(NOW_MS + i, f"2001:db8::{address}"))
    log.close()
    stored = _stored(database)
    whole = [r for r in stored if r.operation != "refusedRequests"]
    assert len(whole) == 3 * 10 + 10
    summaries = sorted(
        ((r.client_address or "", r.count) for r in stored if r.operation == "refusedRequests"),
    )
    assert summaries == [("", 30), ("2001:db8::0", 10), ("2001:db8::1", 10), ("2001:db8::2", 10)]


def test_server_errors_are_never_summarised() -> None:
    """The 503s of a catalog outage come with no recipient (its token could not be looked
    up): each keeps its own record, however many there are; a 4xx storm is still counted."""
    storms = RefusalStorms(WINDOW_MS, recorded=2)
    outage = [_refused(NOW_MS + i, "192.0.2.9", status=503) for i in range(50)]
    assert all(storms.keep(record) for record in outage)
    refusals = [storms.keep(_refused(NOW_MS + i, "192.0.2.9", status=401)) for i in range(5)]
    assert refusals == [True, True, False, False, False]
