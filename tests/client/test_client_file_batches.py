"""Files fetched in batches from a deltaport server, and the fall-back to one request a
file for whatever a batch does not deliver."""

from __future__ import annotations

import threading

import pytest
from compare import assert_same_rows, direct_read

from deltaport.client import FileReader, SharingClient
from deltaport.client.base.models import RemoteFile
from deltaport.client.files import file_batches
from deltaport.client.files.downloads import downloads_for
from deltaport.client.files.file_batches import (
    BATCH_FILE_MAX_BYTES,
    BATCH_MAX_BYTES,
    BATCH_MAX_FILES,
    batched_files,
    fetch_batch,
)

BATCH_URL = "http://server/files"


def remote(name: str, size: int = 100, base: str = BATCH_URL) -> RemoteFile:
    return RemoteFile(id=name, url=f"{base}/t/{name}?sig=x", size=size)


def names(groups: list[tuple[RemoteFile, ...]]) -> list[list[str]]:
    return [[f.id for f in group] for group in groups]


def test_runs_of_small_files_below_the_endpoint_are_grouped() -> None:
    files = [
        remote("a"),
        remote("b"),
        remote("big", BATCH_FILE_MAX_BYTES + 1),
        remote("c"),
        remote("elsewhere", base="http://other/files"),
        remote("d"),
        remote("e"),
    ]
    assert names(batched_files(files, BATCH_URL)) == [
        ["a", "b"],
        ["big"],
        ["c"],
        ["elsewhere"],
        ["d", "e"],
    ]
    assert names(batched_files(files, None)) == [[f.id] for f in files]
    assert names(batched_files(files, BATCH_URL + "/")) == names(batched_files(files, BATCH_URL))
    # a URL merely starting with the endpoint's text is not below it
    assert names(batched_files([remote("x", base=BATCH_URL + "x")] * 2, BATCH_URL)) == [
        ["x"],
        ["x"],
    ]


def test_groups_are_cut_by_count_and_bytes() -> None:
    many = [remote(str(i)) for i in range(BATCH_MAX_FILES * 2 + 1)]
    assert [len(g) for g in batched_files(many, BATCH_URL)] == [BATCH_MAX_FILES, BATCH_MAX_FILES, 1]
    size = BATCH_MAX_BYTES // 3 + 1
    heavy = [remote(str(i), size) for i in range(5)]
    assert [len(g) for g in batched_files(heavy, BATCH_URL)] == [2, 2, 1]


def test_fetch_batch_delivers_files_and_marks_refused_ones(profile) -> None:
    with SharingClient(profile) as client:
        plan = client.table("share1.default.small_files").snapshot().plan()
        assert plan.file_batch_url is not None
        downloads = downloads_for(client.rest.http)
        urls = [f.url for f in plan.files[:5]]
        tampered = urls[1].replace("sig=", "sig=0")
        got = fetch_batch(downloads, plan.file_batch_url, [urls[0], tampered, *urls[2:]])
        assert got[1] is None
        for url, content in zip(urls, got, strict=True):
            if content is not None:
                assert content == client.rest.http.get(url).content
        # an endpoint that is not one: nothing delivered, no error
        assert fetch_batch(downloads, plan.file_batch_url + "/nowhere", urls) == [None] * 5
        assert fetch_batch(downloads, "http://127.0.0.1:9/files", urls) == [None] * 5


def test_small_files_come_in_batches(profile, client_tables, monkeypatch) -> None:
    lock = threading.Lock()
    calls = {"batch": 0, "single": 0}

    def counting(name, inner):
        def wrapper(*args, **kwargs):
            with lock:
                calls[name] += 1
            return inner(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(file_batches, "fetch_batch", counting("batch", file_batches.fetch_batch))
    monkeypatch.setattr(FileReader, "fetch", counting("single", FileReader.fetch))
    with SharingClient(profile) as client:
        scan = client.table("share1.default.small_files").snapshot()
        files = len(scan.plan().files)
        got = scan.to_arrow()
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    assert calls["single"] == 0
    assert calls["batch"] == -(-files // BATCH_MAX_FILES)


@pytest.mark.parametrize(
    ("table", "fmt"),
    [("small_files", False), ("small_files", True), ("dv", True), ("parted", False)],
)
def test_files_a_batch_misses_are_read_on_their_own(
    profile, client_tables, monkeypatch, table, fmt
) -> None:
    real = file_batches.fetch_batch

    def every_other_missing(downloads, url, urls):
        got = real(downloads, url, urls)
        return [None if i % 2 else content for i, content in enumerate(got)]

    monkeypatch.setattr(file_batches, "fetch_batch", every_other_missing)
    with SharingClient(profile) as client:
        got = client.table(f"share1.default.{table}").snapshot(use_delta_format=fmt).to_arrow()
    assert_same_rows(got, direct_read(client_tables[table]))
