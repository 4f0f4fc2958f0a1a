"""Jinja2 rendering of the console's pages (templates shipped in the package,
autoescaped) and the formatting filters they use."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

TEMPLATES = Path(__file__).parent / "templates"

_env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def ms_time(millis: int | None) -> str:
    if millis is None:
        return ""
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def human_size(size: int | None) -> str:
    if size is None:
        return ""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(size)


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)


def cell(value: Any) -> str:
    """A value as a table cell shows it (JSON for nested values, empty for null)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def with_params(request: Request, path: str | None = None, **changes: Any) -> str:
    """The current URL (or ``path``) with query parameters changed; None or "" drops one."""
    params = {k: v for k, v in request.query_params.items()}
    for key, value in changes.items():
        if value is None or value == "":
            params.pop(key, None)
        else:
            params[key] = str(value)
    query = urlencode(params)
    target = request.url.path if path is None else path
    return f"{target}?{query}" if query else target


_env.globals["with_params"] = with_params
_env.filters.update(
    quote=quote, ms_time=ms_time, size=human_size, pretty_json=pretty_json, cell=cell
)


def page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """``template`` rendered with ``context``, the request and the session's CSRF token."""
    session = request.scope.get("console_session")
    html = _env.get_template(template).render(
        request=request,
        csrf=session.csrf if session else None,
        signed_in=session is not None,
        manages=request.scope.get("console_manages", False),
        **context,
    )
    return HTMLResponse(html, status_code=status)
