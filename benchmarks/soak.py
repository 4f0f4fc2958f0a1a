"""A soak under load: many clients of several recipients against one real server on loopback.

Builds a SQLite catalog (one share of a Delta table with history and change data, several
recipients) and starts ``python -m deltaport.server`` on it, then runs clients for
``--seconds``:

- **steady** clients (threads of this process), spread over four recipients, each looping
  over listings, metadata, a whole snapshot query, a paged query, changes and a file
  download. In the middle the token of recipient ``rotated`` is rotated (the old one ending
  at once) and the grant of recipient ``revoked`` is revoked: their clients count
  401/403/404 from then on as expected;
- a **greedy** recipient's clients, ``--greedy-clients`` of the ``--clients``, in a process
  of their own, doing only the heaviest requests (whole snapshot queries, changes from the
  first version, and the download of every file those answered) back to back with no
  pause; on a 429 they wait ``Retry-After``, as deltaport's client does;
- ``--guessers`` clients, in a process of their own, each from an address of its own,
  presenting a new wrong token on every request with no pause, whatever the answer.

The greedy recipient's rate is limited (``GREEDY_RATE``) and each guesser is refused after
``failedAuthLimit`` failures, so its 429s are expected. ``--without-limits`` runs the same
with no limit, ``--no-greedy`` without the greedy recipient and the guessers (the baseline
the steady clients' figures are compared with), and ``--runs N`` runs the three modes
alternately N times each and prints the medians of the steady clients' figures.

It prints requests per second, p50/p99 latency per kind of client, the unexpected answers,
and the server's resident memory (VmRSS), open file descriptors and threads at the start,
after the warm-up, at the end and at rest after the run (read from ``/proc/PID``, so Linux
only). Targets: no unexpected answer, memory growing under 10% after the warm-up, no
descriptor or thread growth. ``tests/test_soak.py`` runs a short version.

Run: ``uv run --frozen python benchmarks/soak.py`` (10 minutes, 50 clients by default).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import secrets
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
import pyarrow.parquet as pq
import yaml
from deltalake import write_deltalake

from deltaport.catalog.rows import RotationSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog

TABLE = "/shares/soak/schemas/s/tables/t"
VERSIONS, ROWS_PER_VERSION = 6, 100
"""The table: version v appends the ids v*100 to v*100+99 (one file each)."""
SNAPSHOT_SAMPLE = 10
"""A client reads the rows of every file of one whole snapshot query in this many."""
STEADY = ("r0", "r1", "r2", "r3")
GREEDY_RATE = 10  # requests per second allowed to recipient greedy
ADDRESSES = {
    name: f"198.51.100.{i}"
    for i, name in enumerate((*STEADY, "rotated", "revoked", "greedy"), start=1)
}
FD_SLACK = 4  # connections being opened or closed at the instant of a count
IDLE_WORKER_SECONDS = 11  # past anyio's 10 s, after which an idle worker thread is dropped
WITH_LIMITS, WITHOUT_LIMITS, NO_GREEDY = "limits", "no limits", "no greedy"


def guesser_address(index: int) -> str:
    return f"203.0.113.{index + 1}"


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


def watch(pid: int, until: float, samples: list[Resources]) -> None:
    """Sample the server's resources every second until ``until`` (a perf_counter time)."""
    while (left := until - time.perf_counter()) > 0:
        time.sleep(min(1.0, left))
        samples.append(resources(pid))


@dataclass
class Tally:
    """What the clients of one kind saw."""

    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)
    checked: Counter[str] = field(default_factory=Counter)
    """Answers of 200 whose body was compared with the expected rows or names, by kind."""

    def add(self, other: Tally) -> None:
        self.latencies += other.latencies
        self.statuses += other.statuses
        self.unexpected += other.unexpected
        self.checked += other.checked

    def to_json(self) -> str:
        statuses, checked = dict(self.statuses), dict(self.checked)
        return json.dumps([self.latencies, statuses, self.unexpected, checked])

    @classmethod
    def from_json(cls, text: str) -> Tally:
        latencies, statuses, unexpected, checked = json.loads(text)
        counts = Counter({int(s): c for s, c in statuses.items()})
        return cls(latencies, counts, unexpected, Counter(checked))

    def figures(self, seconds: float) -> tuple[float, float, float]:
        """Requests per second, p50 and p99 latency in milliseconds."""
        ms = sorted(x * 1000 for x in self.latencies)
        n = len(ms)
        return n / seconds, statistics.median(ms), ms[min(n - 1, int(n * 0.99))]


@dataclass
class SoakResult:
    mode: str
    seconds: float
    tallies: dict[str, Tally]
    start: Resources
    warm: Resources
    end: Resources
    rest: Resources
    """After the clients stopped, once the server's idle worker threads have left."""
    samples: list[Resources]
    """The server's resources every second from the warm-up to the end."""

    @property
    def unexpected(self) -> list[str]:
        return [u for t in self.tallies.values() for u in t.unexpected]

    @property
    def memory_growth(self) -> float:
        """Resident memory growth after the warm-up, as a fraction."""
        return self.end.rss_kib / self.warm.rss_kib - 1

    @property
    def grew(self) -> bool:
        """Whether descriptors or threads outlived the load. Under load the worker pool
        grows and shrinks with the requests in flight, so counts taken then move both
        ways with no leak; at rest, with the idle workers gone, a leaked thread or
        descriptor is still there: threads at rest above their peak early in the run, or
        descriptors at rest above their count after the warm-up, are growth."""
        early = self.samples[: max(1, len(self.samples) // 3)]
        return (
            self.rest.threads > max(s.threads for s in early)
            or self.rest.fds > self.warm.fds + FD_SLACK
        )

    @property
    def failed(self) -> bool:
        return bool(self.unexpected) or self.memory_growth >= 0.10 or self.grew

    def steady(self) -> tuple[float, float, float]:
        """The steady clients' requests per second, p50 and p99 in milliseconds."""
        return self.tallies["steady"].figures(self.seconds)

    def report(self) -> str:
        t = [s.threads for s in self.samples]
        lines = [f"soak ({self.mode}): {self.seconds:.0f} s"]
        for kind, tally in self.tallies.items():
            if not tally.latencies:
                continue
            rate, p50, p99 = tally.figures(self.seconds)
            statuses = ", ".join(f"{s}: {c}" for s, c in sorted(tally.statuses.items()))
            lines.append(
                f"  {kind:<8} {rate:8.1f} req/s  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  ({statuses})"
            )
            checked = ", ".join(f"{k}: {c}" for k, c in sorted(tally.checked.items()))
            lines.append(f"  {'':<8} bodies checked ({checked})")
        lines += [
            f"  unexpected answers: {len(self.unexpected)}",
            *(f"    {u}" for u in self.unexpected[:10]),
            f"  server at start:        {self.start}",
            f"  server after warm-up:   {self.warm}",
            f"  server at end:          {self.end}",
            f"  server at rest:         {self.rest}",
            f"  threads under load:     {min(t)}-{max(t)}",
            f"  memory growth after warm-up: {self.memory_growth:+.1%}",
        ]
        return "\n".join(lines)


def build(tmp: Path) -> tuple[str, dict[str, str]]:
    """A catalog with one share of a table of six versions; the recipients' tokens."""
    table = tmp / "table"
    for version in range(VERSIONS):
        first = version * ROWS_PER_VERSION
        rows = pa.table({"id": list(range(first, first + ROWS_PER_VERSION))})
        write_deltalake(
            str(table),
            rows,
            mode="append",
            configuration={"delta.enableChangeDataFeed": "true"},
        )
    url = f"sqlite:///{tmp}/catalog.db"
    store = SqlCatalog(url)
    store.create_share("soak")
    store.add_table("soak", "s", "t", TableSpec(str(table), history_shared=True))
    tokens = {}
    for name in (*STEADY, "rotated", "revoked", "greedy"):
        tokens[name] = store.create_recipient(name).token
        store.grant("soak", name)
    return url, tokens


def server_config(url: str, limits: bool = True, failed_auth_window: int = 60) -> dict[str, Any]:
    """The server's configuration; without ``limits``, no rate limit and a failed
    authentication limit never reached (to compare the steady clients' figures). Each
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


@dataclass
class Run:
    """What the clients of one process share."""

    base: str
    tokens: dict[str, str]
    stop: threading.Event = field(default_factory=threading.Event)
    changed_at: dict[str, float] = field(default_factory=dict)


class Client(threading.Thread):
    """One client (of ``kind``: steady, rotated, revoked, greedy, guesser), looping over
    its operations until ``stop`` is set."""

    def __init__(self, kind: str, recipient: str, run: Run, address: str) -> None:
        super().__init__(daemon=True)
        self.kind, self.recipient, self.run_ = kind, recipient, run
        self.tally = Tally()
        headers = {
            "Authorization": f"Bearer {run.tokens.get(recipient, '')}",
            "X-Forwarded-For": address,
        }
        self.http = httpx.Client(base_url=run.base, headers=headers, timeout=60)
        self.file_url: str | None = None
        self.snapshots = 0

    def run(self) -> None:
        operations = {
            "greedy": [self.greedy],
            "guesser": [self.guess],
        }.get(
            self.kind,
            [self.listings, self.metadata, self.snapshot, self.paged, self.changes, self.download],
        )
        try:
            for operation in itertools.cycle(operations):
                if self.run_.stop.is_set():
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
        if response.status_code == 429 and self.kind == "greedy":
            time.sleep(float(response.headers["retry-after"]))
        return response if response.status_code == 200 else None

    def expected(self, ended: float) -> set[int]:
        if self.kind == "greedy":
            return {200, 429}
        if self.kind == "guesser":
            return {401, 429}
        changed = self.run_.changed_at.get(self.recipient)
        if changed is not None and ended >= changed:
            # 200 until the server has read the change; an old token presented again and
            # again is then refused by the failed-authentication limit (429)
            return {200, 401, 403, 404, 429}
        return {200}

    def file_urls(self, response: httpx.Response | None) -> list[str]:
        lines = response.text.splitlines() if response else ()
        return [a["file"]["url"] for a in map(json.loads, lines) if "file" in a]

    def check(
        self,
        what: str,
        response: httpx.Response | None,
        got: Any,
        expected: Any,
        once_changed: Any = None,
    ) -> None:
        """An answer of 200 whose body is not the expected one (or, once the recipient's
        access changed, ``once_changed``) is unexpected too."""
        if response is None:
            return
        self.tally.checked[what] += 1
        changed = self.recipient in self.run_.changed_at
        if got != expected and not (changed and once_changed is not None and got == once_changed):
            self.tally.unexpected.append(f"{self.kind} {what}: {got!r:.200} != {expected!r:.200}")

    def file_ids(self, url: str) -> list[int] | None:
        """The ids in the file at ``url`` (None when it was not answered 200)."""
        response = self.call("GET", url)
        if response is None:
            return None
        ids = pq.read_table(pa.BufferReader(response.content)).column("id").to_pylist()
        first = ids[0] if ids else -1
        block = list(range(first, first + ROWS_PER_VERSION))
        self.check("file rows", response, ids, block if first % ROWS_PER_VERSION == 0 else None)
        return list(ids)

    def listings(self) -> None:
        shares = self.call("GET", "/shares")
        names = shares and [i["name"] for i in shares.json()["items"]]
        self.check("shares", shares, names, ["soak"], once_changed=[])  # revoked: none
        tables = self.call("GET", "/shares/soak/all-tables")
        names = tables and [(t["share"], t["schema"], t["name"]) for t in tables.json()["items"]]
        self.check("tables", tables, names, [("soak", "s", "t")])

    def metadata(self) -> None:
        version = self.call("GET", TABLE + "/version")
        last = str(VERSIONS - 1)
        self.check("version", version, version and version.headers["delta-table-version"], last)
        metadata = self.call("GET", TABLE + "/metadata")
        lines = [json.loads(line) for line in metadata.text.splitlines()] if metadata else []
        fields = [
            (f["name"], f["type"])
            for line in lines
            if "metaData" in line
            for f in json.loads(line["metaData"]["schemaString"])["fields"]
        ]
        self.check("metadata", metadata, fields, [("id", "long")])

    def snapshot(self) -> None:
        response = self.call("POST", TABLE + "/query", json={})
        urls = self.file_urls(response)
        self.file_url = urls[-1] if urls else self.file_url
        self.snapshots += 1
        if response is not None and self.snapshots % SNAPSHOT_SAMPLE == 1:
            ids = [self.file_ids(url) for url in urls]
            if None not in ids:  # every file answered (not refused after a revocation)
                rows = sorted(i for file in ids for i in file or ())
                self.check(
                    "snapshot rows", response, rows, list(range(VERSIONS * ROWS_PER_VERSION))
                )

    def paged(self) -> None:
        body: dict[str, Any] = {"maxFiles": 2}
        files = 0
        for _ in range(10):
            response = self.call("POST", TABLE + "/query", json=body)
            token = None
            for line in response.text.splitlines() if response else ():
                token = json.loads(line).get("endStreamAction", {}).get("nextPageToken", token)
            files += len(self.file_urls(response))
            if not token:
                self.check("paged files", response, files, VERSIONS)
                return
            body = {"maxFiles": 2, "pageToken": token}

    def changes(self) -> None:
        response = self.call("GET", TABLE + "/changes", params={"startingVersion": 0})
        lines = [json.loads(line) for line in response.text.splitlines()] if response else []
        versions = sorted(line["add"]["version"] for line in lines if "add" in line)
        self.check("changes", response, versions, list(range(VERSIONS)))

    def download(self) -> None:
        if self.file_url is not None:
            self.file_ids(self.file_url)

    def greedy(self) -> None:
        """The heaviest requests: a whole snapshot and all changes, every file of both."""
        urls = self.file_urls(self.call("POST", TABLE + "/query", json={}))
        urls += self.file_urls(self.call("GET", TABLE + "/changes", params={"startingVersion": 0}))
        for index, url in enumerate(urls):  # one file's rows read a round: it stays greedy
            if index == 0:
                self.file_ids(url)
            else:
                self.call("GET", url)

    def guess(self) -> None:
        self.http.headers["Authorization"] = f"Bearer {secrets.token_urlsafe(30)}"
        self.call("GET", "/shares")


def swarm(kind: str, base: str, token: str, clients: int) -> Tally:
    """``clients`` clients of ``kind`` (greedy or guesser) from when this process says it is
    ready until its standard input ends: what they saw."""
    run = Run(base, {"greedy": token})
    threads = [
        Client(kind, kind, run, ADDRESSES["greedy"] if kind == "greedy" else guesser_address(i))
        for i in range(clients)
    ]
    print("ready", flush=True)
    for thread in threads:
        thread.start()
    sys.stdin.read()
    run.stop.set()
    tally = Tally()
    for thread in threads:
        thread.join(120)
        tally.add(thread.tally)
    return tally


class Swarm:
    """:func:`swarm` in a process of its own, at the lowest priority (``nice`` 19): its
    clients' own work, done on the partner's or the attacker's machines in production, takes
    only the CPU the server and the steady clients leave; the work it makes the server do
    is the server's, at the same priority as the steady clients'."""

    def __init__(self, kind: str, base: str, token: str, clients: int) -> None:
        self.kind = kind
        command = ["nice", "-n", "19", sys.executable, __file__, "--swarm", kind]
        command += ["--base", base, "--token", token, "--clients", str(clients)]
        pipe = subprocess.PIPE
        self.process = subprocess.Popen(command, stdin=pipe, stdout=pipe) if clients else None

    def ready(self) -> None:
        if self.process is not None:
            assert self.process.stdout is not None
            assert self.process.stdout.readline() == b"ready\n"

    def stop(self) -> dict[str, Tally]:
        """Its clients stopped: what they saw."""
        if self.process is None:
            return {}
        out, _ = self.process.communicate(timeout=180)
        return {self.kind: Tally.from_json(out.decode())}


def soak(
    seconds: float,
    clients: int,
    mode: str = WITH_LIMITS,
    greedy_share: float = 0.4,
    guessers: int = 4,
    failed_auth_window: int = 60,
) -> SoakResult:
    """One run: ``clients`` clients of which ``greedy_share`` the greedy recipient's (none
    in mode ``NO_GREEDY``, the others the same), and ``guessers`` more."""
    greedy = round(clients * greedy_share)
    others = max(3, clients - greedy)
    if mode == NO_GREEDY:
        greedy, guessers = 0, 0
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        url, tokens = build(tmp)
        config = server_config(url, mode != WITHOUT_LIMITS, failed_auth_window)
        with serving(config, tmp) as (pid, base):
            start = resources(pid)
            run = Run(base, tokens)
            kinds = [("rotated", "rotated"), ("revoked", "revoked")]
            kinds += [("steady", STEADY[i % len(STEADY)]) for i in range(others - 2)]
            threads = [Client(k, r, run, ADDRESSES[r]) for k, r in kinds]
            swarms = [
                Swarm("greedy", base, tokens["greedy"], greedy),
                Swarm("guesser", base, "", guessers),
            ]
            for group in swarms:
                group.ready()
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            warm_up = min(60.0, seconds / 5)
            time.sleep(warm_up)
            warm = resources(pid)
            samples = [warm]
            watch(pid, began + seconds / 2, samples)
            store = SqlCatalog(url)
            run.changed_at["rotated"] = time.perf_counter()
            store.rotate("rotated", RotationSpec(timedelta(0)))
            run.changed_at["revoked"] = time.perf_counter()
            store.revoke_grant("soak", "revoked")
            watch(pid, began + seconds, samples)
            end = resources(pid)
            samples.append(end)
            run.stop.set()
            elapsed = time.perf_counter() - began
            tallies = {k: t for group in swarms for k, t in group.stop().items()}
            for thread in threads:
                thread.join(120)
            rest = at_rest(pid, base, tokens[STEADY[0]])
    for thread in threads:
        tallies.setdefault(thread.kind, Tally()).add(thread.tally)
    return SoakResult(mode, elapsed, tallies, start, warm, end, rest, samples)


def at_rest(pid: int, base: str, token: str) -> Resources:
    """The server's resources once idle: anyio drops a worker thread idle for 10 s only
    when the next call takes a worker, so wait past that and make one request that takes
    one (a table's metadata; a listing of shares is answered on the event loop)."""
    time.sleep(IDLE_WORKER_SECONDS)
    httpx.get(base + TABLE + "/metadata", headers={"Authorization": f"Bearer {token}"}, timeout=30)
    time.sleep(0.5)
    return resources(pid)


def compare(results: list[SoakResult]) -> str:
    """The medians of the steady clients' figures per mode, and their ratios to the
    figures with no greedy recipient."""
    medians = {}
    for mode in (NO_GREEDY, WITH_LIMITS, WITHOUT_LIMITS):
        figures = [r.steady() for r in results if r.mode == mode]
        if figures:
            medians[mode] = tuple(statistics.median(f[i] for f in figures) for i in range(3))
    lines = [f"steady clients, medians of {len(results) // len(medians)} runs per mode:"]
    base = medians.get(NO_GREEDY)
    for mode, (rate, p50, p99) in medians.items():
        line = f"  {mode:<10} {rate:7.1f} req/s  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms"
        if base and mode != NO_GREEDY:
            line += (
                f"   vs no greedy: req/s {rate / base[0]:.2f}x, p50 {p50 / base[1]:.2f}x, "
                f"p99 {p99 / base[2]:.2f}x"
            )
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--greedy-clients",
        type=float,
        default=0.4,
        help="the share of --clients that are the greedy recipient's (default 0.4)",
    )
    parser.add_argument("--guessers", type=int, default=4, help="token guessers (default 4)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--without-limits",
        action="store_true",
        help="no rate limit and no failed-authentication limit, for comparison",
    )
    modes.add_argument(
        "--no-greedy",
        action="store_true",
        help="no greedy recipient and no guessers: the steady clients' baseline",
    )
    modes.add_argument(
        "--runs",
        type=int,
        help="run the three modes alternately this many times each; print the medians",
    )
    parser.add_argument("--swarm", choices=["greedy", "guesser"], help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.swarm:
        print(swarm(args.swarm, args.base, args.token, args.clients).to_json())
        return
    if args.runs:
        sequence = [NO_GREEDY, WITH_LIMITS, WITHOUT_LIMITS] * args.runs
    else:
        mode = NO_GREEDY if args.no_greedy else WITH_LIMITS
        sequence = [WITHOUT_LIMITS if args.without_limits else mode]
    results = []
    for mode in sequence:
        result = soak(args.seconds, args.clients, mode, args.greedy_clients, args.guessers)
        print(result.report(), flush=True)
        results.append(result)
    if args.runs:
        print(compare(results))
    if any(r.failed for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
