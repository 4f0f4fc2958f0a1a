"""``/metrics`` on the admin listener of a real ``deltaport serve --catalog`` process: a
scripted scenario of requests, then the exposition parsed with Prometheus's text parser
and every counter compared with what the scenario did; and ``/livez`` and ``/readyz`` on
both listeners."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake
from prometheus_client.parser import text_string_to_metric_families

from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import (
    TOKEN,
    RunningServer,
    free_port,
    start_server,
    stop_server,
    table_entry,
)
from waiting import wait_until

ADMIN_TOKEN = "metrics-admin-token-7c1d"
TABLE = "/shares/sales/schemas/eu/tables/orders"
SHARING = "/delta-sharing"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@dataclass
class MetricsServer:
    sharing: RunningServer
    admin: httpx.Client
    token: str
    """acme's bearer token"""
    catalog: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MetricsServer]:
    """Share ``sales`` with two tables (``eu.orders`` of two files), granted to ``acme``;
    ``beta`` is a recipient granted nothing."""
    tmp = tmp_path_factory.mktemp("metrics")
    orders = tmp / "orders"
    write_deltalake(str(orders), pa.table({"id": [1, 2]}))
    write_deltalake(str(orders), pa.table({"id": [3]}), mode="append")
    returns = tmp / "returns"
    write_deltalake(str(returns), pa.table({"id": [9]}))
    url = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(url)
    catalog.create_share("sales")
    catalog.add_table("sales", "eu", "orders", TableSpec(str(orders)))
    catalog.add_table("sales", "eu", "returns", TableSpec(str(returns)))
    token = catalog.create_recipient("acme").token
    catalog.create_recipient("beta")
    catalog.grant("sales", "acme")
    catalog.database.close()
    port = free_port()
    config = {"signingKey": "metrics-key", "admin": {"port": port, "tokens": [ADMIN_TOKEN]}}
    sharing = start_server(config, tmp / "server", catalog=url)
    admin = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    wait_until(
        lambda: admin.get("/livez", timeout=1), 30, "the admin listener", ignore=(httpx.HTTPError,)
    )
    try:
        yield MetricsServer(sharing, admin, token, url)
    finally:
        admin.close()
        stop_server(sharing)


def scrape(admin: httpx.Client) -> tuple[str, Samples]:
    answer = admin.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    samples: Samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return answer.text, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def requests(samples: Samples, listener: str, route: str, method: str, status: int) -> float:
    labels = {"listener": listener, "route": route, "method": method, "status": str(status)}
    return value(samples, "deltaport_http_requests_total", **labels)


def listed_files(answer: httpx.Response) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in answer.text.splitlines()]
    return [line["file"] for line in lines if "file" in line]


def test_the_counters_match_a_scripted_scenario(served: MetricsServer) -> None:
    _, before = scrape(served.admin)
    with served.sharing.client(served.token) as acme, served.sharing.client("wrong") as stranger:
        assert acme.get("/shares").status_code == 200
        assert acme.get("/shares").status_code == 200  # a hot route, answered before routing
        assert acme.get("/shares/nowhere").status_code == 404
        assert acme.get(f"{TABLE}/version").status_code == 200  # the other hot route
        assert stranger.get("/shares").status_code == 401
        assert stranger.post(f"{TABLE}/query", json={}).status_code == 401
        assert acme.get("/no/such/route/here").status_code == 404
        wrong_client = httpx.post(
            served.sharing.url + "/oauth/token",
            data={"grant_type": "client_credentials"},
            auth=("dpc_nobody", "dps_wrong"),
        )
        assert wrong_client.status_code == 401
        first = acme.post(f"{TABLE}/query", json={})
        second = acme.post(f"{TABLE}/query", json={})
    assert first.status_code == second.status_code == 200
    files = listed_files(first)
    assert len(files) == 2
    size = sum(int(str(f["size"])) for f in files)
    assert served.admin.get("/metrics").status_code == 401  # no admin token
    text, after = scrape(served.admin)

    def delta(route: str, method: str, status: int, listener: str = "sharing") -> float:
        route = SHARING + route if listener == "sharing" else route
        now = requests(after, listener, route, method, status)
        return now - requests(before, listener, route, method, status)

    assert delta("/shares", "GET", 200) == 2
    assert delta("/shares", "GET", 401) == 1
    assert delta("/shares/{share}", "GET", 404) == 1
    assert delta("/shares/{share}/schemas/{schema}/tables/{table}/version", "GET", 200) == 1
    assert delta("/shares/{share}/schemas/{schema}/tables/{table}/query", "POST", 200) == 2
    assert delta("/shares/{share}/schemas/{schema}/tables/{table}/query", "POST", 401) == 1
    assert requests(after, "sharing", "other", "GET", 404) == 1
    assert delta("/oauth/token", "POST", 401) == 1
    assert delta("/metrics", "GET", 401, listener="admin") == 1
    assert delta("/metrics", "GET", 200, listener="admin") == 1  # the first scrape

    def counted(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert counted("deltaport_token_failures_total", listener="sharing") == 3
    assert counted("deltaport_token_failures_total", listener="admin") == 1
    served_labels = {"recipient": "acme", "table": "sales.eu.orders"}
    assert counted("deltaport_served_files_total", **served_labels) == 4
    assert counted("deltaport_served_bytes_total", **served_labels) == 2 * size
    assert counted("deltaport_snapshot_cache_lookups_total", result="miss") == 1
    assert counted("deltaport_snapshot_cache_lookups_total", result="hit") == 1
    route = SHARING + "/shares/{share}/schemas/{schema}/tables/{table}/query"
    latency = "deltaport_http_request_duration_seconds_count"
    assert counted(latency, listener="sharing", route=route) == 3
    assert value(after, "deltaport_catalog_shares") == 1
    assert value(after, "deltaport_catalog_tables") == 2
    assert value(after, "deltaport_catalog_recipients") == 2
    assert "nowhere" not in text and "/no/such" not in text  # no raw paths as labels
    assert served.token not in text and ADMIN_TOKEN not in text and "wrong" not in text

    # one audit record for each request a route answered (not the unknown path), written
    # by the audit log's thread within a second or so
    audited = 9
    written = "deltaport_audit_records_written_total"

    def all_written() -> bool:
        nonlocal after
        _, after = scrape(served.admin)
        return counted(written) >= audited

    wait_until(all_written, 30, "the audit records to be written", 0.2)
    assert counted(written) == audited
    assert counted("deltaport_audit_records_dropped_total") == 0


def _served_series(admin: httpx.Client, recipient: str) -> set[str]:
    _, samples = scrape(admin)
    return {name for name, labels in samples if ("recipient", recipient) in labels}


@pytest.mark.parametrize("through", ["the provider API", "another writer of the catalog"])
def test_a_deleted_recipients_series_are_dropped(served: MetricsServer, through: str) -> None:
    """Deleted through this server's admin API or by another process on the database (a
    replica, the CLI), the recipient's series leave ``/metrics`` once the sharing listener
    sees the change, without a restart; the others stay."""
    name = "gamma" if through == "the provider API" else "delta"
    catalog = SqlCatalog(served.catalog)
    try:
        token = catalog.create_recipient(name).token
        catalog.grant("sales", name)
    finally:
        catalog.database.close()
    with served.sharing.client(token) as reader:
        wait_until(lambda: reader.get("/shares").status_code == 200, 30, f"{name}'s token accepted")
        assert reader.post(f"{TABLE}/query", json={}).status_code == 200
    with served.sharing.client(served.token) as acme:
        assert acme.post(f"{TABLE}/query", json={}).status_code == 200
    assert {"deltaport_served_files_total", "deltaport_served_bytes_total"} <= _served_series(
        served.admin, name
    )
    if through == "the provider API":
        deleted = served.admin.delete(
            f"/api/2.1/unity-catalog/recipients/{name}",
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
        )
        assert deleted.status_code == 200, deleted.text
    else:
        catalog = SqlCatalog(served.catalog)
        try:
            catalog.drop_recipient(name)
        finally:
            catalog.database.close()
    wait_until(lambda: not _served_series(served.admin, name), 30, f"{name}'s series dropped")
    assert _served_series(served.admin, "acme")


@pytest.mark.parametrize("listener", ["sharing", "admin"])
def test_livez_and_readyz_answer_without_a_token(served: MetricsServer, listener: str) -> None:
    base = served.sharing.base if listener == "sharing" else str(served.admin.base_url)
    for path, body in (("/livez", "ok\n"), ("/readyz", "ready\n")):
        answer = httpx.get(base.rstrip("/") + path)
        assert answer.status_code == 200, answer.text
        assert answer.text == body


def test_both_openapi_documents_describe_the_probes_and_metrics(served: MetricsServer) -> None:
    admin = served.admin.get("/api/openapi.json").json()["paths"]
    assert {"/metrics", "/livez", "/readyz"} <= set(admin)
    assert admin["/readyz"]["get"]["security"] == []
    root = httpx.get(served.sharing.base + "/openapi.json").json()
    assert root["servers"] == [{"url": "/"}]
    assert root["paths"]["/readyz"]["get"]["responses"].keys() == {"200", "503"}


def test_readyz_answers_503_while_the_server_drains(tmp_path: Path) -> None:
    """With ``drainSeconds``, a stop signal makes both listeners not ready while requests
    are still answered; a second signal stops the server at once."""
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1]}))
    port = free_port()
    config = {
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "drainSeconds": 600,
        "admin": {"port": port, "tokens": [ADMIN_TOKEN]},
        "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [table_entry("t", table)]}]}],
    }
    sharing = start_server(config, tmp_path / "server")
    probes = [sharing.base + "/readyz", f"http://127.0.0.1:{port}/readyz"]
    try:
        with sharing.client(TOKEN) as client:
            assert {httpx.get(probe).status_code for probe in probes} == {200}
            sharing.process.send_signal(signal.SIGTERM)
            wait_until(
                lambda: {httpx.get(probe).status_code for probe in probes} == {503},
                30,
                "/readyz to answer 503",
                0.05,
            )
            assert httpx.get(probes[0]).text == "not ready: draining: the server is shutting down\n"
            assert client.get("/shares").status_code == 200  # still served while draining
            assert httpx.get(sharing.base + "/livez").status_code == 200
            sharing.process.send_signal(signal.SIGTERM)
            assert sharing.process.wait(30) == 0
    finally:
        stop_server(sharing)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "server"
METRIC_NAME = re.compile(r"\b((?:deltaport|process)_[a-z_]+)")


def queried_metrics() -> set[str]:
    """Every metric name the sample dashboard and the alert rules query."""
    dashboard = json.loads((DOCS / "grafana-dashboard.json").read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    rules = yaml.safe_load((DOCS / "prometheus-alerts.yml").read_text())
    exprs += [str(r["expr"]) for g in rules["groups"] for r in g["rules"]]
    return {name for expr in exprs for name in METRIC_NAME.findall(expr)}


def test_the_sample_dashboard_and_alert_rules_query_metrics_the_server_exposes(
    served: MetricsServer,
) -> None:
    with served.sharing.client(served.token) as acme:
        assert acme.post(f"{TABLE}/query", json={}).status_code == 200
    _, samples = scrape(served.admin)
    exposed = {name for name, _ in samples}
    queried = queried_metrics()
    assert "deltaport_served_bytes_total" in queried
    assert "deltaport_http_request_duration_seconds_bucket" in queried
    missing = queried - exposed - {"deltaport_vended_credentials_total"}  # none vended yet
    assert not missing, missing
