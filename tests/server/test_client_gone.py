"""Work for a client that has left stops: the preparation of its answer at the next check,
and the stream of its answer at once, its iterator closed (what it holds given back)."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from deltaport.config.loading import parse_config
from deltaport.server import create_app
from deltaport.server.answers.client_gone import (
    ClientGone,
    check_connected,
    open_bodies,
    while_connected,
)
from emulators import serve_asgi
from history_tables import write_log_only_table
from sharing_server import TOKEN
from waiting import wait_until


def test_preparation_stops_when_the_client_leaves() -> None:
    outcome: list[str] = []

    def slow_work() -> str:
        for _ in range(3000):  # 30 s unless told to stop
            check_connected()
            time.sleep(0.01)
        return "finished"

    async def endpoint(request: Request) -> Response:
        try:
            outcome.append(await while_connected(request, slow_work))
        except ClientGone:
            outcome.append("stopped")
        return Response("done")

    app = Starlette(routes=[Route("/work", endpoint)])
    with serve_asgi(app) as base:
        started = time.monotonic()
        with contextlib.suppress(httpx.ReadTimeout):
            httpx.get(f"{base}/work", timeout=0.5)
        wait_until(lambda: outcome, 5, "the work to stop after the client left", 0.05)
        assert outcome == ["stopped"]
        assert time.monotonic() - started < 5


def test_a_finished_preparation_returns_its_result() -> None:
    async def endpoint(request: Request) -> Response:
        return Response(await while_connected(request, lambda: "ready"))

    with serve_asgi(Starlette(routes=[Route("/work", endpoint)])) as base:
        assert httpx.get(f"{base}/work").text == "ready"


def test_an_abandoned_stream_is_closed_at_once(tmp_path: Path) -> None:
    table = write_log_only_table(tmp_path / "big", 20_000, outside=None, cdf=False)
    raw = {
        "authorization": {"bearerToken": TOKEN},
        "shares": [
            {
                "name": "s",
                "schemas": [{"name": "d", "tables": [{"name": "t", "location": str(table)}]}],
            }
        ],
    }
    app = create_app(parse_config(raw, {}))
    prefetching = {
        t.ident for t in threading.enumerate() if t.name.startswith("deltaport-prefetch")
    }
    with serve_asgi(app) as base:
        url = f"{base}/delta-sharing/shares/s/schemas/d/tables/t/query"
        for _ in range(3):
            with (
                httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}) as client,
                client.stream("POST", url, json={}) as response,
            ):
                assert response.status_code == 200
                next(response.iter_bytes())
                assert open_bodies() == 1
            # the client has gone with most of the answer unread
            wait_until(lambda: open_bodies() == 0, 5, "the stream to be closed", 0.05)
        wait_until(
            lambda: (
                not {
                    t.ident
                    for t in threading.enumerate()
                    if t.name.startswith("deltaport-prefetch") and t.ident not in prefetching
                }
            ),
            5,
            "the threads preparing the abandoned answers to end",
            0.05,
        )
