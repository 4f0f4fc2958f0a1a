"""Reuse across requests: signed URLs per expiry step, prepared snapshots, cached answers,
and the latest version of a quiet local log; new commits are always seen."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.model import SharedTable
from deltaport.delta import DeltaTable, open_table
from deltaport.protocol.actions import QueryTableRequest
from deltaport.protocol.capabilities import Capabilities, parse_capabilities
from deltaport.server.files.signing import TableUrlSigner, url_expiry
from deltaport.server.tables.selection import HintSettings
from deltaport.server.tables.service import TableService
from deltaport.server.tables.snapshot_lines import ANSWER_KEYS_SEEN, AnswerCache
from deltaport.storage import parse_location
from deltaport.storage.local_urls import LocalUrlSigner

SECRET = b"s" * 32


def test_url_expiry_steps() -> None:
    hour = timedelta(hours=1)
    assert url_expiry(hour, now=1000.0) == 4620  # 4600 rounded up to the minute
    assert url_expiry(hour, now=1019.5) == 4620
    assert url_expiry(hour, now=1020.5) == 4680
    assert url_expiry(timedelta(seconds=10), now=1000.2) == 1011  # a one-second step
    for now in (0.0, 12.3, 59.99, 60.0, 1234.5):
        assert now + 3600 <= url_expiry(hour, now=now) <= now + 3600 + 60


def test_sign_many_verifies_and_fails_only_on_bad_rows() -> None:
    signer = LocalUrlSigner(SECRET, "http://h:1/files")
    paths = ["a b/c.parquet", "p=1/é.parquet", "plain.parquet"]
    urls = signer.sign_many("s.sc.t", paths, 2_000_000_000)
    for path, url in zip(paths, urls, strict=True):
        query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        assert signer.verify("s.sc.t", path, query, now=0) == path
        assert url == signer.sign("s.sc.t", path, 2_000_000_000)
    prepared = signer.prepare("s.sc.t", pa.array(["ok.parquet", "../escape", "fine.parquet"]))
    assert len(signer.sign_prepared(prepared, [0, 2], 2_000_000_000)) == 2
    with pytest.raises(ValueError, match=r"\.\."):
        signer.sign_prepared(prepared, [0, 1], 2_000_000_000)


def test_answer_cache_budget_and_identity(tmp_path: Path) -> None:
    write_deltalake(tmp_path / "t", pa.table({"x": [1]}))
    one, other = (
        DeltaTable(str(tmp_path / "t")).snapshot(),
        DeltaTable(str(tmp_path / "t")).snapshot(),
    )
    cache = AnswerCache(budget=10)
    cache.put("a", one, [b"12345"])
    cache.put("b", one, [b"123", b"45"])
    assert cache.get("a", one) == [b"12345"]
    assert cache.get("a", other) is None  # another replay of the version is not trusted
    cache.put("c", one, [b"xyz"])  # over budget: the least recently used ("b") goes
    assert cache.get("b", one) is None
    assert cache.get("a", one) == [b"12345"] and cache.get("c", one) == [b"xyz"]
    cache.put("big", one, [b"x" * 11])
    assert cache.get("big", one) is None


def test_answer_cache_admits_a_key_the_second_time() -> None:
    cache = AnswerCache()
    assert not cache.admits("a")
    assert cache.admits("a") and cache.admits("a")
    assert not cache.admits("b")
    for other in range(ANSWER_KEYS_SEEN):
        cache.admits(other)
    assert not cache.admits("a")  # forgotten after as many other keys


def test_an_answer_is_kept_from_its_second_request_on(tmp_path: Path) -> None:
    write_deltalake(tmp_path / "t", pa.table({"x": [1]}))
    table = SharedTable("s", "sc", "t", parse_location(str(tmp_path / "t")), {})
    service = _service()
    signed: list[int] = []
    signer = service._signer
    original = signer.json_url_pieces

    def counting(*args: Any) -> Any:
        signed.append(1)
        return original(*args)

    signer.json_url_pieces = counting  # type: ignore[method-assign]
    for _ in range(3):  # three requests in the same expiry step (a step is a minute here)
        signed.clear()
        bodies = [_body(service, table, QueryTableRequest()) for _ in range(4)]
        if len(_expirations(bodies[0]) | _expirations(bodies[-1])) == 1:
            break
    assert bodies[0] == bodies[1] == bodies[2] == bodies[3]
    assert len(signed) == 2  # the first two were signed; the third and fourth reused


def _service() -> TableService:
    signer = TableUrlSigner(LocalUrlSigner(SECRET, "http://127.0.0.1:1/files"))
    return TableService(signer, timedelta(hours=1), HintSettings())


def _body(
    service: TableService,
    table: SharedTable,
    request: QueryTableRequest,
    caps: Capabilities | None = None,
) -> list[dict[str, Any]]:
    answer = service.query(table, caps or Capabilities(), request)
    return [json.loads(line) for line in b"".join(answer.body).splitlines()]


def _expirations(lines: list[dict[str, Any]]) -> set[object]:
    return {line["file"]["expirationTimestamp"] for line in lines if "file" in line}


def _urls(lines: list[dict[str, Any]]) -> list[str]:
    files = [line["file"] for line in lines if "file" in line]
    return [f.get("url") or f["deltaSingleAction"]["add"]["path"] for f in files]


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_repeated_query_reuses_and_new_commits_show(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "t"
    for part in range(3):
        write_deltalake(
            root, pa.table({"x": [part], "p": [str(part)]}), mode="append", partition_by=["p"]
        )
    table = SharedTable("s", "sc", "t", parse_location(str(root)), {})
    service = _service()
    caps = parse_capabilities(f"responseformat={fmt}")
    for _ in range(3):  # two requests in the same expiry step (a step is a minute here)
        first = _body(service, table, QueryTableRequest(), caps)
        second = _body(service, table, QueryTableRequest(), caps)
        if _expirations(first) == _expirations(second):
            break
    assert first == second  # the same URLs
    assert len(_urls(first)) == 3
    write_deltalake(root, pa.table({"x": [9], "p": ["9"]}), mode="append", partition_by=["p"])
    third = _body(service, table, QueryTableRequest(), caps)
    assert len(_urls(third)) == 4
    assert set(_urls(first)) < set(_urls(third))
    filtered = _body(service, table, QueryTableRequest(predicateHints=["p = '9'"]), caps)
    assert len(_urls(filtered)) == 1 and "/p=9/" in _urls(filtered)[0]


def test_pages_with_cached_answers_cover_the_table(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for part in range(7):
        write_deltalake(root, pa.table({"x": [part]}), mode="append")
    table = SharedTable("s", "sc", "t", parse_location(str(root)), {})
    service = _service()
    full = _urls(_body(service, table, QueryTableRequest()))
    for _ in range(3):  # the second round is kept, the third served from cached answers
        pages: list[str] = []
        token = None
        while True:
            lines = _body(service, table, QueryTableRequest(maxFiles=3, pageToken=token))
            pages += _urls(lines)
            token = lines[-1]["endStreamAction"].get("nextPageToken")
            if not token:
                break
        assert pages == full


def test_latest_version_of_a_quiet_log_sees_new_commits(tmp_path: Path) -> None:
    root = tmp_path / "t"
    write_deltalake(root, pa.table({"x": [1]}))
    log = root / "_delta_log"
    past = time.time() - 60
    os.utime(log, (past, past))  # a log unchanged for a minute: its listing is reused
    table = open_table(str(root))
    assert table.latest_version() == 0
    assert table.latest_version() == 0
    write_deltalake(root, pa.table({"x": [2]}), mode="append")
    assert table.latest_version() == 1
    assert DeltaTable(str(root)).latest_version() == 1
