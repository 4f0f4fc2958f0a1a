"""deltaport's drop-in functions return what the official ``delta-sharing`` client (1.4.2,
run in its own venv) returns for the same tables from the same server: the same columns in
the same order, the same dtypes and the same values, for snapshots and change data.

Values are compared as the instants they hold (a timestamp column's dtype says whether it
is naive or zoned)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import write_deltalake

import deltaport.client as dc
import sharing_server as server_process
from client_support import write_profile
from corpus import corpus_table
from deltaport.client.official_types import official_frame
from deltaport.read import EncodedBatch, FileEncoding
from deltaport.read.file_encoding import INT96_AS_READ
from emulators import official_client_python, run_official_script  # noqa: F401
from mixed_files import write_mixed_table

CELLS = """
import math
import numpy as np
import pandas as pd

def cells(df):
    rows = []
    for row in df.astype(object).values.tolist():
        rows.append([cell(v) for v in row])
    return rows

def cell(v):
    if isinstance(v, np.generic):  # an object column's numpy scalar: its Python value
        v = v.item()
    if v is None or v is pd.NaT or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float) and v.is_integer():  # the dtypes are compared on their own
        v = int(v)
    if isinstance(v, pd.Timestamp):  # the instant; the dtype says naive or zoned
        return (v.tz_convert("UTC").tz_localize(None) if v.tz is not None else v).isoformat()
    return repr(v)
"""
SCRIPT = (
    CELLS
    + """
import json, sys
import delta_sharing
out = []
for kind, url, kwargs in json.loads(sys.argv[1]):
    df = getattr(delta_sharing, kind)(url, **kwargs)
    out.append([list(df.columns), [str(t) for t in df.dtypes], cells(df)])
print("RESULT " + json.dumps(out), flush=True)
"""
)
namespace: dict[str, Any] = {}
exec(CELLS, namespace)  # the same rendering of values for both clients
cells = namespace["cells"]

SNAPSHOTS: list[tuple[str, dict[str, Any]]] = [
    ("default.parted", {}),
    ("default.parted", {"version": 1}),
    ("default.parted", {"use_delta_format": True}),
    ("default.small_files", {}),
    ("default.basic", {}),
    ("default.dv", {}),
    ("default.cm", {}),
    ("default.small_files", {"limit": 120}),
    ("cdf.cdf", {}),
    ("cdf.cdf_dv", {"use_delta_format": True}),
    ("cdf.cdf_cm", {"use_delta_format": True}),
    # every table above in the delta response format too
    ("default.parted", {"version": 1, "use_delta_format": True}),
    ("default.small_files", {"use_delta_format": True}),
    ("default.basic", {"use_delta_format": True}),
    ("default.small_files", {"limit": 120, "use_delta_format": True}),
    ("cdf.cdf", {"use_delta_format": True}),
]
CHANGES: list[tuple[str, dict[str, Any]]] = [
    ("cdf.cdf", {"starting_version": 0}),
    ("cdf.cdf", {"starting_version": 1, "ending_version": 2}),
    ("cdf.cdf", {"starting_version": 0, "use_delta_format": True}),
    ("cdf.cdf_dv", {"starting_version": 0, "use_delta_format": True}),
    ("cdf.cdf_dv_pairs", {"starting_version": 0, "use_delta_format": True}),
    ("cdf.cdf_cm", {"starting_version": 2, "use_delta_format": True}),
    ("cdf.cdf", {"starting_version": 1, "ending_version": 2, "use_delta_format": True}),
]
TYPED = {
    "primitives": "dat__all_primitive_types",
    "nested": "dat__nested_types",
    "v2_checkpoint": "drs__checkpoint-v2-table",
    "stats_optional": "drs__delta-stats-optional",
    "partition_types": "dat__multi_partitioned_2",
    "evolved": "drs__delta-1.2.1-only-struct-stats",
}
"""Spark-written corpus tables with timestamps, decimals, binaries, dates, nested types,
partition columns of several types and a column added later; plus ``by_deltalake``
(delta-rs's UTC-adjusted timestamps) and ``mixed`` (files of several writers)."""
CASES = (
    [("load_as_pandas", f"share1.{t}", k) for t, k in SNAPSHOTS]
    + [("load_table_changes_as_pandas", f"share1.{t}", k) for t, k in CHANGES]
    + [("load_as_pandas", f"typed.all.{t}", {}) for t in [*TYPED, "by_deltalake", "mixed"]]
    + [
        ("load_as_pandas", f"typed.all.{t}", {"use_delta_format": True})
        for t in [*TYPED, "by_deltalake", "mixed"]
    ]
    + [
        ("load_table_changes_as_pandas", "typed.all.mixed", {"starting_version": 0}),
        ("load_table_changes_as_pandas", "typed.all.mixed", {"starting_version": 1}),
    ]
)


@pytest.fixture(scope="module")
def typed_profile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("typed")
    stamps = [datetime(2024, 1, 1, 12, 30, 1, 250_000, tzinfo=UTC), None]
    write_deltalake(
        str(root / "by_deltalake"),
        pa.table({"id": [1, 2], "ts": pa.array(stamps, pa.timestamp("us", "UTC"))}),
    )
    tables = [{"name": a, "location": str(corpus_table(n).path)} for a, n in TYPED.items()]
    tables.append({"name": "by_deltalake", "location": str(root / "by_deltalake")})
    mixed = write_mixed_table(root / "mixed")
    tables.append({"name": "mixed", "location": str(mixed), "historyShared": True})
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "official-types-signing-key",
        "shares": [{"name": "typed", "schemas": [{"name": "all", "tables": tables}]}],
    }
    running = server_process.start_server(config, root)
    try:
        yield write_profile(root / "typed.share", running.url)
    finally:
        server_process.stop_server(running)


def _url(profile: Path, typed_profile: Path, table: str) -> str:
    return f"{typed_profile if table.startswith('typed.') else profile}#{table}"


def _dtype(dtype: Any) -> str:
    """The name pandas 2 (the official client's venv) gives ``dtype``: pandas 3 converts
    Arrow strings to its ``str`` dtype where pandas 2 gives ``object``, in both clients."""
    return "object" if isinstance(dtype, pd.StringDtype) else str(dtype)


@pytest.fixture(scope="module")
def official_results(
    official_client_python: Path,  # noqa: F811
    profile: Path,
    typed_profile: Path,
) -> list[Any]:
    cases = [(kind, _url(profile, typed_profile, t), kwargs) for kind, t, kwargs in CASES]
    (answer,) = run_official_script(official_client_python, SCRIPT, cases)
    return list(json.loads(answer))


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{k}-{t}-{a}" for k, t, a in CASES])
def test_same_frame_as_the_official_client(official_results, profile, typed_profile, index):
    kind, table, kwargs = CASES[index]
    ours = getattr(dc, kind)(_url(profile, typed_profile, table), **kwargs)
    columns, dtypes, rows = official_results[index]
    assert list(ours.columns) == columns
    assert list(map(_dtype, ours.dtypes)) == dtypes
    our_rows = sorted(cells(ours), key=repr)
    if "limit" in kwargs:
        assert len(our_rows) == len(rows) == kwargs["limit"]
        return
    assert our_rows == sorted(rows, key=repr)


def test_arrow_types_keep_timestamps_zoned(profile, typed_profile):
    target = f"{profile}#share1.cdf.cdf"
    official = dc.load_table_changes_as_pandas(target, starting_version=0)
    typed = dc.load_table_changes_as_pandas(target, starting_version=0, arrow_types=True)
    assert str(official["_commit_timestamp"].dtype) == "int64"
    assert str(typed["_commit_timestamp"].dtype) == "datetime64[us, UTC]"
    millis = typed["_commit_timestamp"].astype("int64") // 1000
    assert millis.tolist() == official["_commit_timestamp"].tolist()
    assert official["_commit_timestamp"].min() > 1_600_000_000_000  # milliseconds, not us
    # the delta format: whole seconds as the official client's, unless asked for Arrow's types
    delta = dc.load_table_changes_as_pandas(target, starting_version=0, use_delta_format=True)
    exact = dc.load_table_changes_as_pandas(
        target, starting_version=0, use_delta_format=True, arrow_types=True
    )
    seconds = exact["_commit_timestamp"].dt.floor("s")
    assert sorted(seconds) == sorted(delta["_commit_timestamp"])
    assert (exact["_commit_timestamp"] != seconds).any()  # the milliseconds are kept
    snapshot = f"{typed_profile}#typed.all.primitives"
    assert str(dc.load_as_pandas(snapshot)["timestamp"].dtype) == "datetime64[ns]"
    zoned = dc.load_as_pandas(snapshot, arrow_types=True)["timestamp"]
    assert str(zoned.dtype) == "datetime64[us, UTC]"


def test_timestamps_beyond_nanoseconds_stay_zoned_rather_than_overflow():
    zoned = pa.timestamp("us", "UTC")
    table = pa.table(
        {
            "near": pa.array([datetime(2024, 5, 1, 1, 2, 3, 4, tzinfo=UTC)], zoned),
            "far": pa.array([datetime(9999, 12, 31, tzinfo=UTC)], zoned),
            "_commit_timestamp": pa.array([datetime(2024, 5, 1, 0, 0, 0, 7000, tzinfo=UTC)], zoned),
        }
    )
    encoding = FileEncoding(
        stored={"near": INT96_AS_READ, "far": INT96_AS_READ},
        absent=frozenset(),
        partition_values={},
    )
    batches = [EncodedBatch(batch, encoding) for batch in table.to_batches()]
    frame = official_frame(batches, table.schema, commit_timestamp_ms=True)
    assert [str(t) for t in frame.dtypes] == ["datetime64[ns]", "datetime64[us, UTC]", "int64"]
    assert frame["near"][0] == pd.Timestamp("2024-05-01 01:02:03.000004")
    assert frame["far"][0] == pd.Timestamp("9999-12-31", tz="UTC")
    assert frame["_commit_timestamp"][0] == 1_714_521_600_007


INFO_SCRIPT = """
import json, sys
import delta_sharing
out = []
for url, fmt in json.loads(sys.argv[1]):
    meta = delta_sharing.get_table_metadata(url, use_delta_format=fmt)
    protocol = delta_sharing.get_table_protocol(url, use_delta_format=fmt)
    out.append({
        "version": delta_sharing.get_table_version(url),
        "metadata": {k: getattr(meta, k) for k in METADATA},
        "format": [meta.format.provider, meta.format.options],
        "protocol": {k: getattr(protocol, k) for k in PROTOCOL},
    })
print("RESULT " + json.dumps(out), flush=True)
"""
METADATA = ["id", "name", "description", "schema_string", "configuration", "partition_columns"]
PROTOCOL = ["min_reader_version", "min_writer_version", "reader_features", "writer_features"]
INFO_CASES = [
    ("share1.default.parted", True),
    ("share1.default.parted", False),
    ("share1.default.dv", True),  # deletion vectors and column mapping: delta format only
    ("share1.cdf.cdf_cm", True),
]


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def test_version_metadata_and_protocol_as_the_official_client(
    official_client_python: Path,  # noqa: F811
    profile: Path,
) -> None:
    """The attributes both clients' objects have, with the same values (deltaport's
    ``Metadata`` spells ``format`` as ``format_provider`` and ``format_options``, and has
    the ``created_time`` the official client leaves empty)."""
    cases = [(f"{profile}#{table}", fmt) for table, fmt in INFO_CASES]
    script = f"METADATA = {METADATA!r}\nPROTOCOL = {PROTOCOL!r}\n" + INFO_SCRIPT
    (answer,) = run_official_script(official_client_python, script, cases)
    official = json.loads(answer)
    for (url, fmt), theirs in zip(cases, official, strict=True):
        meta = dc.get_table_metadata(url, use_delta_format=fmt)
        protocol = dc.get_table_protocol(url, use_delta_format=fmt)
        assert dc.get_table_version(url) == theirs["version"], url
        assert {k: _plain(getattr(meta, k)) for k in METADATA} == theirs["metadata"], url
        assert list(theirs["format"]) == [meta.format_provider, dict(meta.format_options)]
        ours = {k: _plain(getattr(protocol, k)) for k in PROTOCOL}
        if theirs["protocol"]["min_writer_version"] is None:
            # it read a parquet-format answer (it offers both formats even when asked for
            # delta), whose protocol line has no writer version; deltaport tells one
            theirs["protocol"].pop("min_writer_version")
            assert isinstance(ours.pop("min_writer_version"), int)
        assert ours == theirs["protocol"], url
