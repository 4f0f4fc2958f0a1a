"""The pages every management form shares: the confirmation asked before a destructive
change (a form of its own, so that it works without JavaScript), the confirmed change
itself, and the refusal of a form without its CSRF token."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from deltaport.console.manage.changes import ChangeFailed, Changes, Target
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


async def confirmed(
    changes: Changes,
    request: Request,
    operation: str,
    target: Target,
    change: Callable[[], object],
    to: str,
) -> Response:
    """The confirmation's form posted: ``change`` made (audited as ``operation`` on
    ``target``), then back to ``to``; a refusal is shown as the API would answer it."""
    fields = await changes.posted(request)
    if fields is None:
        return refused(request)
    try:
        await changes.run(request, operation, target, change)
    except ChangeFailed as exc:
        return page(request, "error.html", status=exc.error.status, error=exc.error)
    return RedirectResponse(to, status_code=303)


def refused(request: Request) -> Response:
    return page(request, "refused.html", status=403)


def q(name: str) -> str:
    """``name`` as one segment of a path."""
    return quote(name, safe="")
