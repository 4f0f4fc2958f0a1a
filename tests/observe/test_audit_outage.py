"""Audit records across a PostgreSQL outage longer than ``catalogMaxStaleSeconds``: every
request answered before, during and after it (200s from memory, then 503s) has exactly one
record once the database is back; records the bounded spool cannot keep are counted in
``deltaport_audit_records_dropped_total`` and logged; a batch the database kept though its
answer was lost (a commit in flight when the connection broke) is written again without
doubling, and without holding up the records behind it (docs/server/audit.md)."""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.database.connection import Database
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.observe import audit_log
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import write
from deltaport.observe.metrics import AUDIT_DROPPED
from postgres import PostgresCluster, new_database
from sharing_server import start_server, stop_server
from waiting import wait_until

STALE_SECONDS = 3
OUTAGE_SECONDS = STALE_SECONDS + 5
"""Past the bound: the outage's answers are 200s from memory, then 503s."""
READERS = 3
WRITTEN_WITHIN_SECONDS = 60


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    """A cluster of this module's own: its tests stop it."""
    running = PostgresCluster()
    running.start()
    yield running
    running.remove()


def _seed(url: str, tmp: Path) -> str:
    table = tmp / "t"
    write_deltalake(str(table), pa.table({"id": [1, 2, 3]}))
    store = SqlCatalog(url)
    store.create_share("s")
    store.add_table("s", "sc", "t", TableSpec(str(table)))
    token = store.create_recipient("reader").token
    store.grant("s", "reader")
    store.database.close()
    return token


def _recorded(url: str) -> Counter[tuple[str, int]]:
    db = Database(url)
    try:
        rows = db.query(
            "SELECT user_agent, status FROM audit_records WHERE user_agent LIKE ?", ("reader-%",)
        )
    finally:
        db.close()
    return Counter((str(agent), int(status)) for agent, status in rows)


@pytest.mark.parametrize("stop", ["fast", "immediate"])
def test_every_request_answered_across_an_outage_past_the_bound_has_its_record(
    cluster: PostgresCluster, tmp_path: Path, stop: str
) -> None:
    url = new_database(cluster.url)
    token = _seed(url, tmp_path)
    config = {"catalog": url, "signingKey": "k", "catalogMaxStaleSeconds": STALE_SECONDS}
    server = start_server(config, tmp_path / "server")
    answered: Counter[tuple[str, int]] = Counter()
    lock = threading.Lock()
    halt = threading.Event()
    numbers = itertools.count()

    def read(reader: int) -> None:
        with server.client(token) as client:
            while not halt.is_set():
                agent = f"reader-{reader}-{next(numbers)}"
                headers = {"User-Agent": agent}
                if reader % 2:
                    answer = client.get("/shares", headers=headers)
                else:
                    path = "/shares/s/schemas/sc/tables/t/query"
                    answer = client.post(path, json={}, headers=headers)
                with lock:
                    answered[(agent, answer.status_code)] += 1

    threads = [threading.Thread(target=read, args=(n,)) for n in range(READERS)]
    try:
        for thread in threads:
            thread.start()
        time.sleep(1.5)
        cluster.stop(stop)
        time.sleep(OUTAGE_SECONDS)
        cluster.start()
        time.sleep(2)
        halt.set()
        for thread in threads:
            thread.join(60)
        statuses = Counter(status for _, status in answered)
        assert statuses[200] > 0 and statuses[503] > 0, statuses  # the bound was passed

        def written() -> bool:
            recorded = _recorded(url)
            assert not recorded - answered, "a record written twice, or of no request"
            return recorded == answered

        def missing() -> str:
            left = answered - _recorded(url)
            return (
                f"{sum(left.values())} of {sum(answered.values())} records missing "
                f"(statuses {Counter(s for _, s in left)}):\n"
                + "\n".join(line for line in server.log().splitlines() if "audit" in line)[-4000:]
            )

        wait_until(written, WRITTEN_WITHIN_SECONDS, "every record", 0.5, details=missing)
        assert "audit records dropped" not in server.log()
    finally:
        halt.set()
        cluster.start()
        stop_server(server)


def _record(n: int) -> AuditRecord:
    return AuditRecord(
        time_ms=1_700_000_000_000 + n, operation="listShares", status=200, duration_ms=1
    )


def test_a_full_spool_counts_and_logs_what_it_drops(
    cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    url = new_database(cluster.url)
    SqlCatalog(url).database.close()
    monkeypatch.setattr(audit_log, "MAX_BUFFERED", 5)
    log = AuditLog(Database(url), flush_seconds=3600)
    dropped_before = AUDIT_DROPPED._value.get()
    cluster.stop("fast")
    try:
        with caplog.at_level(logging.WARNING, logger="deltaport.observe.audit_log"):
            for n in range(8):
                log.record(_record(n))
            log.flush()  # the database is away: kept, and the three oldest dropped
    finally:
        cluster.start()
    assert log.dropped == 3
    assert AUDIT_DROPPED._value.get() - dropped_before == 3
    drops = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert drops and "3 audit records dropped" in drops[-1], drops
    log.close()
    times = sorted(t for (t,) in Database(url).query("SELECT time_ms FROM audit_records"))
    assert times == [_record(n).time_ms for n in range(3, 8)]  # the newest five kept


def test_a_batch_the_database_kept_is_written_again_without_doubling(
    cluster: PostgresCluster,
) -> None:
    """As when a commit reached the database but its answer did not reach the writer."""
    url = new_database(cluster.url)
    SqlCatalog(url).database.close()
    database = Database(url)
    kept, behind = _record(1), _record(2)
    log = AuditLog(database, flush_seconds=3600)
    log.record(kept)
    assert kept.id
    write(database, [kept])  # the database has it; the log still holds it as unwritten
    log.record(behind)
    log.flush()
    log.close()
    rows = Database(url).query("SELECT id FROM audit_records ORDER BY id")
    assert rows == sorted([(kept.id,), (behind.id,)])
    assert log.dropped == 0
