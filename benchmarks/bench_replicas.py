"""Requests a second through HAProxy to one replica, and to three, on one PostgreSQL catalog.

Starts a private PostgreSQL cluster (``tests/postgres.py``), a catalog with one share of a
small local table (10 files) granted to one recipient, three ``deltaport.server``
replicas on it (the same ``signingKey``, audit records kept in the database), and two
HAProxy processes (Debian's ``haproxy``: ``apt-get install haproxy``), one balancing to
the first replica alone and one to all three (round robin, health checks on ``/readyz``,
as in docs/server/replicas.md). Then measures ``GET /shares`` and ``POST .../query``
requests a second through each balancer (as ``bench_server.py`` measures them:
:data:`bench_server.CONCURRENCY` keep-alive clients), the two balancers in turn for
``ROUNDS`` rounds, and prints the medians and their ratio (three / one). The replicas of
the one-replica balancer's rounds stay up, idle (each polls the catalog once a second).

The load generator runs on the same machine: on two cores the three replicas and the
clients share them, so the ratio says what replicas gain when the CPU is the limit, not
what they gain on hosts of their own.

Run: ``uv run python benchmarks/bench_replicas.py`` (about a minute).
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import yaml
from deltalake import write_deltalake

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_server import deltaport_serving, free_port, requests_per_second

from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from postgres import PostgresCluster, new_database

REPLICAS = 3
ROUNDS = 3
PREFIX = "/delta-sharing"
QUERY = f"{PREFIX}/shares/bench/schemas/default/tables/t/query"

HAPROXY = """
global
    maxconn 4096
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend sharing
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    http-reuse always
    option httpchk GET /readyz
    http-check expect status 200
{servers}
"""


def seed(url: str, tmp: Path) -> str:
    table = tmp / "t"
    for i in range(10):
        write_deltalake(
            str(table), pa.table({"id": list(range(i * 100, i * 100 + 100))}), mode="append"
        )
    store = SqlCatalog(url)
    store.create_share("bench")
    store.add_table("bench", "default", "t", TableSpec(str(table)))
    token = store.create_recipient("reader").token
    store.grant("bench", "reader")
    store.database.close()
    return token


@contextlib.contextmanager
def balancer(tmp: Path, name: str, ports: list[int]) -> Iterator[int]:
    """HAProxy on a free port, balancing to ``ports``; its port once every server is up."""
    port = free_port()
    servers = "\n".join(
        f"    server r{i} 127.0.0.1:{p} check inter 1s" for i, p in enumerate(ports)
    )
    config = tmp / f"{name}.cfg"
    config.write_text(HAPROXY.format(port=port, servers=servers))
    process = subprocess.Popen(
        ["haproxy", "-db", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"haproxy {name} did not start")
            time.sleep(0.2)
        time.sleep(2)  # every server's first health check passed
        yield port
    finally:
        process.terminate()
        process.wait(10)


def _rounds(rates: list[float]) -> str:
    return "/".join(f"{r:,.0f}" for r in rates)


def main() -> None:
    if shutil.which("haproxy") is None:
        sys.exit("haproxy is not installed: apt-get install -y haproxy")
    cluster = PostgresCluster()
    cluster.start()
    try:
        with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
            tmp = Path(folder)
            url = new_database(cluster.url)
            token = seed(url, tmp)
            config = tmp / "server.yaml"
            settings = {"catalog": url, "signingKey": "bench-replicas-key", "accessLog": False}
            config.write_text(yaml.safe_dump(settings))
            ports = [free_port() for _ in range(REPLICAS)]
            for port in ports:
                stack.enter_context(deltaport_serving(config, port))
            balancers = {
                "1": stack.enter_context(balancer(tmp, "one", ports[:1])),
                "3": stack.enter_context(balancer(tmp, "three", ports)),
            }
            rates: dict[tuple[str, str], list[float]] = {}
            for _ in range(ROUNDS):
                for replicas, port in balancers.items():
                    for route, body in (("shares", None), ("query", b"{}")):
                        path = f"{PREFIX}/shares" if route == "shares" else QUERY
                        rate = requests_per_second(port, path, token, body)
                        rates.setdefault((replicas, route), []).append(rate)
            for route in ("shares", "query"):
                one = statistics.median(rates[("1", route)])
                three = statistics.median(rates[("3", route)])
                print(
                    f"{route}: 1 replica {one:,.0f}/s, {REPLICAS} replicas {three:,.0f}/s, "
                    f"ratio {three / one:.2f}x (medians of {ROUNDS} alternating rounds; "
                    f"rounds {_rounds(rates[('1', route)])} and {_rounds(rates[('3', route)])})"
                )
    finally:
        cluster.remove()


if __name__ == "__main__":
    main()
