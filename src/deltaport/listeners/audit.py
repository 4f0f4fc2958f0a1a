"""The audit log a configuration asks for: records in the catalog database when the
server has one (``audit.database``), and JSON lines to a file or standard output
(``audit.jsonLines``); none when neither applies (a YAML server without ``jsonLines``)."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from deltaport.catalog.database.connection import Database
from deltaport.catalog.database.migrations import migrate
from deltaport.config.model import ServerConfig
from deltaport.config.urls import catalog_url
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_storms import RefusalStorms


class OpenedAuditLog:
    """An :class:`AuditLog` with what it writes to, all closed by :meth:`close`."""

    def __init__(self, log: AuditLog, database: Database | None, lines: TextIO | None) -> None:
        self.log = log
        self._database = database
        self._lines = lines

    def close(self) -> None:
        self.log.close()
        if self._lines is not None and self._lines is not sys.stdout:
            self._lines.close()
        if self._database is not None:
            self._database.close()


def open_audit_log(config: ServerConfig) -> OpenedAuditLog | None:
    settings = config.audit
    url = catalog_url(config) if settings.database else None
    if url is None and settings.json_lines is None:
        return None
    database = Database(url) if url is not None else None
    if database is not None:
        migrate(database)
    lines = _lines(settings.json_lines) if settings.json_lines is not None else None
    storms = RefusalStorms(settings.refusal_window_seconds * 1000, settings.refusals_recorded)
    log = AuditLog(database, lines, settings.retention_days, storms=storms)
    return OpenedAuditLog(log, database, lines)


def _lines(target: str) -> TextIO:
    """Standard output for ``-``, else the file, appended to (created readable by its
    owner only: records name client addresses)."""
    if target == "-":
        return sys.stdout
    descriptor = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    return os.fdopen(descriptor, "a", encoding="utf-8")
