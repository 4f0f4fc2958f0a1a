"""The drop-in conversion's choices that the corpus tables do not reach, checked against
the official client (1.4.2) and its pandas 2 in their own venv."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from deltaport.client.official_types import official_frame
from deltaport.protocol.schema import PrimitiveType
from deltaport.read import EncodedBatch, FileEncoding, parse_partition_values
from emulators import official_client_python, run_official_script  # noqa: F401

PARTITION_VALUES = [
    "2024-01-01 00:00:00",
    "2024-01-01 00:00:00.5",
    "2024-01-01 00:00:00.123456",
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00.000Z",
    "2024-01-01T01:00:00+01:00",
    "2024-01-01T00:00:00-0530",
    "2024-01-01T00:00:00+00:00",
    None,
    "",
]
PARTITION_SCRIPT = """
import json, sys
import pandas as pd
from delta_sharing.converter import to_converter
convert = to_converter("timestamp")
out = []
for raw in json.loads(sys.argv[1]):
    frame = pd.DataFrame({"id": [1]})
    frame["part"] = convert(raw)
    value = frame["part"][0]
    if value is not pd.NaT and value.tz is not None:
        value = value.tz_convert("UTC").tz_localize(None)
    out.append([str(frame["part"].dtype), None if value is pd.NaT else value.isoformat()])
print("RESULT " + json.dumps(out), flush=True)
"""


def _ours(raw: str | None) -> list[str | None]:
    """deltaport's dtype and UTC value for a timestamp partition column of one file."""
    values = parse_partition_values(pa.array([raw], pa.string()), PrimitiveType("timestamp"))
    table = pa.table({"id": pa.array([1], pa.int64()), "part": values})
    encoding = FileEncoding(
        stored={"id": pa.int64()}, absent=frozenset(), partition_values={"part": raw}
    )
    batches = [EncodedBatch(batch, encoding) for batch in table.to_batches()]
    part = official_frame(batches, table.schema, commit_timestamp_ms=False)["part"]
    value = part[0]
    if value is not None and getattr(value, "tz", None) is not None:
        value = value.tz_convert("UTC").tz_localize(None)
    return [str(part.dtype), None if value is None or value != value else value.isoformat()]


def test_timestamp_partition_values_typed_as_pandas_2_parses_them(
    official_client_python: Path,  # noqa: F811
) -> None:
    """pandas 2 gives a parsed string the unit its fraction needs and the zone it names
    (pandas 3 would give microseconds): the official client's frames carry that dtype."""
    (answer,) = run_official_script(official_client_python, PARTITION_SCRIPT, PARTITION_VALUES)
    theirs = json.loads(answer)
    assert [_ours(raw) for raw in PARTITION_VALUES] == theirs
