"""schemathesis against the OpenAPI documents a real deltaport server serves on 127.0.0.1.

The server runs on a SQLite catalog with two shares of corpus tables, a bearer-token
recipient granted both and an OAuth recipient granted one, and the admin listener. Each
document the server serves is a target: the sharing API (``<endpoint>/openapi.json``, with
the OAuth token endpoint), the sharing listener's root (``/openapi.json``: the health probes
and the activation routes), the Iceberg catalog (``/iceberg/openapi.json``) and the admin
listener's (``/api/openapi.json``: admin API, the provider API in Unity Catalog's shape, its
OpenSharing prefix, audit, metrics). Requests go where the document's own ``servers`` say,
as in any run of schemathesis against the served URL. Every operation gets schema-valid and
schema-invalid requests, and schema-valid ones naming things that exist, with valid
credentials and without. Each response is checked: no 5xx, the status, content type and
body are ones the document describes, and the answer comes within :data:`TIMEOUT_SECONDS`
(else it counts as a hang). Used by ``tests/test_api_fuzz.py`` (a bounded run) and
``benchmarks/fuzz_api.py`` (a long one).
"""

from __future__ import annotations

import base64
import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx
import hypothesis
import msgspec
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from admin_support import ADMIN_TOKEN, _await_admin
from corpus import corpus_table
from deltaport.catalog.rows import RecipientSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import free_port, start_server, stop_server, write_partitioned_table

TIMEOUT_SECONDS = 20.0
"""A request that takes longer counts as a hang."""

SIGNING_KEY = "a-fixed-key-for-the-api-fuzz"

CHECKS: dict[str, Callable[..., Any]] = {
    "not_a_server_error": not_a_server_error,
    "status_code_conformance": status_code_conformance,
    "content_type_conformance": content_type_conformance,
    "response_schema_conformance": response_schema_conformance,
}
"""No 5xx; the status, the content type and the body are among those the document
describes for the operation."""


SHARED_TABLES = [
    {"share": "sales", "schema": "eu", "table": "orders"},
    {"share": "lab", "schema": "corpus", "table": "cdf_table"},
    {"share": "lab", "schema": "corpus", "table": "table_with_dv_small"},
]
"""Tables the recipient ``acme`` is granted (``orders`` is partitioned, with history); a
signed URL of one of its files is added to them."""

ADMIN_NAMES = [
    {"share": "lab", "recipient": "partner", "table": "lab.corpus.basic_append"},
    {"share": "sales", "recipient": "acme", "table": "sales.eu.orders"},
]
"""Names the admin API knows (its cases may change or drop them: the admin targets run
last)."""


@dataclass
class FuzzTarget:
    """A served document, and the credentials to call what it describes with."""

    name: str
    document_url: str
    headers: dict[str, str]
    known: list[dict[str, str]]
    """Path parameters naming things that exist (with the query parameters that go with
    them): each set gets cases of its own, so that requests reach past the 404 of a random
    name and the 403 of a random file URL."""


@dataclass
class FuzzServer:
    sharing_base: str  # http://127.0.0.1:port, the sharing listener's root
    sharing_url: str  # ... with the sharing endpoint
    admin_base: str
    recipient_token: str
    oauth_basic: str  # the OAuth recipient's client credentials, as an HTTP Basic header
    file_url: dict[str, str]
    """A signed URL of a file of ``sales.eu.orders``: its path parameters and query."""

    def documents(self) -> dict[str, str]:
        """Every OpenAPI document the server serves, by name."""
        return {
            "sharing": self.sharing_url + "/openapi.json",
            "root": self.sharing_base + "/openapi.json",
            "iceberg": self.sharing_base + "/iceberg/openapi.json",
            "admin": self.admin_base + "/api/openapi.json",
        }

    def targets(self) -> list[FuzzTarget]:
        """Every document, with valid credentials and without any (the root's routes take
        none)."""
        docs = self.documents()
        token = _bearer(self.recipient_token)
        oauth = {"Authorization": self.oauth_basic}
        admin_token = _bearer(ADMIN_TOKEN)
        known = [*SHARED_TABLES, self.file_url]
        return [
            FuzzTarget("sharing", docs["sharing"], token, known),
            FuzzTarget("sharing, no token", docs["sharing"], {}, known),
            FuzzTarget("sharing, OAuth client", docs["sharing"], oauth, []),
            FuzzTarget("sharing root", docs["root"], {}, []),
            FuzzTarget("iceberg", docs["iceberg"], token, SHARED_TABLES),
            FuzzTarget("iceberg, no token", docs["iceberg"], {}, SHARED_TABLES),
            FuzzTarget("admin", docs["admin"], admin_token, ADMIN_NAMES),
            FuzzTarget("admin, no token", docs["admin"], {}, ADMIN_NAMES),
        ]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@contextlib.contextmanager
def fuzz_server(tmp: Path) -> Iterator[FuzzServer]:
    """``deltaport serve --catalog`` with its admin listener, on a catalog of corpus tables,
    recipients and grants."""
    url = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(url)
    catalog.create_share("sales")
    catalog.create_share("lab")
    parted = write_partitioned_table(tmp / "parted")
    catalog.add_table("sales", "eu", "orders", TableSpec(str(parted), history_shared=True))
    for name in ("dat__basic_append", "drs__cdf-table", "drs__table-with-dv-small"):
        short = name.split("__")[1].replace("-", "_")
        catalog.add_table(
            "lab", "corpus", short, TableSpec(str(corpus_table(name).path), history_shared=True)
        )
    token = catalog.create_recipient("acme").token
    catalog.grant("sales", "acme")
    catalog.grant("lab", "acme")
    oauth = catalog.create_recipient(
        "partner", RecipientSpec(authentication_type="OAUTH_CLIENT_CREDENTIALS")
    )
    catalog.grant("lab", "partner")
    basic = base64.b64encode(f"{oauth.client_id}:{oauth.token}".encode()).decode()
    port = free_port()
    config = {
        "signingKey": SIGNING_KEY,
        # the cases without a token must not lock the address out for the targets after them
        "rateLimits": {"failedAuthLimit": 1_000_000},
        "admin": {"port": port, "tokens": [ADMIN_TOKEN], "failedAuthLimit": 1_000_000},
    }
    sharing = start_server(config, tmp / "server", catalog=url)
    try:
        admin = _await_admin(sharing, port)
        file_url = _signed_file_url(sharing.url, token)
        yield FuzzServer(sharing.base, sharing.url, admin.admin, token, f"Basic {basic}", file_url)
    finally:
        stop_server(sharing)


def _signed_file_url(sharing_url: str, token: str) -> dict[str, str]:
    """The path parameters and query of the first file URL of ``sales.eu.orders``."""
    answer = httpx.post(
        sharing_url + "/shares/sales/schemas/eu/tables/orders/query",
        json={},
        headers=_bearer(token),
        timeout=TIMEOUT_SECONDS,
    )
    lines = [msgspec.json.decode(line) for line in answer.content.splitlines()]
    url = urlsplit(next(line["file"]["url"] for line in lines if "file" in line))
    prefix = urlsplit(sharing_url).path + "/files/"
    table_key, _, file_path = url.path.removeprefix(prefix).partition("/")
    return {
        "table_key": unquote(table_key),
        "file_path": unquote(file_path),
        **dict(parse_qsl(url.query)),
    }


@dataclass
class FuzzReport:
    """Cases sent and, per check, how many passed and the first failures."""

    cases: Counter[str] = field(default_factory=Counter)
    passed: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    successes: Counter[str] = field(default_factory=Counter)
    """2xx and 3xx answers per target."""

    @property
    def total(self) -> int:
        return sum(self.cases.values())

    def lines(self) -> list[str]:
        out = [f"{self.total} cases"]
        for target, count in sorted(self.cases.items()):
            out.append(f"  {target}: {count} ({self.successes[target]} answered below 400)")
        for check in [*CHECKS, "no_hang"]:
            passed = self.passed[check]
            out.append(f"{check}: {passed} passed, {self.total - passed} failed")
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(self.statuses.items()))
        out.append(f"statuses: {statuses}")
        return out


def run_fuzz(target: FuzzTarget, cases_per_operation: int, report: FuzzReport) -> None:
    """``cases_per_operation`` schema-valid and as many schema-invalid cases (where the
    operation has something to break) for every operation of ``target``'s document."""
    schema = schemathesis.openapi.from_url(target.document_url, timeout=TIMEOUT_SECONDS)
    session = requests.Session()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = operation.as_strategy(generation_mode=mode)
            _run_cases(target, strategy, cases_per_operation, session, report)
        declared = schema.raw_schema["paths"][operation.path][operation.method.lower()]
        in_query = {p["name"] for p in declared.get("parameters", []) if p["in"] == "query"}
        for names in target.known:
            path = {k: v for k, v in names.items() if f"{{{k}}}" in operation.path}
            if path:
                query = {k: v for k, v in names.items() if k in in_query}
                strategy = operation.as_strategy(path_parameters=path, query=query or None)
                _run_cases(target, strategy, cases_per_operation, session, report)


def _run_cases(
    target: FuzzTarget,
    strategy: Any,
    count: int,
    session: requests.Session,
    report: FuzzReport,
) -> None:
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        verbosity=hypothesis.Verbosity.quiet,
    )
    @hypothesis.given(case=strategy)
    def send(case: Any) -> None:
        _send(target, case, session, report)

    with contextlib.suppress(hypothesis.errors.Unsatisfiable):
        send()  # Unsatisfiable: nothing invalid to generate for this operation


def _send(target: FuzzTarget, case: Any, session: requests.Session, report: FuzzReport) -> None:
    report.cases[target.name] += 1
    label = f"{target.name}: {case.method} {case.formatted_path}"
    try:
        response = case.call(
            session=session,
            headers=target.headers,
            timeout=TIMEOUT_SECONDS,
        )
    except requests.Timeout:
        report.failures.append(f"{label}: no answer in {TIMEOUT_SECONDS}s")
        return
    report.passed["no_hang"] += 1
    report.statuses[response.status_code] += 1
    if response.status_code < 400:
        report.successes[target.name] += 1
    for name, check in CHECKS.items():
        try:
            case.validate_response(response, checks=[check], headers=target.headers)
        except (AssertionError, FailureGroup) as failure:
            report.failures.append(
                f"{label} -> {response.status_code} {name}: {_first_line(failure)}\n"
                f"  {case.as_curl_command()}\n"
                f"  {response.text[:300]}"
            )
        else:
            report.passed[name] += 1


def _first_line(failure: BaseException) -> str:
    return (str(failure).strip().splitlines() or [type(failure).__name__])[0]
