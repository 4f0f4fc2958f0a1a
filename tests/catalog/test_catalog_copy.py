"""A copy of the catalog database (a backup, a replica's disk) is not a credential.

The attacker holds every row of every table of a byte copy (``deltaport_meta``'s
``token_key``, every stored hash) and, at worst, is a recipient too: they hold genuine page
tokens, refresh tokens and file URLs of their own, so they know each format exactly. For
each kind of credential deltaport issues, the test builds what that attacker can build
(the same format as a genuine one, checked against it; only the key differs, taken from
every way the copy's contents could make one) and shows that the real server, on the same
catalog, refuses it: bearer tokens, OAuth client secrets and access tokens, activation
links, listing and table page tokens, refresh tokens, local file URLs and console
sessions. Were any of them signed with a key the catalog holds, or stored so that the copy
holds them, a forgery here would be accepted."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import shutil
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx
import pytest

from admin_support import start_with_admin
from corpus import corpus_table
from deltaport.catalog.rows import RecipientSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH, credential_id
from deltaport.cli import main as cli
from deltaport.server.files.reader_seal import Reader, ReaderSeal
from deltaport.storage.local_urls import LocalUrlSigner
from sharing_server import RunningServer, stop_server
from waiting import wait_until

SIGNING_KEY = "copy-test-signing-key-77c1"
ADMIN_TOKEN = "copy-test-admin-token-3d9a"
ENDPOINT = "https://sharing.example.com/delta-sharing"
TABLE = "/shares/s/schemas/sc/tables/t"
ACTIVATION = "/api/2.1/unity-catalog/public/data_sharing_activation"
ACTIVATION_INFO = "/api/2.1/unity-catalog/public/data_sharing_activation_info"
MANY = 1_000_000
"""Failed authentications allowed per address: every guess is answered for itself (401,
404), not with the lockout's 429."""


@dataclass(frozen=True)
class Served:
    server: RunningServer
    admin: str
    database: Path


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("copy")
    url = f"sqlite:///{tmp}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    location = str(corpus_table("dat__basic_append").path)
    for share in ("s", "s2"):  # two shares: a listing of shares has a next page
        assert cli(["share", "create", share, "--catalog", url]) == 0
        assert cli(["table", "add", f"{share}.sc.t", location, "--catalog", url]) == 0
    config = {"catalog": url, "signingKey": SIGNING_KEY, "rateLimits": {"failedAuthLimit": MANY}}
    started = start_with_admin(config, tmp / "server", ADMIN_TOKEN, failedAuthLimit=MANY)
    yield Served(started.sharing, started.admin, tmp / "catalog.db")
    stop_server(started.sharing)


@dataclass(frozen=True)
class Genuine:
    """Credentials the real server issued, in the hands of their rightful holders."""

    bearer: str
    client_id: str
    secret: str
    link: str
    access_token: str
    listing_token: str
    page_token: str
    refresh_token: str
    file_url: str
    console_cookie: str


@dataclass(frozen=True)
class Copy:
    """Every row of every table of the stolen copy."""

    rows: dict[str, list[tuple[object, ...]]]

    @property
    def text(self) -> str:
        return repr(self.rows)

    @property
    def token_key(self) -> bytes:
        (key,) = [bytes.fromhex(str(v)) for k, v in self.rows["deltaport_meta"] if k == "token_key"]
        return key

    def cells(self) -> list[str]:
        """Every text value of the copy that fits in a header or a URL path."""
        found = {str(cell) for rows in self.rows.values() for row in rows for cell in row}
        return sorted(c for c in found if c.isascii() and c.isprintable() and " " not in c)

    def hashes(self) -> list[bytes]:
        """The stored hashes (and keys): every 64-digit hex value, as bytes."""
        hexes = [c for c in self.cells() if len(c) == 64]
        return [bytes.fromhex(c) for c in hexes if all(d in "0123456789abcdef" for d in c)]

    def guesses(self, prefix: str) -> list[str]:
        """What may be presented as a secret of the kind starting with ``prefix``: every
        value of the copy as it is and after ``prefix``, and every stored hash in the
        secret's own format (``prefix`` and 32 bytes in base64url, as deltaport makes them)."""
        values = self.cells()
        as_secrets = [_b64(raw) for raw in self.hashes()]
        return sorted({*values, *as_secrets, *(prefix + v for v in [*values, *as_secrets])})

    def keys(self, purpose: str) -> list[bytes]:
        """Every key for ``purpose`` the copy yields: ``token_key`` itself; derived as the
        catalog derives its keys (HMAC of the purpose); taken as the server's ``signingKey``
        (and the empty and absent ones) and derived as the server derives its keys; and each
        of those mixed with the catalog's derived key, as OAuth access tokens' key is."""
        token_key = self.token_key
        catalog_part = _hmac(token_key, purpose.encode())
        alone = [
            token_key,
            catalog_part,
            server_key(token_key.hex(), purpose),
            server_key("", purpose),
            _hmac(b"", purpose.encode()),
            _hmac(token_key, b""),
        ]
        return [*alone, *(_hmac(part, catalog_part) for part in alone)]


def _hmac(key: bytes, message: bytes) -> bytes:
    return hmac.digest(key, message, "sha256")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def server_key(signing_key: str, purpose: str) -> bytes:
    """A key of a server whose ``signingKey`` is ``signing_key``, for ``purpose``."""
    return _hmac(hashlib.sha256(signing_key.encode()).digest(), purpose.encode())


def resigned(token: str, key: bytes) -> str:
    """A page, listing or refresh token with the body of ``token`` MAC-ed with ``key``:
    ``base64url(body) "." base64url(HMAC-SHA256(key, body)[:20])``."""
    body = token.partition(".")[0]
    return f"{body}.{_b64(_hmac(key, _unb64(body))[:20])}"


def access_token(client_id: str, expires_at: int, key: bytes) -> str:
    """An OAuth access token: ``dpa_<client>.<expiry>.<hex HMAC-SHA256(key, body)>``."""
    body = f"dpa_{client_id}.{expires_at}"
    return f"{body}.{_hmac(key, body.encode()).hex()}"


def file_url(genuine: str, url_key: bytes, reader_key: bytes) -> str:
    """The local file URL ``genuine`` signed again: its signature with ``url_key``, its
    reader seal (``rcp``) with ``reader_key``, for the same file, reader and expiry."""
    parts = urlsplit(genuine)
    query = dict(parse_qsl(parts.query))
    base, table_key, path = _file_parts(genuine)
    expires_at = int(query["se"])
    name, credential, _ = query["rcp"].split(".")
    signed = LocalUrlSigner(url_key, base).sign(table_key, path, expires_at)
    return signed + ReaderSeal(reader_key).suffix(table_key, Reader(name, credential), expires_at)


def _file_parts(url: str) -> tuple[str, str, str]:
    """The base URL, table key and relative path of a local file URL."""
    parts = urlsplit(url)
    prefix, _, rest = parts.path.partition("/files/")
    table_key, _, relative = rest.partition("/")
    return f"{parts.scheme}://{parts.netloc}{prefix}/files", unquote(table_key), unquote(relative)


def _accepted(server: RunningServer, token: str) -> bool:
    with server.client(token) as client:
        return client.get("/shares").status_code == 200


def _await(server: RunningServer, token: str) -> None:
    """Wait for the server to accept ``token`` (it polls the catalog)."""
    wait_until(lambda: _accepted(server, token), 10, "the server to accept the token")


def _lines(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


def _issue(served: Served) -> Genuine:
    """A recipient of each kind, and a credential of each kind issued to them."""
    server = served.server
    store = SqlCatalog(f"sqlite:///{served.database}")
    bearer = store.create_recipient("b", RecipientSpec(endpoint=ENDPOINT))
    oauth = store.create_recipient("o", RecipientSpec(endpoint=ENDPOINT, authentication_type=OAUTH))
    link = store.create_recipient_with_link("l", RecipientSpec(endpoint=ENDPOINT))
    for share in ("s", "s2"):
        for name in ("b", "o", "l"):
            store.grant(share, name)
    assert oauth.client_id is not None
    _await(server, bearer.token)
    granted = httpx.post(
        server.url + "/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(oauth.client_id, oauth.token),
    )
    assert granted.status_code == 200, granted.text
    with server.client(bearer.token) as client:
        listing = client.get("/shares", params={"maxResults": 1}).json()["nextPageToken"]
        paged = _lines(client.post(f"{TABLE}/query", json={"maxFiles": 1}))
        refreshed = _lines(client.post(f"{TABLE}/query", json={"includeRefreshToken": True}))
    with httpx.Client(base_url=served.admin) as console:
        console.get("/console/login")
        csrf = console.cookies["deltaport_login_csrf"]
        signed_in = console.post("/console/login", data={"csrf": csrf, "token": ADMIN_TOKEN})
        assert signed_in.status_code == 303, signed_in.text
        cookie = console.cookies["deltaport_session"]
    return Genuine(
        bearer=bearer.token,
        client_id=oauth.client_id,
        secret=oauth.token,
        link=link.url.rsplit("/", 1)[1],
        access_token=granted.json()["access_token"],
        listing_token=listing,
        page_token=paged[-1]["endStreamAction"]["nextPageToken"],
        refresh_token=refreshed[-1]["endStreamAction"]["refreshToken"],
        file_url=next(line["file"]["url"] for line in refreshed if "file" in line),
        console_cookie=cookie,
    )


@pytest.fixture(scope="module")
def stolen(served: Served, tmp_path_factory: pytest.TempPathFactory) -> tuple[Genuine, Copy]:
    """The genuine credentials, then a byte copy of the database file (and its WAL)."""
    genuine = _issue(served)
    into = tmp_path_factory.mktemp("stolen") / "stolen.db"
    for suffix in ("", "-wal"):
        if Path(f"{served.database}{suffix}").exists():
            shutil.copy(f"{served.database}{suffix}", f"{into}{suffix}")
    with sqlite3.connect(into) as db:
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        rows = {name: db.execute(f'SELECT * FROM "{name}"').fetchall() for name in names}
    return genuine, Copy(rows)


def _refused(answer: httpx.Response, status: int, error_code: str, guess: str) -> None:
    """``answer`` to ``guess`` is the server's refusal: ``status`` with its ``errorCode``."""
    assert answer.status_code == status, f"{guess} was answered {answer.text[:300]}"
    assert answer.json()["errorCode"] == error_code, answer.text


def test_the_copy_holds_no_secret(stolen: tuple[Genuine, Copy]) -> None:
    genuine, copy = stolen
    secrets = (genuine.bearer, genuine.secret, genuine.link, genuine.access_token)
    for secret in (*secrets, genuine.console_cookie, SIGNING_KEY, ADMIN_TOKEN):
        assert secret not in copy.text
    for key in (hashlib.sha256(SIGNING_KEY.encode()), hashlib.sha256(ADMIN_TOKEN.encode())):
        assert key.hexdigest() not in copy.text


def test_no_bearer_token_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    genuine, copy = stolen
    guesses = copy.guesses("dpt_")
    assert len(copy.rows["tokens"]) == 1 and copy.rows["tokens"][0][0] in guesses
    with served.server.client(None) as client:
        for guess in guesses:
            answer = client.get("/shares", headers={"Authorization": f"Bearer {guess}"})
            _refused(answer, 401, "UNAUTHENTICATED", guess)
    assert _accepted(served.server, genuine.bearer)


def test_no_oauth_client_secret_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    genuine, copy = stolen
    ((client_id, secret_hash, *_),) = copy.rows["oauth_clients"]
    guesses = copy.guesses("dps_")
    assert secret_hash in guesses
    with httpx.Client(base_url=served.server.url) as client:

        def asked(secret: str) -> httpx.Response:
            form = {"grant_type": "client_credentials"}
            return client.post("/oauth/token", data=form, auth=(str(client_id), secret))

        for guess in guesses:
            _refused(asked(guess), 401, "UNAUTHENTICATED", guess)
        assert asked(genuine.secret).status_code == 200


def test_no_oauth_access_token_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    genuine, copy = stolen
    ((client_id, *_),) = copy.rows["oauth_clients"]
    purpose = "oauth-access-tokens"
    expiry = int(genuine.access_token.split(".")[1])
    mine = _hmac(server_key(SIGNING_KEY, purpose), _hmac(copy.token_key, purpose.encode()))
    keys = copy.keys(purpose)
    built = {access_token(str(client_id), expiry, key) for key in (mine, *keys)}
    assert genuine.access_token in built, "access tokens are made otherwise"
    for key in keys:
        forged = access_token(str(client_id), int(time.time()) + 10 * 365 * 86400, key)
        with served.server.client(forged) as client:
            _refused(client.get("/shares"), 401, "UNAUTHENTICATED", forged)
    assert _accepted(served.server, genuine.access_token)


def test_no_activation_link_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    """A link is ``{origin of the recipient's endpoint}{ACTIVATION}/{32 random bytes in
    base64url}``; the copy holds the endpoint and the link's keyed hash only. Each guess is
    asked on the info route (which would not use a link up) and the download route."""
    genuine, copy = stolen
    ((link_hash, *_),) = copy.rows["activation_links"]
    guesses = copy.guesses("")
    assert link_hash in guesses and ENDPOINT in copy.text
    assert len(genuine.link) == len(_b64(bytes(32)))
    with httpx.Client(base_url=served.server.base) as client:
        for guess in guesses:
            for route in (ACTIVATION_INFO, ACTIVATION):
                answer = client.get(f"{route}/{guess}")
                _refused(answer, 404, "RESOURCE_DOES_NOT_EXIST", guess)
        assert client.get(f"{ACTIVATION_INFO}/{genuine.link}").status_code == 200


def _forged_tokens(token: str, copy: Copy, purpose: str) -> list[str]:
    """``token`` signed again with each key of ``purpose`` the copy yields, after checking
    that :func:`resigned` makes tokens as the server does (with the server's own key, or
    one of the copy's, it gives ``token`` back)."""
    forged = [resigned(token, key) for key in copy.keys(purpose)]
    assert token in {resigned(token, server_key(SIGNING_KEY, purpose)), *forged}
    return forged


def test_no_page_token_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    """Listing page tokens (``page-tokens``) and table page tokens (``table-tokens``),
    presented by a recipient who holds the copy too: 400, the token's own answer."""
    genuine, copy = stolen
    with served.server.client(genuine.bearer) as client:
        for forged in _forged_tokens(genuine.listing_token, copy, "page-tokens"):
            answer = client.get("/shares", params={"maxResults": 1, "pageToken": forged})
            _refused(answer, 400, "INVALID_PARAMETER_VALUE", forged)
        for forged in _forged_tokens(genuine.page_token, copy, "table-tokens"):
            answer = client.post(f"{TABLE}/query", json={"maxFiles": 1, "pageToken": forged})
            _refused(answer, 400, "INVALID_PARAMETER_VALUE", forged)
        page = {"maxFiles": 1, "pageToken": genuine.page_token}
        assert client.post(f"{TABLE}/query", json=page).status_code == 200


def test_no_refresh_token_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    genuine, copy = stolen
    with served.server.client(genuine.bearer) as client:

        def refreshed(token: str) -> httpx.Response:
            body = {"includeRefreshToken": True, "refreshToken": token}
            return client.post(f"{TABLE}/query", json=body)

        for forged in _forged_tokens(genuine.refresh_token, copy, "table-tokens"):
            _refused(refreshed(forged), 400, "INVALID_PARAMETER_VALUE", forged)
        assert refreshed(genuine.refresh_token).status_code == 200


def test_no_file_url_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    """A local file URL signed again for the same file, table, reader and expiry: its
    signature with each ``local-file-urls`` key of the copy, its reader seal with each
    ``file-url-readers`` one. The table key, the recipient and its credential id (public,
    made from the stored token hash) are all in the copy or made from it."""
    genuine, copy = stolen
    _, table_key, _ = _file_parts(genuine.file_url)
    name, credential, _ = dict(parse_qsl(urlsplit(genuine.file_url).query))["rcp"].split(".")
    assert table_key in copy.text and name in copy.text
    assert credential in {credential_id(str(row[0])) for row in copy.rows["tokens"]}
    urls, readers = "local-file-urls", "file-url-readers"
    url_keys, reader_keys = copy.keys(urls), copy.keys(readers)
    mine = server_key(SIGNING_KEY, urls), server_key(SIGNING_KEY, readers)
    built = {
        file_url(genuine.file_url, url_key, reader_key)
        for url_key in (mine[0], *url_keys)
        for reader_key in (mine[1], *reader_keys)
    }
    assert genuine.file_url in built, "file URLs are made otherwise"
    with httpx.Client() as client:
        for url_key in url_keys:
            for reader_key in (*reader_keys, mine[1]):
                forged = file_url(genuine.file_url, url_key, reader_key)
                _refused(client.get(forged), 403, "PERMISSION_DENIED", forged)
        assert client.get(genuine.file_url).status_code == 200


def test_no_console_session_from_the_copy(served: Served, stolen: tuple[Genuine, Copy]) -> None:
    """Sessions live in the admin listener's memory, the cookie a random id (32 bytes in
    base64url): every value of the copy, every key of the copy in the cookie's format, and
    the admin token's SHA-256 (what a session keeps of it; not in the copy) are sent to
    the login page, while the genuine session opens the console."""
    genuine, copy = stolen
    in_format = [_b64(key) for key in copy.keys("console-sessions")]
    assert len(in_format[0]) == len(genuine.console_cookie)
    admin_hash = hashlib.sha256(ADMIN_TOKEN.encode())
    guesses = [*copy.guesses(""), *in_format, admin_hash.hexdigest(), _b64(admin_hash.digest())]

    with httpx.Client(base_url=served.admin) as client:

        def console(cookie: str) -> httpx.Response:
            return client.get("/console/", headers={"Cookie": f"deltaport_session={cookie}"})

        for guess in guesses:
            answer = console(guess)
            assert answer.status_code == 303, f"the session cookie {guess} opened the console"
            assert answer.headers["location"] == "/console/login"
        assert console(genuine.console_cookie).status_code == 200
