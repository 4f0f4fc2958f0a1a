"""What the CLI prints from a hostile server: share, schema and table names, catalog
listings and error messages carrying terminal escape sequences reach the terminal escaped,
never raw. The server is a real HTTP server on 127.0.0.1 answering what no deltaport
server would."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# a window-title change, a screen clear, a bell, a C1 escape, a right-to-left override
HOSTILE = "ev\x1b]0;owned\x07il\x1b[2J\x9b31m\u202etxt.exe\nforged line"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


class _Hostile(BaseHTTPRequestHandler):
    def _send(self, status: int, body: object) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/delta-sharing/shares?") or self.path == "/delta-sharing/shares":
            self._send(200, {"items": [{"name": HOSTILE, "id": "1"}]})
        elif "/all-tables" in self.path:
            item = {"name": HOSTILE, "schema": HOSTILE, "share": HOSTILE}
            self._send(200, {"items": [item]})
        elif self.path == "/api/catalog":
            recipient = {"name": HOSTILE, "properties": {HOSTILE: HOSTILE}, "shares": [HOSTILE]}
            self._send(
                200,
                {
                    "generation": 1,
                    "shares": [{"name": HOSTILE, "id": "1", "comment": HOSTILE}],
                    "tables": [],
                    "recipients": [{**recipient, "tokens": []}],
                },
            )
        else:
            self._send(400, {"errorCode": "INVALID_PARAMETER_VALUE", "message": HOSTILE})

    do_POST = do_GET
    do_HEAD = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _deltaport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deltaport.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def profile(hostile: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "hostile.share"
    path.write_text(
        json.dumps(
            {
                "shareCredentialsVersion": 1,
                "endpoint": hostile + "/delta-sharing",
                "bearerToken": "t",
            }
        )
    )
    return path


@pytest.mark.parametrize(
    ("command", "shown", "lines"),
    [
        (["shares"], "ev\\x1b]0;owned\\x07il\\x1b[2J\\x9b31m\\u202etxt.exe\\nforged line", 1),
        (["tables"], "ev\\x1b]0;owned\\x07il", 1),
    ],
)
def test_names_from_a_server_are_printed_escaped(
    profile: Path, command: list[str], shown: str, lines: int
) -> None:
    answer = _deltaport(*command, str(profile))
    assert answer.returncode == 0, answer.stderr
    assert not any(c in answer.stdout for c in RAW)
    assert shown in answer.stdout
    assert len(answer.stdout.splitlines()) == lines  # a line break in a name forges no line


@pytest.mark.parametrize("command", [["cat"], ["diff", "--rows", "LEFT"]])
def test_error_messages_from_a_server_are_printed_escaped(
    profile: Path, command: list[str]
) -> None:
    table = f"{profile}#s.d.t"
    answer = _deltaport(*(table if part == "LEFT" else part for part in command), table)
    assert answer.returncode == 1
    assert "deltaport: error:" in answer.stderr
    assert "ev\\x1b]0;owned\\x07il\\x1b[2J\\x9b31m\\u202etxt.exe" in answer.stderr
    assert not any(c in answer.stderr for c in RAW)


def test_a_catalog_listing_from_a_server_is_printed_escaped(hostile: str) -> None:
    for command in (["share", "list"], ["recipient", "list"]):
        answer = _deltaport(*command, "--server", hostile, "--admin-token", "t")
        assert answer.returncode == 0, answer.stderr
        assert "ev\\x1b]0;owned\\x07il" in answer.stdout
        assert not any(c in answer.stdout for c in RAW)


def test_warnings_and_log_records_reach_the_terminal_escaped() -> None:
    """What the client warns or logs may quote a server; the CLI escapes it as well."""
    script = (
        "import logging, warnings, sys\n"
        "from deltaport.text.terminal import escape_diagnostics\n"
        "escape_diagnostics()\n"
        "logging.getLogger('deltaport.client').warning(sys.argv[1])\n"
        "warnings.warn(sys.argv[1])\n"
    )
    answer = subprocess.run(
        [sys.executable, "-c", script, HOSTILE], capture_output=True, text=True, timeout=60
    )
    assert answer.returncode == 0, answer.stderr
    assert answer.stderr.count("ev\\x1b]0;owned\\x07il\\x1b[2J\\x9b31m\\u202etxt.exe") == 2
    assert not any(c in answer.stderr for c in RAW)
