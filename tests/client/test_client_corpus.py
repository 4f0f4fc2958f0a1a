"""Every readable corpus table, served by a real deltaport server and read by the client
(response format chosen by the server), holds the rows deltaport reads from disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from compare import assert_same_rows, direct_read

import deltaport.client as dc
import sharing_server as server_process
from client_support import write_profile
from corpus import CorpusTable, corpus_tables
from deltaport.delta.errors import DeltaError
from deltaport.storage import StorageError

FAST_RETRY = dc.RetryPolicy(max_attempts=2, base_delay=0.01)
MAX_ROWS = 100_000
"""Bigger tables are left to tests/read: reading them twice here would be slow."""


def _small(table: CorpusTable) -> bool:
    rows = table.deltalake_rows
    return not rows.isdigit() or int(rows) <= MAX_ROWS


TABLES = [t for t in corpus_tables() if not t.negative and not t.data_missing and _small(t)]


@pytest.fixture(scope="module")
def corpus_profile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tables = [
        {"name": f"t{i}", "location": str(t.path), "historyShared": True}
        for i, t in enumerate(TABLES)
    ]
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "corpus-signing-key",
        "shares": [{"name": "corpus", "schemas": [{"name": "all", "tables": tables}]}],
    }
    tmp = tmp_path_factory.mktemp("corpus-server")
    running = server_process.start_server(config, tmp)
    try:
        yield write_profile(tmp / "corpus.share", running.url)
    finally:
        server_process.stop_server(running)


def _direct(table: CorpusTable) -> pa.Table | None:
    try:
        return direct_read(table.path)
    except (DeltaError, StorageError, ValueError, NotImplementedError):
        return None


@pytest.mark.parametrize("index", range(len(TABLES)), ids=[t.name for t in TABLES])
def test_corpus_table_reads_like_the_disk(corpus_profile: Path, index: int) -> None:
    table = TABLES[index]
    expected = _direct(table)
    with dc.SharingClient(corpus_profile, retry=FAST_RETRY) as client:
        scan = client.table(f"corpus.all.t{index}").snapshot()
        if expected is None:  # broken on disk (a missing DV file...): the client must say so
            with pytest.raises(dc.SharingError):
                scan.to_arrow()
            return
        got = scan.to_arrow()
    assert_same_rows(got, expected)
