"""The pages every management form shares: the confirmation asked before a destructive
change (a form of its own, so that it works without JavaScript) and the refusal of a form
without its CSRF token."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from deltaport.console.render import page


def confirm(
    request: Request, title: str, consequence: str, action: str, back: str, button: str
) -> Response:
    return page(
        request,
        "manage/confirm.html",
        title=title,
        consequence=consequence,
        action=action,
        back=back,
        button=button,
    )


def refused(request: Request) -> Response:
    return page(request, "refused.html", status=403)


def q(name: str) -> str:
    """``name`` as one segment of a path."""
    return quote(name, safe="")
