"""The console's login, sessions, CSRF tokens and security headers, over HTTP against a
real server process."""

from __future__ import annotations

import base64
import hashlib
import time

import httpx
import pytest

from admin_support import ADMIN_TOKEN, HASHED_ADMIN_TOKEN, AdminServer, login
from deltaport.admin.tokens import AdminTokens, token_hash
from deltaport.console.sessions import Sessions
from sharing_server import TOKEN


def page_csrf(html: str) -> str:
    marker = 'name="csrf" value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


@pytest.mark.parametrize("token", [ADMIN_TOKEN, HASHED_ADMIN_TOKEN])
def test_login_gives_a_strict_http_only_expiring_session(
    admin_server: AdminServer, token: str
) -> None:
    with httpx.Client(base_url=admin_server.admin) as client:
        form = client.get("/console/login")
        assert form.status_code == 200
        csrf = client.cookies["deltaport_login_csrf"]
        assert f'value="{csrf}"' in form.text
        response = client.post("/console/login", data={"csrf": csrf, "token": token})
        assert response.status_code == 303
        assert response.headers["location"] == "/console/"
        cookie = next(
            c for c in response.headers.get_list("set-cookie") if c.startswith("deltaport_session=")
        )
        attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
        assert {"httponly", "max-age", "path", "samesite"} <= attributes
        assert "samesite=strict" in cookie.lower()
        assert "secure" not in attributes  # plain HTTP; under TLS the cookie is Secure
        assert client.get("/console/").status_code == 200
        assert "lake.main.dvcm" in client.get("/console/tables").text


def test_pages_without_a_session_lead_to_the_login(admin_server: AdminServer) -> None:
    for path in ["/console/", "/console/tables/lake.main.dvcm", "/console/diff"]:
        response = httpx.get(admin_server.admin + path)
        assert response.status_code == 303
        assert response.headers["location"] == "/console/login"


@pytest.mark.parametrize("path", ["/", "/console"])
def test_the_console_without_its_slash_redirects_relatively(
    admin_server: AdminServer, path: str
) -> None:
    """The Location is a path, never a URL made from the Host header the request names."""
    response = httpx.get(admin_server.admin + path, headers={"Host": "evil.example"})
    assert response.status_code == 303
    assert response.headers["location"] == "/console/"


def test_a_wrong_token_is_refused(admin_server: AdminServer) -> None:
    with httpx.Client(base_url=admin_server.admin) as client:
        client.get("/console/login")
        csrf = client.cookies["deltaport_login_csrf"]
        for token in ["wrong-token-000000000", TOKEN, ""]:
            response = client.post("/console/login", data={"csrf": csrf, "token": token})
            assert response.status_code == 401
            assert "not valid" in response.text
            assert "deltaport_session" not in response.headers.get("set-cookie", "")


def test_login_without_its_csrf_token_is_refused(admin_server: AdminServer) -> None:
    with httpx.Client(base_url=admin_server.admin) as client:
        response = client.post("/console/login", data={"token": ADMIN_TOKEN})
        assert response.status_code == 403
        client.get("/console/login")
        response = client.post("/console/login", data={"csrf": "forged", "token": ADMIN_TOKEN})
        assert response.status_code == 403
        assert "deltaport_session" not in response.headers.get("set-cookie", "")


def test_logout_needs_the_session_csrf_token(admin_server: AdminServer) -> None:
    with login(admin_server) as client:
        refused = client.post("/console/logout", data={})
        assert refused.status_code == 403
        refused = client.post("/console/logout", data={"csrf": "0" * 64})
        assert refused.status_code == 403
        assert client.get("/console/").status_code == 200  # still signed in
        csrf = page_csrf(client.get("/console/").text)
        response = client.post("/console/logout", data={"csrf": csrf})
        assert response.status_code == 303
        assert client.get("/console/").status_code == 303


def test_a_session_lasts_the_configured_seconds(short_session_server: AdminServer) -> None:
    before = int(time.time())
    with login(short_session_server) as client:
        after = int(time.time())
        (cookie,) = [c for c in client.cookies.jar if c.name == "deltaport_session"]
        assert cookie.expires is not None
        assert before + 2 <= cookie.expires <= after + 2  # sessionSeconds: 2
        assert client.get("/console/").status_code == 200


def test_sessions_start_and_expire_by_their_clock() -> None:
    """Expiry on an injected clock: a session ends when its seconds are up, whatever the
    browser does with the cookie's Max-Age."""
    now = [1_000_000.0]
    sessions = Sessions(AdminTokens([ADMIN_TOKEN]), 60, clock=lambda: now[0])
    cookie = sessions.start(token_hash(ADMIN_TOKEN))
    now[0] += 59.5
    assert sessions.open(cookie) is not None
    now[0] += 0.5
    assert sessions.open(cookie) is None
    assert sessions.open(cookie) is None  # and it stays ended


def test_an_altered_session_is_refused(admin_server: AdminServer) -> None:
    with login(admin_server) as client:
        cookie = client.cookies["deltaport_session"]
        forged = cookie[:-2] + ("AA" if cookie[-2:] != "AA" else "BB")
        client.cookies.clear()
        response = client.get("/console/", headers={"cookie": f"deltaport_session={forged}"})
        assert response.status_code == 303


def test_the_session_cookie_is_opaque(admin_server: AdminServer) -> None:
    """Nothing in the cookie derives from the admin token: a leaked cookie gives nothing to
    guess the token from offline."""
    with login(admin_server) as client:
        cookie = client.cookies["deltaport_session"]
    digest = hashlib.sha256(ADMIN_TOKEN.encode())
    parts = [base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)) for p in cookie.split(".")]
    for decoded in (cookie.encode(), *parts):
        assert digest.hexdigest().encode() not in decoded
        assert digest.digest() not in decoded
        assert ADMIN_TOKEN.encode() not in decoded
    assert [len(p) for p in parts] == [32]  # a random id, nothing else


def test_logout_ends_the_session_on_the_server(admin_server: AdminServer) -> None:
    with login(admin_server) as client:
        cookie = client.cookies["deltaport_session"]
        csrf = page_csrf(client.get("/console/").text)
        assert client.post("/console/logout", data={"csrf": csrf}).status_code == 303
    # the old cookie, replayed after logout, opens nothing
    with httpx.Client(base_url=admin_server.admin, timeout=60) as replay:
        response = replay.get("/console/", headers={"cookie": f"deltaport_session={cookie}"})
        assert response.status_code == 303
        assert response.headers["location"] == "/console/login"


@pytest.mark.parametrize(
    "path",
    ["/console/login", "/console/static/console.css", "/api/openapi.json", "/api/diff"],
)
def test_security_headers(admin_server: AdminServer, path: str) -> None:
    response = httpx.get(admin_server.admin + path)
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert "strict-transport-security" not in response.headers  # plain HTTP: only under TLS


def test_pages_have_no_inline_scripts_and_load_only_own_assets(admin_server: AdminServer) -> None:
    with login(admin_server) as client:
        html = client.get("/console/tables/lake.main.dvcm").text
        assert '<script src="/console/static/htmx.min.js" defer></script>' in html
        assert html.count("<script") == 1
        assert "http://" not in html.replace(admin_server.admin, "")
        assert "https://" not in html
        assert " style=" not in html and " on" + "click=" not in html
        htmx = client.get("/console/static/htmx.min.js")
        assert htmx.status_code == 200 and "javascript" in htmx.headers["content-type"]


def test_the_admin_token_is_not_logged(admin_server: AdminServer) -> None:
    with login(admin_server):
        pass
    log = admin_server.sharing.log()
    assert ADMIN_TOKEN not in log
    assert HASHED_ADMIN_TOKEN not in log
