"""Asynchronous queries on an in-process server: a catalog with two recipients, a table of
many files, a gate that holds preparations back and a clock the test moves."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from corpus import corpus_table
from deltaport.cli import main as cli
from deltaport.config.loading import parse_config
from deltaport.protocol.profile import BearerTokenProfile
from deltaport.server import create_app
from deltaport.server.tables.async_queries import AsyncQueries, AsyncQuerySettings
from emulators import serve_asgi
from sharing_server import free_port, write_many_files_table
from waiting import wait_until

TABLE = "/shares/s/schemas/sc/tables/many"
ASYNC = {"delta-sharing-capabilities": "asyncquery=true"}
FILES = 2500


@dataclass
class Lake:
    catalog: str
    tokens: dict[str, str]
    table: Path


def make_lake(tmp: Path) -> Lake:
    """A catalog sharing a table of :data:`FILES` files with recipients ``alice`` and
    ``bob``."""
    url = f"sqlite:///{tmp}/catalog.db"
    table = write_many_files_table(tmp / "many", FILES)
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    assert cli(["table", "add", "s.sc.many", str(table), "--catalog", url]) == 0
    broken = write_many_files_table(tmp / "broken", 3)
    assert cli(["table", "add", "s.sc.broken", str(broken), "--catalog", url]) == 0
    break_table(broken)
    basic = str(corpus_table("dat__basic_append").path)
    assert cli(["table", "add", "s.sc.basic", basic, "--catalog", url]) == 0
    tokens = {}
    for name in ("alice", "bob"):
        profile = tmp / f"{name}.share"
        created = ["recipient", "create", name, "--endpoint", "http://unused"]
        assert cli([*created, "-o", str(profile), "--catalog", url]) == 0
        assert cli(["share", "grant", "s", "--to", name, "--catalog", url]) == 0
        tokens[name] = json.loads(profile.read_text())["bearerToken"]
    return Lake(url, tokens, table)


def break_table(root: Path) -> None:
    """Its one commit gets a line that is not JSON: its latest version is found, its
    snapshot cannot be read."""
    commit = root / "_delta_log" / f"{0:020d}.json"
    commit.write_text(commit.read_text() + "this is not json\n")


@dataclass
class Clock:
    now: float = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Gate:
    """Preparations wait here until the test opens it; ``entered`` counts them."""

    opened: threading.Event = field(default_factory=threading.Event)
    entered: int = 0

    def __call__(self) -> None:
        self.entered += 1
        assert self.opened.wait(60), "the test never opened the gate"


@dataclass
class Running:
    base: str
    queries: AsyncQueries
    tokens: dict[str, str]

    def profile(self, who: str = "alice") -> BearerTokenProfile:
        return BearerTokenProfile(self.base + "/delta-sharing", self.tokens[who])

    def client(self, who: str = "alice") -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"}
        return httpx.Client(base_url=self.base + "/delta-sharing", headers=headers, timeout=60)


@contextmanager
def running(
    lake: Lake,
    *,
    key: str = "async-key",
    gate: Gate | None = None,
    clock: Clock | None = None,
    sweep_every: float | None = None,
    **settings: Any,
) -> Iterator[Running]:
    port = free_port()
    raw = {"catalog": lake.catalog, "signingKey": key, "host": "127.0.0.1", "port": port}
    config = parse_config(raw, {})
    queries = AsyncQueries(
        AsyncQuerySettings(**settings),
        clock=clock or Clock(),
        before_prepare=gate,
        sweep_every=sweep_every,
    )
    try:
        with serve_asgi(create_app(config, queries=queries), port=port) as base:
            yield Running(base, queries, lake.tokens)
    finally:
        if gate is not None:
            gate.opened.set()
        queries.close()


def lines(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def submit(client: httpx.Client, table: str = TABLE, **body: Any) -> httpx.Response:
    return client.post(table + "/query", json=body, headers=ASYNC)


def query_id(response: httpx.Response) -> str:
    assert response.status_code == 200, response.text
    (line,) = lines(response)
    status = line["queryStatus"]
    assert status["status"] == "pending"
    return str(status["queryId"])


def poll(client: httpx.Client, qid: str, table: str = TABLE, **body: Any) -> httpx.Response:
    return client.post(f"{table}/queries/{qid}", json=body)


def poll_until_ready(
    client: httpx.Client, qid: str, table: str = TABLE, **body: Any
) -> httpx.Response:
    """Poll until the answer is no longer a status line."""

    def ready() -> httpx.Response | None:
        response = poll(client, qid, table, **body)
        assert response.status_code == 200, response.text
        first = lines(response)[0]
        if "queryStatus" not in first:
            return response
        assert first["queryStatus"]["status"] == "pending", first
        return None

    return wait_until(ready, 100, "the query to get ready", 0.01)


def file_ids(response: httpx.Response) -> list[str]:
    return [line["file"]["id"] for line in lines(response) if "file" in line]


def end_action(response: httpx.Response) -> dict[str, Any]:
    last = lines(response)[-1]
    return dict(last.get("endStreamAction") or {})
