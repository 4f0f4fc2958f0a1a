"""No request forges a line of a real server's log: text a recipient sends (a metrics
report's type, a path) reaches the log with its control characters escaped, so every line
that starts with a timestamp is one the server wrote."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pyarrow as pa
from deltalake import write_deltalake

from sharing_server import TOKEN, start_server, stop_server, table_entry

FORGED = "2026-01-01 00:00:00,000 FORGED"
RECORD_START = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} |INFO: |WARNING: |ERROR: )")


def test_recipient_text_cannot_start_a_line_of_the_log(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1]}))
    config = {
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "iceberg": {"metadataDirectory": str(tmp_path / "iceberg")},
        "shares": [
            {"name": "sales", "schemas": [{"name": "eu", "tables": [table_entry("T", table)]}]}
        ],
    }
    server = start_server(config, tmp_path / "server")
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=server.base, headers=auth, timeout=30) as client:
            report = {"report-type": f"x\n{FORGED}\u2028\x1b[2J"}
            answer = client.post(
                "/iceberg/v1/shares/sales/namespaces/eu/tables/T/metrics", json=report
            )
            assert answer.status_code == 204, answer.text
            assert (
                client.get("/delta-sharing/shares/x%0A" + FORGED.replace(" ", "%20")).status_code
                == 404
            )
    finally:
        stop_server(server)
    log = server.log()
    assert "iceberg metrics report from default for T: x\\n" + FORGED + "\\u2028\\x1b[2J" in log
    assert not [line for line in log.splitlines() if FORGED in line and line.startswith(FORGED)]
    assert "\x1b" not in log and "\u2028" not in log
    for line in log.splitlines():  # every line is the server's own (or a traceback's, indented)
        assert RECORD_START.match(line) or line.startswith("    "), line
