"""Sharing server speed, measured against baselines in the same run.

1. Requests/s on ``GET /shares`` and ``GET .../version`` with 50 concurrent keep-alive
   clients, against a bare hello-world Starlette app on the same uvicorn (target: at
   least half of its rate). Medians of ``RATE_ROUNDS`` windows, the three measured in
   turn: measured one after the other once, the hello-world rate alone moved between
   8,300 and 13,200 requests/s from run to run.
2. A full ``POST .../query`` of a 100,000-file table (log built as in
   ``bench_snapshot.py``), timed to the last byte of the response, against
   ``deltalake.DeltaTable(path).get_add_actions()`` on a new ``DeltaTable`` object each
   time (what a reader of the table does). Cold: the first query on a fresh server
   (target: within 1.5x of the peer). Warm: the same query repeated, same table version
   (target: faster than the peer). Medians of ``ROUNDS`` rounds, a fresh server per round,
   the peer measured right before ours so both see the same machine load (with five rounds
   the ratio of the two medians moved between 1.22x and 1.58x for the same code; a median's
   noise falls with the square root of the rounds). For reference
   also ``get_add_actions()`` on an already loaded ``DeltaTable`` (an in-memory copy).

Run: ``uv run python benchmarks/bench_server.py`` (about two minutes).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path
from typing import TypeVar

import deltalake
import httpx
import pyarrow as pa
import yaml
from bench_snapshot import N_FILES
from checkpointed_log import CHECKPOINT_VERSION, write_checkpoint, write_commit

T = TypeVar("T")
CONCURRENCY = 50
ROUNDS = 9
WARM_REPEATS = 3
RATE_ROUNDS = 3
LOAD_SECONDS = 3.0
TOKEN = "bench-token"
TABLE = "/delta-sharing/shares/bench/schemas/default/tables/big"

HELLO_APP = """
import sys
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

async def hello(request):
    return PlainTextResponse("hello, world")

app = Starlette(routes=[Route("/", hello)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(command: list[str], port: int, probe: str) -> Iterator[None]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}{probe}", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"server {command} did not start") from None
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(10)


def deltaport_serving(config: Path, port: int) -> AbstractContextManager[None]:
    """A fresh ``deltaport.server`` process on ``config``, on 127.0.0.1:``port``."""
    command = [sys.executable, "-m", "deltaport.server", "--config", str(config)]
    return serving(
        [*command, "--host", "127.0.0.1", "--port", str(port)], port, "/delta-sharing/openapi.json"
    )


async def _read_answer(reader: asyncio.StreamReader) -> None:
    """One answer: a body of ``Content-Length`` bytes, or chunked (streamed answers)."""
    head = await reader.readuntil(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                await reader.readexactly(int(line[15:]))
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"unexpected answer: {head[:60]!r}")


async def _client(port: int, request: bytes, stop_at: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done = 0
    try:
        while time.perf_counter() < stop_at:
            writer.write(request)
            await _read_answer(reader)
            done += 1
    finally:
        writer.close()
        counts.append(done)


def requests_per_second(
    port: int, path: str, token: str | None = None, body: bytes | None = None
) -> float:
    """Requests per second of ``GET path`` (``POST`` with a JSON ``body``) on
    :data:`CONCURRENCY` keep-alive connections over :data:`LOAD_SECONDS`."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    method, extra = "GET", ""
    if body is not None:
        method = "POST"
        extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}{extra}\r\n"
    request = head.encode() + (body or b"")

    async def run() -> float:
        warm: list[int] = []
        await asyncio.gather(
            *(_client(port, request, time.perf_counter() + 0.5, warm) for _ in range(CONCURRENCY))
        )
        counts: list[int] = []
        start = time.perf_counter()
        stop_at = start + LOAD_SECONDS
        await asyncio.gather(*(_client(port, request, stop_at, counts) for _ in range(CONCURRENCY)))
        return sum(counts) / (time.perf_counter() - start)

    return asyncio.run(run())


def build_big_table(root: Path) -> None:
    log = root / "_delta_log"
    write_checkpoint(log, N_FILES, "bench")
    for version in range(CHECKPOINT_VERSION + 1, CHECKPOINT_VERSION + 4):
        write_commit(log, version, N_FILES)


def write_config(tmp: Path, big: Path, small: Path) -> Path:
    config = {
        "version": 1,
        "authorization": {"bearerToken": TOKEN},
        "accessLog": False,
        "shares": [
            {
                "name": "bench",
                "schemas": [
                    {
                        "name": "default",
                        "tables": [
                            {"name": "big", "location": str(big)},
                            {"name": "small", "location": str(small)},
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def timed_query(client: httpx.Client, port: int) -> tuple[float, int]:
    """Seconds to the last byte of a full query, and the lines received. ``client`` is
    made before timing: creating an ``httpx.Client`` loads a TLS context (about 45 ms)."""
    start = time.perf_counter()
    lines = 0
    with client.stream(
        "POST",
        f"http://127.0.0.1:{port}{TABLE}/query",
        json={},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=300,
    ) as response:
        response.raise_for_status()
        for chunk in response.iter_raw():
            lines += chunk.count(b"\n")
    return time.perf_counter() - start, lines


def peer_add_actions(table: deltalake.DeltaTable) -> int:
    return int(pa.table(table.get_add_actions()).num_rows)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        big = tmp / "big"
        small = tmp / "small"
        build_big_table(big)
        deltalake.write_deltalake(str(small), pa.table({"id": [1, 2, 3]}))
        config = write_config(tmp, big, small)
        expected_files = N_FILES + 3 * 10 - 3

        colds, warms, peers, peer_loaded = [], [], [], []
        for _ in range(ROUNDS):
            port = free_port()
            with (
                deltaport_serving(config, port),
                httpx.Client() as client,
            ):
                peer_cold, peer_files = timed(
                    lambda: peer_add_actions(deltalake.DeltaTable(str(big)))
                )
                cold, lines = timed_query(client, port)
                peers.append(peer_cold)
                colds.append(cold)
                loaded = deltalake.DeltaTable(str(big))
                for _ in range(WARM_REPEATS):
                    peers.append(timed(lambda: peer_add_actions(deltalake.DeltaTable(str(big))))[0])
                    peer_loaded.append(timed(partial(peer_add_actions, loaded))[0])
                    warms.append(timed_query(client, port)[0])

        port, hello_port = free_port(), free_port()
        version_path = "/delta-sharing/shares/bench/schemas/default/tables/small/version"
        rates: dict[str, list[float]] = {"hello": [], "shares": [], "version": []}
        with (
            deltaport_serving(config, port),
            serving([sys.executable, "-c", HELLO_APP, str(hello_port)], hello_port, "/"),
        ):
            for _ in range(RATE_ROUNDS):  # in turn, so both servers see the same machine
                rates["hello"].append(requests_per_second(hello_port, "/"))
                rates["shares"].append(requests_per_second(port, "/delta-sharing/shares", TOKEN))
                rates["version"].append(requests_per_second(port, version_path, TOKEN))
        hello_rps, shares_rps, version_rps = (
            statistics.median(rates[name]) for name in ("hello", "shares", "version")
        )

    assert peer_files == expected_files, (peer_files, expected_files)
    assert lines == expected_files + 2, (lines, expected_files)
    cold, warm = statistics.median(colds), statistics.median(warms)
    peer, loaded_peer = statistics.median(peers), statistics.median(peer_loaded)
    results = {
        "hello_world_rps": round(hello_rps),
        "shares_rps": round(shares_rps),
        "shares_vs_hello": round(shares_rps / hello_rps, 2),
        "version_rps": round(version_rps),
        "version_vs_hello": round(version_rps / hello_rps, 2),
        "files": expected_files,
        "deltalake_get_add_actions_s": round(peer, 3),
        "query_cold_s": round(cold, 3),
        "query_cold_vs_deltalake": round(cold / peer, 2),
        "query_warm_s": round(warm, 3),
        "query_warm_vs_deltalake": round(warm / peer, 2),
        "deltalake_loaded_table_get_add_actions_s": round(loaded_peer, 4),
        "cpu_count": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(results, indent=2))
    print(
        f"/shares at {results['shares_vs_hello']}x and /version at {results['version_vs_hello']}x "
        f"the hello-world rate (target >= 0.5); cold /query of {expected_files} files at "
        f"{results['query_cold_vs_deltalake']}x deltalake get_add_actions (target <= 1.5), "
        f"warm at {results['query_warm_vs_deltalake']}x (target < 1)"
    )


if __name__ == "__main__":
    main()
