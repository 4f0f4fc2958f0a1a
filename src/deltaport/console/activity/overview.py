"""The overview, the console's landing page: how many shares, tables and recipients; the
requests, bytes and errors of the last hour and day with a chart of the day by the hour;
the credentials that expire within a week; the newest errors.

Each figure is one query over an index (the day's volume reads ``audit_records_volume``
alone, the errors ``audit_records_errors``), so the page costs the same over a log of a
million records as over an empty one, apart from the records of the last day it sums.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from deltaport.admin.tables import ConfiguredTables
from deltaport.catalog.database.connection import Database, DatabaseUnavailableError
from deltaport.catalog.rows import Counts, counts
from deltaport.catalog.tokens import Expiring, expiring
from deltaport.console.activity.chart import Chart, bars
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import Volume, newest_errors, volume
from deltaport.protocol.errors import TemporarilyUnavailableError

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
WEEK_MS = 7 * DAY_MS
BUCKET_MS = 5 * 60_000
EXPIRING_SHOWN = 20
ERRORS_SHOWN = 10

Render = Callable[..., Response]
"""The console's page renderer (``console.render.page``), handed in by the console so that
this room does not import the package above it."""


@dataclass(frozen=True)
class Activity:
    counts: Counts
    hour: Volume
    day: Volume
    chart: Chart
    expiring: list[Expiring]
    more_expiring: bool
    errors: list[AuditRecord]


class OverviewPage:
    def __init__(
        self,
        render: Render,
        tables: ConfiguredTables,
        database: Database | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._render = render
        self._tables = tables
        self._database = database
        self._clock = clock

    async def show(self, request: Request) -> Response:
        if self._database is None:
            groups = self._tables.groups
            shares = len({g.share for g in groups})
            tables = sum(len(g.tables) for g in groups)
            counted = (shares, tables)
            return self._render(request, "activity_overview.html", activity=None, yaml=counted)
        now = int(self._clock() * 1000)
        try:
            found = await run_in_threadpool(activity, self._database, now)
        except DatabaseUnavailableError:
            raise TemporarilyUnavailableError(
                "the catalog database cannot be reached at the moment; retry later"
            ) from None
        return self._render(request, "activity_overview.html", activity=found, yaml=None)


def activity(database: Database, now: int) -> Activity:
    """The overview's figures at ``now`` (milliseconds since the epoch): the last hour is
    ``[now - 1 h, now)``, the last day ``[now - 24 h, now)``."""
    since = now - DAY_MS
    buckets = volume(database, since, now, BUCKET_MS)
    per_hour = HOUR_MS // BUCKET_MS
    hours = [_sum(buckets[i : i + per_hour]) for i in range(0, len(buckets), per_hour)]
    labels = [
        f"{_clock_time(since + i * HOUR_MS)}–{_clock_time(since + (i + 1) * HOUR_MS)} UTC"
        for i in range(len(hours))
    ]
    soon = expiring(database, now, now + WEEK_MS, EXPIRING_SHOWN + 1)
    return Activity(
        counts=counts(database),
        hour=_sum(buckets[-per_hour:]),
        day=_sum(buckets),
        chart=bars(hours, labels),
        expiring=soon[:EXPIRING_SHOWN],
        more_expiring=len(soon) > EXPIRING_SHOWN,
        errors=newest_errors(database, ERRORS_SHOWN),
    )


def _sum(volumes: list[Volume]) -> Volume:
    return Volume(
        sum(v.requests for v in volumes),
        sum(v.bytes for v in volumes),
        sum(v.errors for v in volumes),
    )


def _clock_time(time_ms: int) -> str:
    return datetime.fromtimestamp(time_ms / 1000, UTC).strftime("%H:%M")
