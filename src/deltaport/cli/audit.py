"""``deltaport audit``: a page of the audit log, newest first, from the catalog database
(``--catalog``, ``--config``, ``DELTAPORT_CATALOG``) or a running server's admin listener
(``--server`` with an admin token), as the catalog commands find them."""

from __future__ import annotations

import argparse
import json
from typing import Any

OPERATION_HELP = "an operation, e.g. deltaSharingQueriedTable or createShare"


def add_audit_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from deltaport.cli.catalog import _common

    audit = commands.add_parser("audit", help="who read what, when: the audit log")
    audit.add_argument("--recipient", help="only this recipient's requests")
    audit.add_argument("--table", help="only this table (SHARE.SCHEMA.TABLE)")
    audit.add_argument("--operation", help=OPERATION_HELP)
    audit.add_argument("--status", type=int, help="only answers with this HTTP status")
    audit.add_argument("--since", help="from this time on (ISO 8601, e.g. 2026-11-26T14:00Z)")
    audit.add_argument("--until", help="before this time (ISO 8601)")
    audit.add_argument("--limit", type=int, help="records per page (default 100, at most 1000)")
    audit.add_argument("--page-token", help="the next page, as the previous one printed it")
    audit.add_argument("--json", action="store_true", help="one JSON object a line")
    _common(audit)
    audit.set_defaults(handler=_audit)


def _audit(args: argparse.Namespace) -> int:
    from deltaport.text.terminal import say

    page = _page(args)
    records: list[dict[str, Any]] = page["records"]
    if args.json:
        for record in records:
            say(json.dumps(record), as_json=True)
    else:
        say("\n".join(_line(r) for r in records) if records else "no audit records")
    if page["next_page_token"]:
        say(f"more: --page-token {page['next_page_token']}")
    return 0


def _page(args: argparse.Namespace) -> dict[str, Any]:
    """The page as ``GET /api/audit`` answers it, from the server or the database."""
    from deltaport.catalog.remote import RemoteCatalog
    from deltaport.catalog.rows import CatalogError
    from deltaport.cli.catalog import _store

    params = {
        "recipient": args.recipient,
        "table": args.table,
        "operation": args.operation,
        "status": None if args.status is None else str(args.status),
        "since": args.since,
        "until": args.until,
        "limit": None if args.limit is None else str(args.limit),
        "page_token": args.page_token,
    }
    given = {k: v for k, v in params.items() if v is not None}
    store = _store(args)
    if isinstance(store, RemoteCatalog):
        return dict(store.audit_page(given))
    from deltaport.observe.audit_record import as_json, parse_time
    from deltaport.observe.audit_store import AuditFilter, read_page

    try:
        where = AuditFilter(
            recipient=args.recipient,
            table=args.table,
            operation=args.operation,
            status=args.status,
            since=parse_time(args.since, "--since") if args.since else None,
            until=parse_time(args.until, "--until") if args.until else None,
        )
        page = read_page(store.database, where, args.limit, args.page_token)
    except ValueError as exc:
        raise CatalogError(str(exc)) from None
    return {
        "records": [as_json(r) for r in page.records],
        "next_page_token": page.next_page_token,
    }


def _line(record: dict[str, Any]) -> str:
    who = record.get("recipient") or (f"admin {record['admin']}" if "admin" in record else "-")
    what = record.get("table") or record.get("share") or ""
    if "target" in record:
        what = f"{what} {record['target']}".strip()
    version = record.get("version")
    if version is not None:
        end = record.get("endVersion")
        what += f" v{version}" + (f"..{end}" if end is not None else "")
    outcome = str(record["status"])
    if "errorCode" in record:
        outcome += f" {record['errorCode']}"
    counts = f" files={record['files']} bytes={record['bytes']}" if "files" in record else ""
    return (
        f"{record['time']}  {who}  {record['operation']}  {what or '-'}  {outcome}{counts}"
        f"  {record['durationMs']} ms  {record.get('clientAddress') or '-'}"
    )
