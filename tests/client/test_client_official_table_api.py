"""The official client's newer table API (its main branch: ``SharingClient.table(name)``,
``snapshot(jsonPredicateHints=...)``, ``to_record_batches``, ``to_record_batch_reader``,
the table's own ``to_arrow`` ...) beside deltaport's names: one script, run with either
set of names against a real server, reads what deltalake reads."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from deltalake import DeltaTable

import deltaport as delta_sharing
from client_support import CDF_TABLES
from corpus import corpus_table
from sharing_proxy import SharingProxy

HINT = json.dumps(
    {
        "op": "lessThan",
        "children": [
            {"op": "column", "name": "number", "valueType": "int"},
            {"op": "literal", "value": "3", "valueType": "int"},
        ],
    }
)


@dataclass(frozen=True)
class Names:
    predicate: str
    batches: str


OFFICIAL = Names(predicate="jsonPredicateHints", batches="to_record_batches")
DELTAPORT = Names(predicate="predicate", batches="to_batches")


def script(profile: Path, names: Names) -> dict[str, Any]:
    """What a recipient's program does with the table API, in the given names."""
    client = delta_sharing.SharingClient(str(profile))
    table = client.table("share1.default.basic")
    snapshot = table.snapshot(version=1, **{names.predicate: HINT})
    changes = client.table("share1.cdf.cdf").changes(starting_version=0, ending_version=3)
    reader = table.snapshot(version=0).to_record_batch_reader()
    out = {
        "version": table.version(),
        "schema": table.metadata().schema_string,
        "reader_version": table.protocol().min_reader_version,
        "filtered": snapshot.to_arrow(),
        "batches": pa.Table.from_batches(list(getattr(snapshot, names.batches)())),
        "pandas": snapshot.to_pandas(),
        "latest": table.to_arrow(),
        "stream_type": type(reader),
        "stream": reader.read_all(),
        "changes": changes.to_pandas(),
    }
    client.close()
    return out


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.to_pylist(), key=lambda row: json.dumps(row, sort_keys=True, default=str))


@pytest.mark.parametrize("names", [OFFICIAL, DELTAPORT], ids=["official", "deltaport"])
def test_one_script_in_both_names_reads_what_deltalake_reads(profile: Path, names: Names) -> None:
    basic = str(corpus_table("dat__basic_append").path)
    got = script(profile, names)

    latest = DeltaTable(basic)
    at_one = DeltaTable(basic, version=1).to_pyarrow_table()
    filtered = at_one.filter(pc.less(at_one["number"], 3))
    assert got["version"] == latest.version()
    assert json.loads(got["schema"]) == json.loads(latest.schema().to_json())
    assert got["reader_version"] == latest.protocol().min_reader_version
    assert _rows(got["filtered"]) == _rows(filtered)
    assert _rows(got["batches"]) == _rows(filtered)
    assert _rows(pa.Table.from_pandas(got["pandas"], preserve_index=False)) == _rows(filtered)
    assert _rows(got["latest"]) == _rows(latest.to_pyarrow_table())
    assert got["stream_type"] is pa.RecordBatchReader
    assert _rows(got["stream"]) == _rows(DeltaTable(basic, version=0).to_pyarrow_table())

    cdf = DeltaTable(str(corpus_table(CDF_TABLES["cdf"]).path))
    expected = pa.table(cdf.load_cdf(starting_version=0, ending_version=3).read_all())
    keys = ["_change_type", "_commit_version"]
    data = [c for c in expected.column_names if not c.startswith("_")]
    frame = got["changes"]
    assert sorted(map(tuple, frame[data + keys].astype(str).values.tolist())) == sorted(
        map(tuple, expected.select(data + keys).to_pandas().astype(str).values.tolist())
    )


def test_predicate_and_its_official_name_together_are_refused(profile: Path) -> None:
    with delta_sharing.SharingClient(str(profile)) as client:
        table = client.table("share1.default.basic")
        with pytest.raises(ValueError, match="either predicate or jsonPredicateHints"):
            table.snapshot(predicate=HINT, jsonPredicateHints=HINT)


def test_a_record_batch_reader_reads_files_as_it_is_consumed(
    proxy: SharingProxy, proxy_profile: Path, client_tables: dict[str, Path]
) -> None:
    """Streaming, in bounded memory: when the first batch is handed out, only a window of
    the 40 files has been downloaded; the rest come as the reader is consumed."""
    with delta_sharing.SharingClient(str(proxy_profile)) as client:
        reader = client.table("share1.default.small_files").snapshot().to_record_batch_reader()
        first = reader.read_next_batch()
        downloaded_early = sum(proxy.record.downloads.values())
        rest = reader.read_all()
        downloaded = sum(proxy.record.downloads.values())
    expected = DeltaTable(str(client_tables["small_files"])).to_pyarrow_table()
    assert downloaded == len(DeltaTable(str(client_tables["small_files"])).file_uris())
    assert downloaded_early < downloaded
    assert _rows(pa.concat_tables([pa.Table.from_batches([first]), rest])) == _rows(expected)
