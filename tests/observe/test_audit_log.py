"""The audit log's writer and store on a real SQLite catalog: nothing is written on the
request path, a close writes what is buffered, a database that refuses keeps the records
for the next write, retention removes by an injected clock; a YAML server without a
catalog database writes JSON lines only; the OpenAPI document names what the route reads."""

from __future__ import annotations

import io
import json
from pathlib import Path

import msgspec
import pytest

from deltaport.admin.openapi.document import admin_openapi
from deltaport.catalog.database.connection import Database
from deltaport.catalog.database.migrations import migrate
from deltaport.observe.audit_log import DAY_MS, AuditLog
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import AuditFilter, read_page
from deltaport.observe.metrics import REGISTRY
from sharing_server import TOKEN, start_server, stop_server, table_entry, write_partitioned_table

NOW_MS = 1_800_000_000_000
HOUR = 3600.0


def _record(time_ms: int, recipient: str = "acme") -> AuditRecord:
    return AuditRecord(
        time_ms=time_ms, operation="deltaSharingListShares", status=200, duration_ms=1,
        recipient=recipient,
    )  # fmt: skip


def _database(tmp_path: Path, migrated: bool = True) -> Database:
    database = Database(f"sqlite:///{tmp_path}/catalog.db", create=True)
    if migrated:
        migrate(database)
    return database


def _stored(database: Database) -> list[AuditRecord]:
    return read_page(database, AuditFilter(), 1000).records


def test_records_wait_for_the_writer_and_a_close_writes_them(tmp_path: Path) -> None:
    database = _database(tmp_path)
    lines = io.StringIO()
    log = AuditLog(database, lines, clock=lambda: NOW_MS / 1000, flush_seconds=HOUR)
    for i in range(3):
        log.record(_record(NOW_MS + i))
    assert _stored(database) == [] and lines.getvalue() == ""
    log.close()
    assert [r.time_ms for r in _stored(database)] == [NOW_MS + 2, NOW_MS + 1, NOW_MS]
    assert [json.loads(line)["time"] for line in lines.getvalue().splitlines()] == [
        "2027-01-15T08:00:00.000Z",
        "2027-01-15T08:00:00.001Z",
        "2027-01-15T08:00:00.002Z",
    ]
    assert log.written == 3 and log.dropped == 0


def test_a_database_that_refuses_keeps_the_records_for_the_next_write(tmp_path: Path) -> None:
    database = _database(tmp_path, migrated=False)  # no audit_records table: inserts fail
    lines = io.StringIO()
    log = AuditLog(database, lines, flush_seconds=HOUR)
    log.record(_record(NOW_MS))
    log.flush()
    assert log.written == 0 and lines.getvalue() == ""  # not shipped before it is kept
    migrate(database)
    log.record(_record(NOW_MS + 1))
    log.close()
    assert [r.time_ms for r in _stored(database)] == [NOW_MS + 1, NOW_MS]
    assert len(lines.getvalue().splitlines()) == 2


def _counted(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


def test_records_written_and_dropped_are_counted_in_the_metrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the buffer's bound the oldest records are dropped; a stop while the database
    still refuses loses the rest: both counted, and what is written too."""
    monkeypatch.setattr("deltaport.observe.audit_log.MAX_BUFFERED", 3)
    written = _counted("deltaport_audit_records_written_total")
    dropped = _counted("deltaport_audit_records_dropped_total")
    database = _database(tmp_path, migrated=False)  # inserts fail
    log = AuditLog(database, flush_seconds=HOUR)
    for i in range(5):
        log.record(_record(NOW_MS + i))
    log.flush()
    assert log.dropped == 2
    assert _counted("deltaport_audit_records_dropped_total") - dropped == 2
    migrate(database)
    log.flush()
    assert _counted("deltaport_audit_records_written_total") - written == 3
    with database.transaction() as tx:
        tx.execute("DROP TABLE audit_records")
    log.record(_record(NOW_MS + 9))
    log.close()
    assert log.written == 3 and log.dropped == 3
    assert _counted("deltaport_audit_records_dropped_total") - dropped == 3


def test_retention_removes_what_is_older_by_the_clock(tmp_path: Path) -> None:
    database = _database(tmp_path)
    now = [NOW_MS / 1000]
    log = AuditLog(database, retention_days=7, clock=lambda: now[0], flush_seconds=HOUR)
    for days_ago in (8, 7, 6, 0):
        log.record(_record(NOW_MS - days_ago * DAY_MS))
    log.flush()
    assert log.remove_expired() == 1  # 7 days ago is still kept
    now[0] += 1 / 1000 + 1  # a second later, 7 days ago is past
    assert log.remove_expired() == 1
    log.close()
    assert [r.time_ms for r in _stored(database)] == [NOW_MS, NOW_MS - 6 * DAY_MS]


def test_a_yaml_server_without_a_catalog_writes_json_lines_only(tmp_path: Path) -> None:
    table = write_partitioned_table(tmp_path / "parted")
    shares = [{"name": "s", "schemas": [{"name": "d", "tables": [table_entry("t", table)]}]}]
    lines = tmp_path / "audit.jsonl"
    config = {
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "shares": shares,
        "audit": {"jsonLines": str(lines)},
    }
    server = start_server(config, tmp_path / "server")
    try:
        with server.client() as client:
            assert client.post("/shares/s/schemas/d/tables/t/query", json={}).status_code == 200
    finally:
        stop_server(server)
    (record,) = [json.loads(line) for line in lines.read_text().splitlines()]
    assert record["operation"] == "deltaSharingQueriedTable"
    assert (record["recipient"], record["table"], record["files"]) == ("default", "s.d.t", 3)
    assert TOKEN not in lines.read_text()
    assert lines.stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "server" / "catalog.db").exists()


def test_the_openapi_document_names_what_the_audit_route_reads_and_answers() -> None:
    operation = admin_openapi()["paths"]["/api/audit"]["get"]
    names = {p["name"] for p in operation["parameters"]}
    filters = {f for f in AuditFilter.__dataclass_fields__}
    assert names == filters | {"limit", "page_token"}
    schemas = admin_openapi()["components"]["schemas"]
    page = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert page == {"$ref": "#/components/schemas/AuditPage"}
    entry = schemas["AuditPage"]["properties"]["records"]["items"]
    assert entry == {"$ref": "#/components/schemas/AuditEntry"}
    fields = set(schemas["AuditEntry"]["properties"])
    camel = {f.encode_name for f in msgspec.structs.fields(AuditRecord)} - {"timeMs"}
    assert fields == camel | {"time"}
