"""The column-wise file lines equal the protocol structs encoded one by one with msgspec."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import msgspec
import numpy as np
import pyarrow as pa
import pytest

from corpus import CorpusTable, corpus_tables
from deltaport.catalog.model import SharedTable
from deltaport.delta import DeltaTable, Snapshot
from deltaport.delta.errors import UnsupportedFeatureError
from deltaport.protocol.actions import DeltaFile, FileLine, ParquetFile
from deltaport.server.answers.file_ids import file_id
from deltaport.server.answers.line_encoding import (
    joined,
    json_escaped,
    json_map_pieces,
    json_maps,
    json_strings,
    optional_string_member,
    optional_string_member_pieces,
    text_view,
)
from deltaport.server.answers.lines import deletion_vector_json, dv_log_path
from deltaport.server.files.signing import TableUrlSigner
from deltaport.server.tables import snapshot_cache, snapshot_lines
from deltaport.server.tables.snapshot_lines import SnapshotLines
from deltaport.storage import parse_location
from deltaport.storage.local_urls import LocalUrlSigner, quote_paths

EXPIRES_AT = 1_900_000_000
FEATURES = {"deletion-vectors", "row-tracking", "special-chars", "null-partition", "absolute-paths"}


def _tables() -> list[CorpusTable]:
    return [
        t
        for t in corpus_tables()
        if not t.negative and t.tags & FEATURES and "data-files-missing" not in t.tags
    ]


def _reference_lines(
    snapshot: Snapshot, sign: Any, fmt: str, version: int | None, timestamp: int | None
) -> bytes:
    """The file lines built as one protocol struct per file."""
    out: list[FileLine] = []
    expiration = EXPIRES_AT * 1000
    for row in snapshot.files.to_pylist():
        url = sign([row["path"]])[0]
        partitions = dict(row["partition_values"] or ())
        if fmt == "parquet":
            out.append(
                FileLine(
                    ParquetFile(
                        url,
                        file_id(row["path"]),
                        partitions,
                        row["size"],
                        row["stats"],
                        version,
                        timestamp,
                        expiration,
                    )
                )
            )
            continue
        add: dict[str, Any] = {
            "path": url,
            "partitionValues": partitions,
            "size": row["size"],
            "modificationTime": row["modification_time"],
            "dataChange": True if row["data_change"] is None else row["data_change"],
        }
        if row["stats"] is not None:
            add["stats"] = row["stats"]
        if row["tags"]:
            add["tags"] = dict(row["tags"])
        dv = row["deletion_vector"]
        if dv is not None:
            path = dv_log_path(dv)
            add["deletionVector"] = deletion_vector_json(
                dv, {path: sign([path])[0]} if path else {}
            )
        for key, column in (
            ("baseRowId", "base_row_id"),
            ("defaultRowCommitVersion", "default_row_commit_version"),
        ):
            if row[column] is not None:
                add[key] = row[column]
        out.append(
            FileLine(DeltaFile(file_id(row["path"]), {"add": add}, version, timestamp, expiration))
        )
    return msgspec.json.Encoder().encode_lines(out)


@pytest.mark.parametrize("preparation", ["whole", "by-slice", "by-block-then-whole"])
@pytest.mark.parametrize("corpus", _tables(), ids=lambda t: t.name)
def test_lines_equal_the_struct_encoding(
    corpus: CorpusTable, preparation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if preparation == "by-slice":  # as for a snapshot too large to prepare as a whole
        monkeypatch.setattr(snapshot_cache, "WHOLE_SNAPSHOT_LIMIT", -1)
    if preparation != "whole":  # the first answer of every file is built in several blocks
        monkeypatch.setattr(snapshot_lines, "FILES_PER_SLICE", 2)
    try:
        snapshot = DeltaTable(str(corpus.path)).snapshot()
    except UnsupportedFeatureError:
        pytest.skip("the engine does not read this table")
    signer = TableUrlSigner(LocalUrlSigner(b"k" * 32, "http://127.0.0.1:1/files"))
    table = SharedTable("s", "sc", "t", parse_location(str(corpus.path)), {})
    lines = SnapshotLines(signer)
    prepared = lines.prepared(table, snapshot)
    assert prepared.whole == (preparation != "by-slice")

    def sign(paths: Sequence[str]) -> list[str]:
        return signer.sign_until(table, paths, EXPIRES_AT)

    for fmt in ("parquet", "delta"):
        for version, timestamp in ((None, None), (snapshot.version, snapshot.timestamp)):
            try:
                expected = _reference_lines(snapshot, sign, fmt, version, timestamp)
            except Exception as exc:  # a file that cannot be served fails both ways
                with pytest.raises(type(exc)):
                    b"".join(
                        lines.segments(
                            table,
                            prepared,
                            prepared.files,
                            fmt,
                            version,
                            timestamp,
                            EXPIRES_AT,
                            None,
                        )
                    )
                continue
            got = b"".join(
                lines.segments(
                    table, prepared, prepared.files, fmt, version, timestamp, EXPIRES_AT, None
                )
            )
            assert got == expected
            assert prepared.built(fmt) == (prepared.whole and len(prepared.files) > 0)
            # some of the files, from the pieces the full answer built (joined when whole)
            odd_rows = pa.array([i % 2 == 1 for i in range(len(prepared.files))], pa.bool_())
            odd = prepared.files.filter(odd_rows)
            some = b"".join(
                lines.segments(table, prepared, odd, fmt, version, timestamp, EXPIRES_AT, None)
            )
            assert some.splitlines() == expected.splitlines()[1::2]


TEXTS = ["plain", 'q"uote', "back\\slash", "new\nline", "tab\t\x01", "é ü 😀", "\u2028", "", None]


def test_json_strings_match_msgspec() -> None:
    got = json_strings(pa.array(TEXTS, pa.string())).to_pylist()
    assert got == [None if t is None else msgspec.json.encode(t).decode() for t in TEXTS]
    without_controls = [t for t in TEXTS if t is None or all(ord(c) >= 0x20 for c in t)]
    got = json_strings(pa.array(without_controls, pa.string())).to_pylist()
    assert got == [None if t is None else msgspec.json.encode(t).decode() for t in without_controls]


def test_json_escaped_of_raw_buffers() -> None:
    """Escaping rewrites the whole data buffer: bytes before the first string and under
    null slots must not shift the strings' offsets."""
    strings = ['a"b', 'hidden"', 'c\\d"', "", '"']
    data = b'x"\\' + "".join(strings).encode()
    offsets = [3]
    for text in strings:
        offsets.append(offsets[-1] + len(text.encode()))
    valid = [True, False, True, True, True]
    validity = pa.array(valid).buffers()[1]
    values = pa.StringArray.from_buffers(
        len(strings), pa.py_buffer(np.array(offsets, np.int32)), pa.py_buffer(data), validity, 1
    )
    escaped = [msgspec.json.encode(t).decode()[1:-1] for t in strings]
    expected = [text if ok else None for text, ok in zip(escaped, valid, strict=True)]
    assert json_escaped(values).to_pylist() == expected
    assert json_escaped(values.slice(2)).to_pylist() == expected[2:]


def test_json_maps() -> None:
    maps = pa.array(
        [[("a", "1"), ("b", None)], None, [], [('k"', "v\\")]], pa.map_(pa.string(), pa.string())
    )
    expected = ['{"a":"1","b":null}', "{}", "{}", '{"k\\"":"v\\\\"}']
    assert json_maps(maps).to_pylist() == expected
    assert json_maps(maps.slice(2)).to_pylist() == expected[2:]
    assert [json.loads(m) for m in expected] == [{"a": "1", "b": None}, {}, {}, {'k"': "v\\"}]


MAP = pa.map_(pa.string(), pa.string())
MAPS = {
    "same keys": [
        [("p", "1"), ('q"', None)],
        [("p", 'x"\\'), ('q"', "é")],
        [("p", ""), ('q"', "")],
    ],
    "one key": [[("part", str(i))] for i in range(5)],
    "no keys": [[], [], []],
    "keys in another order": [[("a", "1"), ("b", "2")], [("b", "3"), ("a", "4")]],
    "other keys": [[("a", "1")], [("b", "2")]],
    "other widths": [[("a", "1")], [("a", "1"), ("b", "2")]],
    "a null map": [[("a", "1")], None],
    "none": [],
}


@pytest.mark.parametrize("name", list(MAPS))
def test_json_map_pieces_join_to_json_maps(name: str) -> None:
    maps = pa.array(MAPS[name], MAP)
    for start, stop in ((0, None), (1, None), (0, 1)):
        part = maps.slice(start, None if stop is None else stop - start)
        pieces = json_map_pieces(part)
        rows_of_nothing = pa.array(
            [""] * len(part), pa.string()
        )  # a column, for all-constant pieces
        assert joined([*pieces, rows_of_nothing]).to_pylist() == json_maps(part).to_pylist()
        rows = MAPS[name][start:stop]
        key_lists = {None if row is None else tuple(k for k, _ in row) for row in rows}
        uniform = len(key_lists) == 1 and None not in key_lists
        # with the same keys everywhere, the keys are constant text and only values columns
        assert (len(pieces) > 1 or isinstance(pieces[0], str)) == uniform
        columns = [p for p in pieces if not isinstance(p, str)]
        assert not uniform or all('":' not in text for c in columns for text in c.to_pylist())


def test_optional_string_member_pieces() -> None:
    for values in (pa.array(['{"a":1}', "x"]), pa.array(['{"a":1}', None])):
        pieces = optional_string_member_pieces("stats", values)
        assert joined(pieces).to_pylist() == optional_string_member("stats", values).to_pylist()
    assert optional_string_member_pieces("stats", pa.array(["x"]))[0] == ',"stats":"'


def test_pieces_of_parts_of_different_shapes_are_joined_first() -> None:
    same = [(",", pa.array(["a", "b"]), "!"), (",", pa.array(["c"]), "!")]
    assert snapshot_cache._concatenated_pieces(same)[0] == ","
    assert joined(snapshot_cache._concatenated_pieces(same)).to_pylist() == [",a!", ",b!", ",c!"]
    mixed = [(",", pa.array(["a"]), "!"), (pa.array([",b?"]),)]
    assert joined(snapshot_cache._concatenated_pieces(mixed)).to_pylist() == [",a!", ",b?"]


def test_text_view_of_a_slice() -> None:
    lines = pa.array(["a\n", "bb\n", "ccc\n"])
    assert text_view(lines) == b"a\nbb\nccc\n"
    assert text_view(lines.slice(1, 1)) == b"bb\n"
    assert text_view(lines.slice(3)) == b""


PATHS = [
    "part-0.parquet",
    "p=1/x y%z.parquet",
    "é/ü+&.parquet",
    "x\x01y",
    "p=%41/q",
    "100% [x]\\",
    "a~b_c-d.e/f",
]


def test_quote_paths_equals_quote() -> None:
    """``=`` stays as it is (legal in paths; partition directories hold one)."""
    assert quote_paths(pa.array(PATHS)).to_pylist() == [quote(p, safe="/=") for p in PATHS]
    ascii_only = [p for p in PATHS if p.isascii() and p.isprintable()]
    expected = [quote(p, safe="/=") for p in ascii_only]
    assert quote_paths(pa.array(ascii_only)).to_pylist() == expected
    assert quote_paths(pa.array(["p=1/q=2/a.parquet"])).to_pylist() == ["p=1/q=2/a.parquet"]
