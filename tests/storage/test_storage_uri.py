"""Table location spellings normalise to one Location per storage kind."""

from __future__ import annotations

import os

import pytest

from deltaport.storage import InvalidLocationError, Location, parse_location, resolve_log_path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/data/tables/t/", Location("local", "file:///data/tables/t", "", "/data/tables/t")),
        ("file:///data/t", Location("local", "file:///data/t", "", "/data/t")),
        ("file:/data/t", Location("local", "file:///data/t", "", "/data/t")),
        ("file://localhost/data/t", Location("local", "file:///data/t", "", "/data/t")),
        ("file:///data/a%20b", Location("local", "file:///data/a b", "", "/data/a b")),
        (
            "/data/test%file%prefix",
            Location("local", "file:///data/test%file%prefix", "", "/data/test%file%prefix"),
        ),
        ("s3://bucket/path/to/t", Location("s3", "s3://bucket/path/to/t", "bucket", "path/to/t")),
        ("s3a://bucket/t/", Location("s3", "s3://bucket/t", "bucket", "t")),
        ("s3n://bucket/t", Location("s3", "s3://bucket/t", "bucket", "t")),
        ("S3://bucket/t", Location("s3", "s3://bucket/t", "bucket", "t")),
        ("s3://bucket", Location("s3", "s3://bucket", "bucket", "")),
        ("az://container/p/t", Location("azure", "az://container/p/t", "container", "p/t")),
        ("azure://container/t", Location("azure", "az://container/t", "container", "t")),
        (
            "abfss://container@acct.dfs.core.windows.net/p/t",
            Location("azure", "az://container/p/t", "container", "p/t", "acct"),
        ),
        (
            "abfs://container@acct.dfs.core.windows.net/t",
            Location("azure", "az://container/t", "container", "t", "acct"),
        ),
        (
            "wasbs://container@acct.blob.core.windows.net/t",
            Location("azure", "az://container/t", "container", "t", "acct"),
        ),
        (
            "wasb://container@acct.blob.core.windows.net/t",
            Location("azure", "az://container/t", "container", "t", "acct"),
        ),
        ("gs://bucket/p/t", Location("gcs", "gs://bucket/p/t", "bucket", "p/t")),
        ("gcs://bucket/t", Location("gcs", "gs://bucket/t", "bucket", "t")),
    ],
)
def test_spellings(text: str, expected: Location) -> None:
    assert parse_location(text) == expected


def test_relative_and_home_paths_become_absolute() -> None:
    assert parse_location("rel/t").key == os.path.abspath("rel/t")
    assert parse_location("~/t").key == os.path.expanduser("~/t")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "s3:///nobucket",
        "gs:///x",
        "abfss://@acct.dfs.core.windows.net/x",
        "ftp://host/x",
        "file://otherhost/x",
    ],
)
def test_invalid(text: str) -> None:
    with pytest.raises(InvalidLocationError):
        parse_location(text)


def test_child_keeps_kind_bucket_and_account() -> None:
    root = parse_location("abfss://c@acct.dfs.core.windows.net/t")
    child = root.child("p=1/f.parquet")
    assert child == Location("azure", "az://c/t/p=1/f.parquet", "c", "t/p=1/f.parquet", "acct")
    assert parse_location("s3://b").child("f") == Location("s3", "s3://b/f", "b", "f")


def test_log_paths_are_decoded_once() -> None:
    root = parse_location("/data/t")
    # The log URL-encodes on-disk names, which themselves may hold '%' escapes.
    loc = resolve_log_path(root, "p=%25F0%259F%2598%2588/test%25file%25prefix-part-0.parquet")
    assert loc.key == "/data/t/p=%F0%9F%98%88/test%file%prefix-part-0.parquet"
    assert resolve_log_path(root, "data=%F0%9F%98%88/f.parquet").key == "/data/t/data=😈/f.parquet"
    absolute = resolve_log_path(root, "s3a://other/t/f.parquet")
    assert absolute == Location("s3", "s3://other/t/f.parquet", "other", "t/f.parquet")
    assert resolve_log_path(root, "file:/elsewhere/a%20b.parquet").key == "/elsewhere/a b.parquet"


def test_question_marks_and_hashes_belong_to_the_key() -> None:
    assert parse_location("s3://b/odd/a*b?c$d").key == "odd/a*b?c$d"
    assert parse_location("gs://b/x#y?z/").uri == "gs://b/x#y?z"
    assert parse_location("abfss://c@acct.dfs.core.windows.net/p?q").key == "p?q"
