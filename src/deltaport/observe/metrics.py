"""The process's Prometheus metrics: one registry, its instruments, and the text the admin
listener's ``/metrics`` answers with.

Both listeners run in one process and count into the same instruments, so the instruments
are module-level (as ``prometheus_client`` intends) on a registry of deltaport's own.
Every label value is bounded: routes are route templates (``/shares/{share}``), never raw
paths; methods are the HTTP methods the listeners answer; recipient and table labels are
names from the catalog (what a request was authenticated or resolved to), never text a
request sent. The catalog's sizes are read from its in-memory view at scrape time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from deltaport.catalog.model import CatalogView, Recipient, SharedTable
from deltaport.delta.cache import TABLE_BUDGET, MemoryBudget
from deltaport.protocol.errors import SharingError

REGISTRY = CollectorRegistry()
ProcessCollector(registry=REGISTRY)  # process_cpu_seconds_total, memory, open files
CONTENT_TYPE = CONTENT_TYPE_LATEST
OTHER = "other"
"""The label value of a route no template matches, or of an unusual method."""
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

REQUESTS = Counter(
    "deltaport_http_requests",
    "HTTP requests answered, by listener, route template, method and status",
    ["listener", "route", "method", "status"],
    registry=REGISTRY,
)
LATENCY = Histogram(
    "deltaport_http_request_duration_seconds",
    "Time from a request's arrival to the last byte of its answer, by listener and route",
    ["listener", "route"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
TOKEN_FAILURES = Counter(
    "deltaport_token_failures",
    "Requests refused with 401 (a missing, unknown, expired or revoked token), by listener",
    ["listener"],
    registry=REGISTRY,
)
FILES_SERVED = Counter(
    "deltaport_served_files",
    "Data files listed in table answers (query and changes), by recipient and table",
    ["recipient", "table"],
    registry=REGISTRY,
)
BYTES_SERVED = Counter(
    "deltaport_served_bytes",
    "Bytes of the data files listed in table answers, by recipient and table",
    ["recipient", "table"],
    registry=REGISTRY,
)
CREDENTIALS_VENDED = Counter(
    "deltaport_vended_credentials",
    "Temporary table credentials handed out (dir access mode), by recipient and table",
    ["recipient", "table"],
    registry=REGISTRY,
)
SNAPSHOT_CACHE = Counter(
    "deltaport_snapshot_cache_lookups",
    "Prepared-snapshot cache lookups of table queries, by result (hit or miss)",
    ["result"],
    registry=REGISTRY,
)

AUDIT_WRITTEN = Counter(
    "deltaport_audit_records_written",
    "Audit records written (to the catalog database and, where configured, as JSON lines)",
    registry=REGISTRY,
)
AUDIT_DROPPED = Counter(
    "deltaport_audit_records_dropped",
    "Audit records lost: dropped past the buffer's bound while the database could not be "
    "reached, still unwritten when the process stopped, or kept in the database but not "
    "written as JSON lines (a full disk)",
    registry=REGISTRY,
)


def table_label(table: SharedTable) -> str:
    """``share.schema.table`` as the catalog names it."""
    return f"{table.share}.{table.schema}.{table.name}"


def count_request(listener: str, route: str, method: str, status: int, seconds: float) -> None:
    """One answered request (``route`` a template or :data:`OTHER`)."""
    method = method if method in METHODS else OTHER
    REQUESTS.labels(listener, route, method, str(status)).inc()
    LATENCY.labels(listener, route).observe(seconds)
    if status == 401:
        TOKEN_FAILURES.labels(listener).inc()


def count_served(recipient: Recipient, table: SharedTable, files: int, size: int) -> None:
    """A table answer listing ``files`` data files of ``size`` bytes in all."""
    label = table_label(table)
    FILES_SERVED.labels(recipient.name, label).inc(files)
    BYTES_SERVED.labels(recipient.name, label).inc(size)


def count_vended(recipient: Recipient, table: SharedTable) -> None:
    CREDENTIALS_VENDED.labels(recipient.name, table_label(table)).inc()


def forget_recipients(names: Iterable[str]) -> None:
    """Drop every series of the recipients ``names`` (deleted from the catalog): a scrape
    no longer lists them, and their label values no longer cost memory."""
    for name in names:
        for counter in (FILES_SERVED, BYTES_SERVED, CREDENTIALS_VENDED):
            counter.remove_by_labels({"recipient": name})


def count_snapshot_lookup(hit: bool) -> None:
    SNAPSHOT_CACHE.labels("hit" if hit else "miss").inc()


@dataclass(frozen=True)
class CatalogCounts:
    """Where the catalog's sizes are read from: its current view and its recipient count
    (either may raise a :class:`SharingError` while the catalog cannot be read)."""

    view: Callable[[], CatalogView]
    recipients: Callable[[], int]


class CatalogSizes:
    """``deltaport_catalog_shares``, ``_tables`` and ``_recipients``, read when scraped;
    absent while no catalog is watched or it cannot be read."""

    def __init__(self) -> None:
        self._source: CatalogCounts | None = None

    def watch(self, source: CatalogCounts) -> None:
        self._source = source

    def collect(self) -> Iterable[Metric]:
        if self._source is None:
            return []
        try:
            view = self._source.view()
            recipients = self._source.recipients()
        except SharingError:
            return []
        shares = view.shares(Recipient("provider"))  # a recipient of no limit sees every share
        tables = sum(len(view.all_tables(Recipient("provider"), s.name)) for s in shares)
        return [
            GaugeMetricFamily("deltaport_catalog_shares", "Shares in the catalog", len(shares)),
            GaugeMetricFamily("deltaport_catalog_tables", "Tables in all shares", tables),
            GaugeMetricFamily("deltaport_catalog_recipients", "Recipients", recipients),
        ]


CATALOG_SIZES = CatalogSizes()
REGISTRY.register(CATALOG_SIZES)


class BudgetUse:
    """``deltaport_snapshot_cache_bytes`` (what the process's one memory budget holds now)
    and ``deltaport_snapshot_cache_evictions_total`` (the entries it dropped), read from
    the budget when scraped."""

    def __init__(self, budget: MemoryBudget) -> None:
        self._budget = budget

    def collect(self) -> Iterable[Metric]:
        return [
            GaugeMetricFamily(
                "deltaport_snapshot_cache_bytes",
                "Estimated bytes of the tables, snapshots and answers kept (snapshotCacheBytes)",
                self._budget.held_bytes,
            ),
            CounterMetricFamily(
                "deltaport_snapshot_cache_evictions",
                "Entries dropped from the kept tables, snapshots and answers past the budget",
                self._budget.evictions,
            ),
        ]


REGISTRY.register(BudgetUse(TABLE_BUDGET))


def exposition() -> bytes:
    """Every metric of the process in Prometheus's text format (:data:`CONTENT_TYPE`)."""
    return generate_latest(REGISTRY)
