"""The access log line format, and that it never shows a URL signature; every log line
with the control characters of request text escaped."""

from __future__ import annotations

import logging
import sys

from deltaport.web.logs import (
    FORMAT,
    PATH_SHOWN,
    AccessFormatter,
    EscapingFormatter,
    UvicornFormatter,
    uvicorn_log_config,
)


def access_record(path: str, status: int = 200) -> logging.LogRecord:
    """A record as uvicorn's HTTP protocol logs a finished request."""
    args = ("127.0.0.1:5000", "GET", path, "1.1", status)
    return logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', args, None
    )


def test_access_line_as_uvicorn_writes_it_with_the_signature_redacted() -> None:
    line = AccessFormatter().format(access_record("/files/t/a.parquet?se=17&sp=r&sig=abcdef"))
    assert line == (
        'INFO:     127.0.0.1:5000 - "GET /files/t/a.parquet?se=17&sp=r&sig=REDACTED HTTP/1.1"'
        " 200 OK"
    )


def test_cloud_signatures_and_odd_statuses() -> None:
    formatter = AccessFormatter()
    line = formatter.format(access_record("/x?X-Amz-Signature=secret&a=1", 403))
    assert "secret" not in line
    assert line.endswith('"GET /x?X-Amz-Signature=REDACTED&a=1 HTTP/1.1" 403 Forbidden')
    assert formatter.format(access_record("/y", 599)).endswith('"GET /y HTTP/1.1" 599')


def test_other_records_are_redacted_too() -> None:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 1, "odd %s", ("/z?sig=secret",), None
    )
    assert AccessFormatter().format(record) == "odd /z?sig=REDACTED"


def test_uvicorn_config_uses_the_formatter() -> None:
    config = uvicorn_log_config()
    assert config["formatters"]["access"] == {"()": "deltaport.web.logs.AccessFormatter"}
    assert config["loggers"]["uvicorn.access"]["handlers"] == ["access"]


def test_activation_link_secrets_are_redacted() -> None:
    formatter = AccessFormatter()
    for prefix in (
        "/api/2.1/unity-catalog/public/data_sharing_activation/",
        "/api/2.1/unity-catalog/public/data_sharing_activation_info/",
        "/api/2.1/opensharing/activation/",
    ):
        line = formatter.format(access_record(prefix + "x5UsGEMa-CZnvCtx", 404))
        assert "x5UsGEMa" not in line
        assert f'"GET {prefix}REDACTED HTTP/1.1" 404 Not Found' in line
    assert "/shares/activation/schemas" in formatter.format(
        access_record("/shares/activation/schemas")
    )


def test_messages_and_tracebacks_escape_request_text() -> None:
    formatter = EscapingFormatter(FORMAT)
    sent = "x\r\n2026-01-01 00:00:00,000 ERROR forged\x1b[2J\u2029"
    try:
        raise ValueError(f"bad name {sent}")
    except ValueError:
        record = logging.LogRecord(
            "deltaport.t", logging.WARNING, __file__, 1, "asked for %s", (sent,), sys.exc_info()
        )
    lines = formatter.format(record).split("\n")
    assert lines[0].endswith("asked for x\\r\\n2026-01-01 00:00:00,000 ERROR forged\\x1b[2J\\u2029")
    assert all(line.startswith("    ") for line in lines[1:])  # the traceback, indented
    assert lines[-2:] == [  # the message's line break kept, its lines indented
        "    ValueError: bad name x\\r",
        "    2026-01-01 00:00:00,000 ERROR forged\\x1b[2J\\u2029",
    ]
    assert not any(line.startswith("2026-01-01") for line in lines)


def test_access_lines_cut_long_paths_and_escape() -> None:
    line = AccessFormatter().format(access_record("/" + "A" * 60_000))
    assert len(line) < PATH_SHOWN + 100
    assert line.endswith('…(60001 characters) HTTP/1.1" 200 OK')
    odd = AccessFormatter().format(access_record("/a\n2026-01-01 forged"))
    assert "\n" not in odd and "/a\\n2026-01-01 forged" in odd


def test_uvicorn_lines_escape_too() -> None:
    config = uvicorn_log_config()
    assert config["formatters"]["default"]["()"] == "deltaport.web.logs.UvicornFormatter"
    record = logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1, "%s", ("a\nb",), None)
    assert UvicornFormatter("%(levelprefix)s %(message)s", use_colors=False).format(record) == (
        "INFO:     a\\nb"
    )
