"""Text for the terminal: what the CLI prints never carries a control character it did
not mean to send.

Names, messages and values the CLI prints may come from a server or a table another
party wrote; a terminal escape sequence among them could rewrite the screen, set the
window title or worse. Every control character (C0, DEL, C1) and every bidirectional
override is printed as a visible escape (``\\x1b``, ``\\u202e``) instead.
"""

from __future__ import annotations

import logging
import sys
import warnings

_UNSAFE = (
    *range(0x20),  # C0, line breaks and tabs among them
    0x7F,
    *range(0x80, 0xA0),  # C1: 0x9b alone starts an escape sequence on some terminals
    0x2028,  # line and paragraph separators: a line break to some readers
    0x2029,
    *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
    *range(0x2066, 0x206A),  # bidirectional isolates
)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_ONE_LINE = {c: _escape(c) for c in _UNSAFE}
_ONE_LINE.update({ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})
_LINES = {c: e for c, e in _ONE_LINE.items() if chr(c) not in "\n\t"}
_JSON = {c: f"\\u{c:04x}" for c in _UNSAFE if chr(c) not in "\n\t"}


def one_line(text: str) -> str:
    """``text`` with every control character escaped, line breaks and tabs too: a name
    printed on a line of its own stays one line."""
    return text.translate(_ONE_LINE)


def printable(text: str) -> str:
    """``text`` with every control character escaped but its line breaks and tabs: for
    text the CLI lays out in lines (a listing, a table preview, a message)."""
    return text.translate(_LINES)


def json_printable(text: str) -> str:
    """JSON text with every control character inside its strings written as a JSON
    escape (``\\u001b``): the same JSON, safe on a terminal."""
    return text.translate(_JSON)


class _LastResort(logging.Handler):
    """Python's last-resort handler (to the current ``sys.stderr``), escaping."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(printable(self.format(record)) + "\n")
        except Exception:
            self.handleError(record)


_plain_formatwarning = warnings.formatwarning


def _printable_formatwarning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    return printable(_plain_formatwarning(message, category, filename, lineno, line))


def escape_diagnostics() -> None:
    """Warnings, and log records no configured handler takes, reach the terminal escaped
    too: a client's warning may quote a server's message. (A server configures its own
    logging; this handler is only Python's last resort.)"""
    logging.lastResort = _LastResort(logging.WARNING)
    warnings.formatwarning = _printable_formatwarning


def say(text: str, *, as_json: bool = False) -> None:
    """Print ``text`` with its control characters escaped :
    names, values and messages may come from a server or a table someone else wrote."""
    print(json_printable(text) if as_json else printable(text))
