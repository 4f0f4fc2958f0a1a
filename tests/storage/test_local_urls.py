"""LocalUrlSigner: URL shape, verification, batch speed; resolve_local_file confinement."""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

import pyarrow as pa
import pytest

from deltaport.storage import parse_location
from deltaport.storage.local_urls import (
    InvalidSignatureError,
    LocalUrlSigner,
    PathEscapeError,
    resolve_local_file,
)

SECRET = b"k" * 32
NAMES = [
    "part-00000.snappy.parquet",
    "data=😈/test%file%prefix-part-1.parquet",
    "a b/c&d+e=f/#g?.parquet",
    "col=2021-11-18 02%3A30%3A00.123456/x.parquet",
]


def _split(url: str) -> tuple[str, str, dict[str, str]]:
    parts = urlsplit(url)
    _, _, key, rest = parts.path.split("/", 3)
    return unquote(key), unquote(rest), dict(parse_qsl(parts.query))


@pytest.mark.parametrize("name", NAMES)
def test_round_trip_through_url(name: str) -> None:
    signer = LocalUrlSigner(SECRET, "http://host:1/files/")
    expires = int(time.time()) + 60
    url = signer.sign("share.schema.table", name, expires)
    assert url.startswith("http://host:1/files/share.schema.table/")
    key, path, params = _split(url)
    assert (key, path) == ("share.schema.table", name)
    assert params["se"] == str(expires) and params["sp"] == "r"
    assert signer.verify(key, path, params) == name


def test_sign_many_matches_sign() -> None:
    signer = LocalUrlSigner(SECRET, "http://h/files")
    expires = int(time.time()) + 60
    assert signer.sign_many("t", NAMES, expires) == [signer.sign("t", n, expires) for n in NAMES]


def test_rejections() -> None:
    signer = LocalUrlSigner(SECRET, "http://h/files")
    now = int(time.time())
    _, _, params = _split(signer.sign("t", "a.parquet", now + 60))
    cases = [
        ("t", "b.parquet", params),  # another file
        ("u", "a.parquet", params),  # another table
        ("t", "a.parquet", {**params, "se": str(now + 3600)}),  # longer life
        ("t", "a.parquet", {**params, "sig": params["sig"][:-2] + "AA"}),
        ("t", "a.parquet", {**params, "sig": "!!"}),
        ("t", "a.parquet", {**params, "sig": params["sig"] + "!"}),
        ("t", "a.parquet", {**params, "se": "²"}),
        ("t", "a.parquet", {"se": params["se"]}),
        ("t", "a.parquet", {"sig": params["sig"]}),
        ("t", "../a.parquet", params),
        ("t", "/a.parquet", params),
        ("t/x", "a.parquet", params),
    ]
    for key, path, query in cases:
        with pytest.raises(InvalidSignatureError):
            signer.verify(key, path, query)
    other = LocalUrlSigner(b"o" * 32, "http://h/files")
    with pytest.raises(InvalidSignatureError):
        other.verify("t", "a.parquet", params)


def test_expiry() -> None:
    signer = LocalUrlSigner(SECRET, "http://h/files")
    _, _, params = _split(signer.sign("t", "a", 1000))
    assert signer.verify("t", "a", params, now=999.5) == "a"
    with pytest.raises(InvalidSignatureError, match="expired"):
        signer.verify("t", "a", params, now=1000.5)


def test_bad_inputs_to_sign() -> None:
    with pytest.raises(ValueError, match="needs at least"):
        LocalUrlSigner(b"short", "http://h")
    signer = LocalUrlSigner(SECRET, "http://h/files")
    for key, path, reason in (
        ("t", "../x", "'..' segments"),
        ("t", "a/../../x", "'..' segments"),
        ("t", "/abs", "relative and non-empty"),
        ("t", "", "relative and non-empty"),
        ("a/b", "x", "one non-empty path segment"),
    ):
        with pytest.raises(ValueError, match=reason):
            signer.sign(key, path, 1)
    assert signer.sign("t", "a..b/c..", 1)  # dots inside names are fine


PATH_CASES = [
    *("ok.parquet", "..", "a/..", "../a", "a/../b", "a..b", "x/..y", "/abs", "", "a\0b"),
    *("b/..", ".", "c/d..", "e../f", "..x/y", "p=1/..", "f.snappy.parquet", "a/./b"),
]


def _servable(path: str) -> bool:
    """The rule for a file path below a table root, written out plainly."""
    return (
        bool(path) and not path.startswith("/") and "\0" not in path and ".." not in path.split("/")
    )


@pytest.mark.parametrize("offset", range(0, len(PATH_CASES), 5))
def test_batch_preparation_rejects_exactly_the_paths_outside_the_rule(offset: int) -> None:
    """The column-wise path check (byte searches, then suspects one by one) finds the
    rows the plain rule rejects, also on a slice whose buffers hold rows around it."""
    signer = LocalUrlSigner(SECRET, "http://h/files")
    paths = pa.array(PATH_CASES, pa.string()).slice(offset, 7)
    expected = {row for row, path in enumerate(paths.to_pylist()) if not _servable(path)}
    assert expected
    assert set(signer.prepare("t", paths).invalid) == expected


def test_batch_signing_gives_distinct_verifiable_urls() -> None:
    signer = LocalUrlSigner(SECRET, "http://127.0.0.1:8080/delta-sharing/files")
    paths = [
        f"letter=b/date=1970-01-01/part-{i:05d}-c7ee7ba3-625c-495b-95df-06f44ffb72c9.parquet"
        for i in range(100_000)
    ]
    expiry = int(time.time()) + 3600
    urls = signer.sign_many("share.schema.table", paths, expiry)
    assert len(set(urls)) == 100_000
    for row in (0, 4_242, 99_999):
        query = dict(parse_qsl(urlsplit(urls[row]).query))
        assert signer.verify("share.schema.table", paths[row], query) == paths[row]
    assert signer.sign_many("share.schema.table", paths[-1:], expiry) == urls[-1:]


def test_resolve_local_file_confines_to_root(tmp_path: Path) -> None:
    table = tmp_path / "t"
    (table / "d").mkdir(parents=True)
    (table / "d" / "f").write_bytes(b"x")
    (tmp_path / "outside").write_bytes(b"y")
    (table / "link_out").symlink_to(tmp_path / "outside")
    (table / "dir_out").symlink_to(tmp_path)
    (table / "link_in").symlink_to(table / "d" / "f")
    root = parse_location(str(table))
    inside = str(table / "d" / "f")
    assert resolve_local_file(root, "d/f") == inside
    assert resolve_local_file(root, "/d/f") == inside
    assert resolve_local_file(root, "link_in") == inside
    assert resolve_local_file(root, "d/./f") == inside
    assert resolve_local_file(root, "missing/f") == str(table / "missing" / "f")
    bad_paths = ("../outside", "link_out", "dir_out/outside", "d/../../outside", ".", "d/..")
    for bad in (*bad_paths, "dir_out/missing", "d//../../outside"):
        with pytest.raises(PathEscapeError):
            resolve_local_file(root, bad)
    with pytest.raises(ValueError, match="not a local table location"):
        resolve_local_file(parse_location("s3://b/t"), "f")
