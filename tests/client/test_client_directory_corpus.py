"""Every readable corpus table (as tests/client/test_client_corpus.py picks them) copied
into a bucket of the S3 emulator (moto), served with ``accessModes: [url, dir]`` by a real
deltaport server vending STS credentials, and read by the client in both modes: ``dir``
gives the rows ``url`` gives. Only the pinned unreadable tables (the same as
tests/read/test_read_corpus_summary.py) may fail, and each with its known reason in each
mode; any other failure in either mode fails the test."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import obstore
import pyarrow as pa
import pytest
from compare import assert_same_rows
from obstore.store import S3Store
from test_client_corpus import TABLES

import deltaport.client as dc
from dir_tables import dir_server_config, write_dir_profile
from emulators import S3Emulator
from sharing_server import start_server, stop_server

BUCKET = "dircorpusall"
ONCE = dc.RetryPolicy(max_attempts=1)

_SHREDDED = re.escape("requires unsupported reader feature: variantShredding-preview")
_MISSING_DV = (
    r"the file is gone \(the table was vacuumed or rewritten",
    r"not found: s3://dircorpusall/t\d+/deletion_vector_",
)
"""Spark's test prefix 'test%dv%prefix-' is not in the 'u' descriptor: no DV file is found."""
UNREADABLE: dict[str, tuple[str, str]] = {
    "kdefaults__spark-shredded-variant-preview-delta": (_SHREDDED, _SHREDDED),
    "spark__variant-stats-nested-no-checkpoint": (_SHREDDED, _SHREDDED),
    "spark__variant-stats-no-checkpoint": (_SHREDDED, _SHREDDED),
    "spark__variant-stats-state-reconstruction": (_SHREDDED, _SHREDDED),
    "spark__variant-stats-with-struct-no-checkpoint": (_SHREDDED, _SHREDDED),
    "krs__table-with-geo": (re.escape("unsupported reader feature: geospatial"),) * 2,
    "spark__table-with-dv-small": _MISSING_DV,
    "spark__table-with-dv-large": _MISSING_DV,
    "spark__partitioned-table-with-dv-large": _MISSING_DV,
    # the absolute ('p') DV path is a template: the server cannot sign it mid-stream (url),
    # the client finds no such file (dir)
    "spark__table-with-dv-special-char": (
        re.escape("the server failed while sending the response"),
        re.escape("not found: file://{{FOLDER_WITH_SPECIAL_CHAR}}/test%dv%prefix-deletion_vector_"),
    ),
}
"""Table name -> the reason (a regular expression) url and dir mode must fail with."""


def _upload(store: S3Store, source: Path, prefix: str) -> None:
    files = [p for p in sorted(source.rglob("*")) if p.is_file()]

    def put(path: Path) -> None:
        obstore.put(store, f"{prefix}/{path.relative_to(source).as_posix()}", path.read_bytes())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, files))


@pytest.fixture(scope="module")
def profile(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    s3_emulator.create_bucket(BUCKET)
    store = S3Store(BUCKET, config=s3_emulator.options)  # type: ignore[arg-type]
    for i, table in enumerate(TABLES):
        _upload(store, table.path, f"t{i}")
    tables = [
        {
            "name": f"t{i}",
            "location": f"s3://{BUCKET}/t{i}",
            "accessModes": ["url", "dir"],
            "historyShared": True,
        }
        for i in range(len(TABLES))
    ]
    config = dir_server_config(s3_emulator, BUCKET, tables)
    tmp = tmp_path_factory.mktemp("dir-corpus")
    running = start_server(config, tmp)
    try:
        yield write_dir_profile(tmp / "p.share", running)
    finally:
        stop_server(running)


def _read(profile: Path, index: int, mode: dc.AccessMode) -> pa.Table | Exception:
    try:
        with dc.SharingClient(profile, access_mode=mode, retry=ONCE) as client:
            return client.table(f"s.sc.t{index}").snapshot().to_arrow()
    except (dc.SharingError, OSError) as exc:  # judged against UNREADABLE by the caller
        return exc


@pytest.mark.parametrize("index", range(len(TABLES)), ids=[t.name for t in TABLES])
def test_dir_mode_reads_what_url_mode_reads(profile: Path, index: int) -> None:
    by_url = _read(profile, index, "url")
    by_dir = _read(profile, index, "dir")
    reasons = UNREADABLE.get(TABLES[index].name)
    if reasons is not None:
        for mode, got, reason in (("url", by_url, reasons[0]), ("dir", by_dir, reasons[1])):
            assert isinstance(got, Exception), f"{mode} now reads: update UNREADABLE"
            assert re.search(reason, str(got)), f"{mode} failed otherwise: {got!r}"
        return
    assert not isinstance(by_url, Exception), f"url failed: {by_url!r}"
    assert not isinstance(by_dir, Exception), f"dir failed: {by_dir!r}"
    assert by_url.num_rows or TABLES[index].deltalake_rows in ("0", "")
    assert_same_rows(by_dir, by_url)


def test_the_unreadable_are_in_the_matrix() -> None:
    assert set(UNREADABLE) <= {t.name for t in TABLES}
