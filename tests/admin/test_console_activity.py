"""The overview and the audit log page over HTTP against a real server on a SQLite catalog
(``activity_support``): the figures are those of the records written, the filters come
from GET links, pages are keyset pages, the exports stream every filtered record and no
page or export holds a secret."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import httpx

from activity_support import EVIL_AGENT, N_PAGED, ActivityServer, activity_server
from admin_support import ADMIN_TOKEN, AdminServer, _await_admin, login
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.observe.audit_record import iso_time
from postgres import PostgresCluster, new_database
from sharing_server import free_port, start_server, stop_server

__all__ = ["activity_server"]


def _figure(html: str, id_: str) -> str:
    found = re.search(rf'id="{id_}">([^<]*)<', html)
    assert found, id_
    return found.group(1)


def _row(html: str, id_: str) -> list[str]:
    found = re.search(rf'<tr id="{id_}">(.*?)</tr>', html, re.DOTALL)
    assert found, id_
    return [
        re.sub(r"<[^>]+>", "", c).strip()
        for c in re.findall(r"<td[^>]*>(.*?)</td>", found.group(1), re.DOTALL)
    ]


def _audit_rows(html: str) -> list[list[str]]:
    body = re.search(r'<table class="audit">.*?<tbody>(.*?)</tbody>', html, re.DOTALL)
    if body is None:
        return []
    return [
        [
            re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.DOTALL)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", body.group(1), re.DOTALL)
    ]


def _no_secrets(server: ActivityServer, *bodies: str) -> None:
    for body in bodies:
        for secret in server.secrets:
            assert secret not in body
        assert "?X-Amz-" not in body and "sig=" not in body


def test_the_overview_counts_the_catalog_and_the_last_hour_and_day(
    activity_server: ActivityServer,
) -> None:
    with login(activity_server.running) as client:
        home = client.get("/console/")
    assert home.status_code == 200
    html = home.text
    assert [_figure(html, f"count-{n}") for n in ("shares", "tables", "recipients")] == [
        "2",
        "3",
        "5",
    ]
    assert _row(html, "last-hour") == ["3", "1.2 KiB", "1"]
    assert _row(html, "last-day") == ["5", "5.1 KiB", "1"]
    bars = re.findall(r'<rect class="requests"[^>]*height="([0-9.]+)"', html)
    assert len(bars) == 24
    assert float(bars[-1]) == 120.0  # the last hour, the busiest, reaches the top
    shown = re.findall(r'<g class="bar"><title>[^<]*: ([\d,]+) requests?', html)
    assert len(shown) == 24 and sum(int(n) for n in shown) == 5
    _no_secrets(activity_server, html)


def test_the_overview_lists_what_expires_within_a_week_and_the_newest_errors(
    activity_server: ActivityServer,
) -> None:
    with login(activity_server.running) as client:
        html = client.get("/console/").text
    expiring = re.search(r'<table class="expiring">.*?<tbody>(.*?)</tbody>', html, re.DOTALL)
    assert expiring
    rows = re.findall(r"<tr><td><a[^>]*>([^<]*)</a></td><td>([^<]*)</td>", expiring.group(1))
    # globex's token lives 30 days, initech's was revoked
    assert rows == [("hooli", "activation link"), ("acme", "token")]
    errors = re.search(r'<table class="errors">.*?<tbody>(.*?)</tbody>', html, re.DOTALL)
    assert errors
    statuses = re.findall(r'href="/console/audit\?status=(\d+)"', errors.group(1))
    assert statuses == ["404", "500"]
    assert "RESOURCE_DOES_NOT_EXIST" in errors.group(1)


def test_the_audit_page_filters_by_link_and_form(activity_server: ActivityServer) -> None:
    with login(activity_server.running) as client:
        acme = client.get("/console/audit?recipient=ACME")
        refused = client.get("/console/audit", params={"status": "404"})
        operation = client.get("/console/audit", params={"operation": "createShare"})
        table = client.get("/console/audit", params={"table": "lab.corpus.dvcm"})
        since = activity_server.now_ms - 3 * 86_400_000
        ranged = client.get(
            "/console/audit",
            params={
                "since": iso_time(since),
                "until": iso_time(activity_server.now_ms - 3_600_000),
            },
        )
    assert acme.status_code == 200
    assert [r[1] for r in _audit_rows(acme.text)] == ["deltaSharingQueriedTable"] * 3
    assert 'value="ACME"' in acme.text
    assert [r[2] for r in _audit_rows(refused.text)] == ["404 RESOURCE_DOES_NOT_EXIST"]
    assert [r[3] for r in _audit_rows(operation.text)] == ["token-1"]
    assert [r[6] for r in _audit_rows(table.text)] == ["1..2"]
    # from three days ago until an hour ago: 5 h, 6 h and 2 days ago
    assert len(_audit_rows(ranged.text)) == 3


def test_a_bad_filter_is_refused_next_to_its_field(activity_server: ActivityServer) -> None:
    with login(activity_server.running) as client:
        answers = {
            "status": client.get("/console/audit?status=abc"),
            "since": client.get("/console/audit?since=yesterday"),
            "operation": client.get("/console/audit?operation=dropEverything"),
            "until": client.get("/console/audit?since=2026-11-26&until=2026-11-25"),
        }
        export = client.get("/console/audit.csv?status=abc")
        token = client.get("/console/audit?page_token=not-a-token")
        unknown = client.get("/console/audit.xml")
    for field, answer in answers.items():
        assert answer.status_code == 400, field
        assert f'id="{field}-error"' in answer.text
        assert f'aria-describedby="{field}-error"' in answer.text
        assert _audit_rows(answer.text) == []
    assert "not an ISO 8601 time" in answers["since"].text
    assert export.status_code == 400 and "status: an HTTP status" in export.text
    assert unknown.status_code == 404
    assert token.status_code == 400 and "not a page token" in token.text


def test_the_audit_page_pages_newest_first_without_repeats(activity_server: ActivityServer) -> None:
    seen: list[str] = []
    url: str | None = "/console/audit?recipient=bulk"
    pages = 0
    with login(activity_server.running) as client:
        while url:
            html = client.get(url).text
            seen += [r[0] for r in _audit_rows(html)]
            older = re.search(r'<a href="([^"]*page_token=[^"]*)"[^>]*>Older records', html)
            url = older.group(1).replace("&amp;", "&") if older else None
            pages += 1
    assert pages == -(-N_PAGED // 50)
    assert len(seen) == N_PAGED
    assert seen == sorted(seen, reverse=True)


def test_the_exports_stream_every_filtered_record(activity_server: ActivityServer) -> None:
    running = activity_server.running
    with login(running) as client:
        with client.stream("GET", "/console/audit.jsonl?recipient=bulk") as answer:
            assert answer.status_code == 200
            assert answer.headers["content-type"] == "application/x-ndjson"
            assert "content-length" not in answer.headers  # streamed, not built whole
            assert answer.headers["content-disposition"] == 'attachment; filename="audit.jsonl"'
            lines = [json.loads(line) for line in answer.iter_lines() if line]
        as_csv = client.get("/console/audit.csv?recipient=acme")
        everything = client.get("/console/audit.csv").text
    assert len(lines) == N_PAGED
    assert len({line["id"] for line in lines}) == N_PAGED
    assert [line["time"] for line in lines] == sorted(
        (line["time"] for line in lines), reverse=True
    )
    assert as_csv.headers["content-type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(as_csv.text)))
    assert [r["status"] for r in rows] == ["200", "404", "500"]
    assert rows[0]["userAgent"] == "'" + EVIL_AGENT  # not a formula to a spreadsheet
    assert rows[0]["bytes"] == "1000" and rows[0]["clientAddress"] == "203.0.113.7"
    assert rows[1]["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    assert len(list(csv.DictReader(io.StringIO(everything)))) == N_PAGED + 6
    _no_secrets(activity_server, as_csv.text, everything, json.dumps(lines))


def test_a_yaml_server_says_what_needs_a_catalog(admin_server: AdminServer) -> None:
    with login(admin_server) as client:
        home = client.get("/console/")
        audit = client.get("/console/audit")
        tables = client.get("/console/tables")
        export = client.get("/console/audit.csv")
    assert home.status_code == 200
    assert (_figure(home.text, "count-shares"), _figure(home.text, "count-tables")) == ("1", "4")
    assert "catalog database" in home.text
    assert audit.status_code == 200 and "this server has none" in audit.text
    assert 'href="/console/tables/lake.main.dvcm"' in tables.text
    assert export.status_code == 400


def test_the_pages_need_a_session(activity_server: ActivityServer) -> None:
    for path in ("/console/", "/console/audit", "/console/audit.csv"):
        answer = httpx.get(activity_server.running.admin + path)
        assert answer.status_code == 303 and answer.headers["location"] == "/console/login"


def test_the_pages_answer_503_while_the_catalog_database_is_away(
    tmp_path: Path, admin_tables: dict[str, Path]
) -> None:
    cluster = PostgresCluster()
    cluster.start()
    try:
        url = new_database(cluster.url)
        SqlCatalog(url).database.close()
        port = free_port()
        config = {"signingKey": "away", "admin": {"port": port, "tokens": [ADMIN_TOKEN]}}
        running = _await_admin(start_server(config, tmp_path, catalog=url), port)
        try:
            with login(running) as client:
                assert client.get("/console/audit").status_code == 200
                cluster.stop()
                answers = [
                    client.get(p) for p in ("/console/", "/console/audit", "/console/audit.csv")
                ]
        finally:
            stop_server(running.sharing)
    finally:
        cluster.remove()
    assert [a.status_code for a in answers] == [503] * 3
    assert all("TEMPORARILY_UNAVAILABLE" in a.text for a in answers)
