"""Logging setup: access log lines never carry the signatures of file URLs."""

from __future__ import annotations

import logging
import re

_SIGNATURE = re.compile(r"((?:^|[?&])(?:sig|X-Amz-Signature|X-Goog-Signature)=)[^&\s]*", re.I)


def redact_signatures(text: str) -> str:
    return _SIGNATURE.sub(r"\1REDACTED", text)


class RedactSignatures(logging.Filter):
    """Rewrites the request path argument of uvicorn access records."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                redact_signatures(a) if isinstance(a, str) and "=" in a else a for a in record.args
            )
        return True


def configure_logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("uvicorn.access").addFilter(RedactSignatures())
