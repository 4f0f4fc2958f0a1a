"""A soak under load: many clients of several recipients against one real server on loopback.

Builds a SQLite catalog (one share of a Delta table with history and change data, several
recipients) and starts ``python -m deltaport.server`` on it, then runs ``--clients``
threads for ``--seconds``, each a recipient's client looping over listings, metadata, a
whole snapshot query, a paged query, changes and a file download. In the middle the token
of recipient ``rotated`` is rotated (the old one ending at once) and the grant of recipient
``revoked`` is revoked: their clients count 401/403/404 from then on as expected. One
recipient, ``greedy``, is over its rate limit the whole time (its 429s are expected), and
one client guesses tokens from another address (its 401s and 429s are expected): the
figures of the other recipients show whether either slowed them down.

It prints requests per second, p50/p99 latency per kind of client, the unexpected answers,
and the server's resident memory (VmRSS), open file descriptors and threads at the start,
after the warm-up and at the end (read from ``/proc/PID``, so Linux only). Targets: no
unexpected answer, memory growing under 10% after the warm-up, no descriptor or thread
growth. ``tests/test_soak.py`` runs a short version.

Run: ``uv run --frozen python benchmarks/soak.py`` (10 minutes, 50 clients by default).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import yaml
from deltalake import write_deltalake

from deltaport.catalog.sql_store import SqlCatalog

TABLE = "/shares/soak/schemas/s/tables/t"
STEADY = ("r0", "r1", "r2", "r3")
GREEDY_RATE = 10  # requests per second allowed to recipient greedy
GUESSER_ADDRESS = "203.0.113.9"
ADDRESSES = {
    name: f"198.51.100.{i}"
    for i, name in enumerate((*STEADY, "rotated", "revoked", "greedy"), start=1)
}
FD_SLACK = 4  # connections being opened or closed at the instant of a count


@dataclass
class Resources:
    rss_kib: int
    fds: int
    threads: int

    def __str__(self) -> str:
        return f"RSS {self.rss_kib / 1024:.1f} MiB, {self.fds} fds, {self.threads} threads"


def resources(pid: int) -> Resources:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    rss = int(fields["VmRSS"].split()[0])
    return Resources(rss, len(os.listdir(f"/proc/{pid}/fd")), int(fields["Threads"]))


@dataclass
class Tally:
    """What the clients of one kind saw."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)


@dataclass
class SoakResult:
    seconds: float
    tallies: dict[str, Tally]
    start: Resources
    warm: Resources
    end: Resources

    @property
    def unexpected(self) -> list[str]:
        return [u for t in self.tallies.values() for u in t.unexpected]

    @property
    def memory_growth(self) -> float:
        """Resident memory growth after the warm-up, as a fraction."""
        return self.end.rss_kib / self.warm.rss_kib - 1

    @property
    def grew(self) -> bool:
        """Whether descriptors or threads grew after the warm-up."""
        return self.end.fds > self.warm.fds + FD_SLACK or self.end.threads > self.warm.threads

    def report(self) -> str:
        lines = [f"soak: {self.seconds:.0f} s"]
        for kind, tally in self.tallies.items():
            n = len(tally.latencies)
            if not n:
                continue
            ms = sorted(x * 1000 for x in tally.latencies)
            p50, p99 = statistics.median(ms), ms[min(n - 1, int(n * 0.99))]
            statuses = ", ".join(f"{s}: {c}" for s, c in sorted(tally.statuses.items()))
            lines.append(
                f"  {kind:<8} {n / self.seconds:8.1f} req/s  p50 {p50:7.1f} ms  "
                f"p99 {p99:7.1f} ms  ({statuses})"
            )
        lines += [
            f"  unexpected answers: {len(self.unexpected)}",
            *(f"    {u}" for u in self.unexpected[:10]),
            f"  server at start:        {self.start}",
            f"  server after warm-up:   {self.warm}",
            f"  server at end:          {self.end}",
            f"  memory growth after warm-up: {self.memory_growth:+.1%}",
        ]
        return "\n".join(lines)


def build(tmp: Path) -> tuple[str, dict[str, str]]:
    """A catalog with one share of a table of six versions; the recipients' tokens."""
    table = tmp / "table"
    for version in range(6):
        rows = pa.table({"id": list(range(version * 100, version * 100 + 100))})
        write_deltalake(
            str(table),
            rows,
            mode="append",
            configuration={"delta.enableChangeDataFeed": "true"},
        )
    url = f"sqlite:///{tmp}/catalog.db"
    store = SqlCatalog(url)
    store.create_share("soak")
    store.add_table("soak", "s", "t", str(table), history_shared=True)
    tokens = {}
    for name in (*STEADY, "rotated", "revoked", "greedy"):
        tokens[name] = store.create_recipient(name).token
        store.grant("soak", name)
    return url, tokens


def server_config(url: str, limits: bool = True, failed_auth_window: int = 60) -> dict[str, Any]:
    """The server's configuration; without ``limits``, no rate limit and a failed
    authentication limit never reached (to compare the steady clients' figures). The
    guesser gets ``failedAuthLimit`` 401s per ``failed_auth_window`` seconds."""
    if not limits:
        unlimited = {"failedAuthLimit": 10**9}
        return {**server_config(url), "rateLimits": unlimited}
    return {
        "catalog": url,
        "signingKey": "soak-signing-key",
        "accessLog": False,
        "trustedProxies": ["127.0.0.1/32"],
        "rateLimits": {
            "requestsPerSecond": 1000,
            "burst": 2000,
            "recipients": {"greedy": {"requestsPerSecond": GREEDY_RATE}},
            "failedAuthLimit": 20,
            "failedAuthWindowSeconds": failed_auth_window,
        },
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(config: dict[str, Any], tmp: Path) -> Iterator[tuple[int, str]]:
    """A server process on ``config``: its pid and sharing endpoint URL."""
    path = tmp / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    port = free_port()
    log = (tmp / "server.log").open("wb")
    command = [sys.executable, "-m", "deltaport.server", "--config", str(path)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)], stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}/delta-sharing"
    try:
        deadline = time.monotonic() + 120
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((tmp / "server.log").read_text(errors="replace"))
            try:
                httpx.get(base + "/openapi.json", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield process.pid, base
    finally:
        process.terminate()
        process.wait(30)
        log.close()


class Client(threading.Thread):
    """One recipient's client, looping over the operations until ``stop`` is set."""

    def __init__(self, kind: str, recipient: str, soak: Soak) -> None:
        super().__init__(daemon=True)
        self.kind, self.recipient, self.soak = kind, recipient, soak
        self.tally = Tally()
        # each recipient's clients come from an address of their own, as partners do
        address = GUESSER_ADDRESS if kind == "guesser" else ADDRESSES[recipient]
        headers = {
            "Authorization": f"Bearer {soak.tokens.get(recipient, 'x' * 40)}",
            "X-Forwarded-For": address,
        }
        self.http = httpx.Client(base_url=soak.base, headers=headers, timeout=60)
        self.file_url: str | None = None

    def run(self) -> None:
        operations = [
            self.listings,
            self.metadata,
            self.snapshot,
            self.paged,
            self.changes,
            self.download,
        ]
        try:
            for operation in itertools.cycle(operations):
                if self.soak.stop.is_set():
                    return
                operation()
        finally:
            self.http.close()

    def call(self, method: str, url: str, **kwargs: Any) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = self.http.request(method, url, **kwargs)
            response.read()
        except httpx.HTTPError as exc:
            self.tally.unexpected.append(f"{self.kind} {method} {url}: {type(exc).__name__}")
            return None
        ended = time.perf_counter()
        self.tally.latencies.append(ended - started)
        self.tally.statuses[response.status_code] += 1
        if response.status_code not in self.expected(ended):
            body = response.text[:200]
            self.tally.unexpected.append(
                f"{self.kind} {method} {url.split('?')[0]}: {response.status_code} {body}"
            )
        return response if response.status_code == 200 else None

    def expected(self, ended: float) -> set[int]:
        if self.kind == "greedy":
            return {200, 429}
        if self.kind == "guesser":
            return {401, 429}
        changed = self.soak.changed_at.get(self.recipient)
        if changed is not None and ended >= changed:
            # 200 until the server has read the change; an old token presented again and
            # again is then refused by the failed-authentication limit (429)
            return {200, 401, 403, 404, 429}
        return {200}

    def listings(self) -> None:
        self.call("GET", "/shares")
        self.call("GET", "/shares/soak/all-tables")

    def metadata(self) -> None:
        self.call("GET", TABLE + "/version")
        self.call("GET", TABLE + "/metadata")

    def snapshot(self) -> None:
        response = self.call("POST", TABLE + "/query", json={})
        for line in response.text.splitlines() if response else ():
            action = json.loads(line)
            if "file" in action:
                self.file_url = action["file"]["url"]

    def paged(self) -> None:
        body: dict[str, Any] = {"maxFiles": 2}
        for _ in range(10):
            response = self.call("POST", TABLE + "/query", json=body)
            token = None
            for line in response.text.splitlines() if response else ():
                token = json.loads(line).get("endStreamAction", {}).get("nextPageToken", token)
            if not token:
                return
            body = {"maxFiles": 2, "pageToken": token}

    def changes(self) -> None:
        self.call("GET", TABLE + "/changes", params={"startingVersion": 0})

    def download(self) -> None:
        if self.file_url is not None:
            self.call("GET", self.file_url)


@dataclass
class Soak:
    base: str
    tokens: dict[str, str]
    stop: threading.Event = field(default_factory=threading.Event)
    changed_at: dict[str, float] = field(default_factory=dict)


def kinds(clients: int) -> list[tuple[str, str]]:
    """(kind, recipient) of each client: one greedy recipient's and one guesser's, one
    each for the rotated and revoked recipients, the rest the steady recipients'."""
    fixed = [("greedy", "greedy"), ("greedy", "greedy"), ("guesser", "nobody")]
    fixed += [("rotated", "rotated"), ("revoked", "revoked")]
    steady = [("steady", STEADY[i % len(STEADY)]) for i in range(max(1, clients - len(fixed)))]
    return fixed + steady


def soak(
    seconds: float, clients: int, limits: bool = True, failed_auth_window: int = 60
) -> SoakResult:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        url, tokens = build(tmp)
        with serving(server_config(url, limits, failed_auth_window), tmp) as (pid, base):
            start = resources(pid)
            run = Soak(base, tokens)
            threads = [Client(kind, recipient, run) for kind, recipient in kinds(clients)]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            warm_up = min(60.0, seconds / 5)
            time.sleep(warm_up)
            warm = resources(pid)
            time.sleep(max(0.0, seconds / 2 - warm_up))
            store = SqlCatalog(url)
            run.changed_at["rotated"] = time.perf_counter()
            store.rotate("rotated", timedelta(0))
            run.changed_at["revoked"] = time.perf_counter()
            store.revoke_grant("soak", "revoked")
            time.sleep(max(0.0, began + seconds - time.perf_counter()))
            end = resources(pid)
            run.stop.set()
            for thread in threads:
                thread.join(120)
            elapsed = time.perf_counter() - began
    tallies: dict[str, Tally] = {}
    for thread in threads:
        tally = tallies.setdefault(thread.kind, Tally())
        tally.latencies += thread.tally.latencies
        tally.statuses += thread.tally.statuses
        tally.unexpected += thread.tally.unexpected
    return SoakResult(elapsed, tallies, start, warm, end)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--without-limits",
        action="store_true",
        help="no rate limit and no failed-authentication limit, for comparison",
    )
    args = parser.parse_args()
    result = soak(args.seconds, args.clients, limits=not args.without_limits)
    print(result.report())
    if result.unexpected or result.memory_growth >= 0.10 or result.grew:
        sys.exit(1)


if __name__ == "__main__":
    main()
