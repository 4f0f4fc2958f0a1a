"""Directory mode against real parts: a deltaport server process vending STS credentials
from moto (S3 and STS in server mode), corpus tables copied into the emulated bucket, and
our client reading them in ``dir`` mode with results equal to ``url`` mode.

moto checks neither signatures nor session-token expiry (moto 5.2: its IAM emulation
compares an assumed role's session token but never its expiration), so that an expired
credential is refused is not proved here; renewal is: a client that treats its
credentials as about to lapse asks the server again before storage calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from compare import assert_same_rows

from deltaport.client import (
    RetryPolicy,
    SharingClient,
    SharingError,
    load_as_arrow,
    load_as_pandas,
    load_as_polars,
    load_table_changes_as_arrow,
)
from deltaport.client.dir_access.dir_scan import DirectoryScan
from deltaport.client.files.scan import TableScan
from deltaport.storage import StorageError
from dir_tables import (
    CDF_TABLES,
    TABLES,
    recipient_options,
    start_dir_server,
    vend_count,
    write_dir_profile,
)
from emulators import S3Emulator, free_port
from sharing_server import RunningServer, stop_server

_VALUE_TYPES = {pa.string(): "string", pa.int64(): "long", pa.int32(): "int"}


@pytest.fixture(scope="module")
def dir_server(
    s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_dir_server(s3_emulator, tmp_path_factory.mktemp("dir-client"))
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def profile(dir_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dir_profile(tmp_path_factory.mktemp("dir-profile") / "p.share", dir_server)


@pytest.fixture(scope="module")
def options(s3_emulator: S3Emulator) -> dict[str, str]:
    return recipient_options(s3_emulator)


def first_value_predicate(table: pa.Table) -> str:
    """``<first column> = <its first value>``: a predicate that matches some rows."""
    field = table.schema.field(0)
    value = table.column(0)[0].as_py()
    return json.dumps(
        {
            "op": "equal",
            "children": [
                {"op": "column", "name": field.name, "valueType": _VALUE_TYPES[field.type]},
                {"op": "literal", "value": str(value), "valueType": _VALUE_TYPES[field.type]},
            ],
        }
    )


def both(
    profile: Path, options: dict[str, str], alias: str, **kwargs: Any
) -> tuple[pa.Table, pa.Table]:
    url = f"{profile}#s.sc.{alias}"
    by_url = load_as_arrow(url, **kwargs)
    by_dir = load_as_arrow(url, access_mode="dir", storage_options=options, **kwargs)
    return by_url, by_dir


@pytest.mark.parametrize("alias", sorted(TABLES))
def test_snapshots_versions_predicates_and_limits_equal_url_mode(
    profile: Path, options: dict[str, str], alias: str
) -> None:
    by_url, by_dir = both(profile, options, alias)
    assert by_url.num_rows > 0
    assert by_dir.equals(by_url), alias
    with SharingClient(profile) as client:
        latest = client.table(f"s.sc.{alias}").version()
    for version in sorted({0, latest}):
        by_url, by_dir = both(profile, options, alias, version=version)
        assert by_dir.equals(by_url), (alias, version)
    now = datetime.now(UTC).isoformat()
    by_url, by_dir = both(profile, options, alias, timestamp=now)
    assert by_dir.equals(by_url)
    predicate = first_value_predicate(by_url)
    by_url, by_dir = both(profile, options, alias, jsonPredicateHints=predicate)
    assert by_url.num_rows > 0 and by_dir.equals(by_url), (alias, predicate)
    for limit in (0, 1, 3):
        by_url, by_dir = both(profile, options, alias, limit=limit)
        assert by_dir.equals(by_url), (alias, limit)


@pytest.mark.parametrize("alias", CDF_TABLES)
def test_change_data_equals_url_mode(profile: Path, options: dict[str, str], alias: str) -> None:
    url = f"{profile}#s.sc.{alias}"
    for start, end in ((0, None), (1, 2), (2, 3)):
        by_url = load_table_changes_as_arrow(url, start, end)
        by_dir = load_table_changes_as_arrow(
            url, start, end, access_mode="dir", storage_options=options
        )
        assert by_url.num_rows > 0
        assert_same_rows(by_dir, by_url)
    since = "2000-01-01T00:00:00Z"
    by_url = load_table_changes_as_arrow(url, starting_timestamp=since)
    by_dir = load_table_changes_as_arrow(
        url, starting_timestamp=since, access_mode="dir", storage_options=options
    )
    assert_same_rows(by_dir, by_url)


def test_pandas_and_polars_loaders(profile: Path, options: dict[str, str]) -> None:
    url = f"{profile}#s.sc.parted"
    assert load_as_pandas(url, access_mode="dir", storage_options=options).equals(
        load_as_pandas(url)
    )
    assert load_as_polars(url, access_mode="dir", storage_options=options).equals(
        load_as_polars(url)
    )


def test_auto_chooses_dir_where_offered(
    profile: Path, options: dict[str, str], dir_server: RunningServer
) -> None:
    with SharingClient(profile, access_mode="auto", storage_options=options) as client:
        (table,) = [t for t in client.list_all_tables() if t.name == "plain"]
        assert table.access is not None and table.access.modes == ("url", "dir")
        handle = client.table(table)
        before = vend_count(dir_server, "plain")
        scan = handle.snapshot(columns=["number"])
        assert isinstance(scan, DirectoryScan) and handle.access_mode() == "dir"
        assert scan.to_arrow().column_names == ["number"]
        assert vend_count(dir_server, "plain") == before + 1
    with SharingClient(profile) as client:  # url is the default
        assert isinstance(client.table("s.sc.plain").snapshot(), TableScan)


def test_auto_falls_back_to_url_when_a_location_is_refused(
    profile: Path, options: dict[str, str]
) -> None:
    """The auxiliary location's STS endpoint is a closed port: the server answers 500 (the
    client does not retry here, as each attempt waits for the server's STS retries)."""
    once = RetryPolicy(max_attempts=1)
    expected = load_as_arrow(f"{profile}#s.sc.broken")
    with SharingClient(profile, access_mode="auto", storage_options=options, retry=once) as client:
        handle = client.table("s.sc.broken")
        scan = handle.snapshot()
        assert isinstance(scan, TableScan) and handle.access_mode() == "url"
        assert scan.to_arrow().equals(expected)
    with (
        SharingClient(profile, access_mode="dir", storage_options=options, retry=once) as client,
        pytest.raises(SharingError) as refused,
    ):
        client.table("s.sc.broken").snapshot()
    assert refused.value.status == 500
    assert "could not be issued" in refused.value.message


def test_a_read_outliving_its_credentials_renews_them(
    profile: Path, options: dict[str, str], dir_server: RunningServer
) -> None:
    """A renewal margin longer than the credentials' life (the server vends for at least
    900 s) makes every storage call find its credential about to lapse."""
    expected = load_as_arrow(f"{profile}#s.sc.parted")
    before = vend_count(dir_server, "parted")
    with SharingClient(
        profile,
        access_mode="dir",
        storage_options=options,
        renew_margin=timedelta(hours=13),
    ) as client:
        handle = client.table("s.sc.parted")
        got = handle.snapshot().to_arrow()
        directory = handle.directory()
        assert directory is not None
        renewals = directory.sources[0].renewals
    assert got.equals(expected)
    files = 6
    assert renewals >= files  # the listing, each commit and each data file asked again
    assert vend_count(dir_server, "parted") == before + 1 + renewals


def test_the_endpoint_and_region_come_from_the_server(
    profile: Path, dir_server: RunningServer, s3_emulator: S3Emulator
) -> None:
    """The recipient names no storage options: the credentials answer says where moto is
    (an S3-compatible endpoint) and the bucket's region, and the read goes there."""
    with SharingClient(profile) as client:
        answer = client.rest.post_json(
            "/shares/s/schemas/sc/tables/plain/temporary-table-credentials", {}
        )
    told = json.loads(answer)["credentials"]
    assert told["endpoint"] == s3_emulator.endpoint
    assert told["region"] == s3_emulator.options["aws_region"]
    expected = load_as_arrow(f"{profile}#s.sc.plain")
    assert load_as_arrow(f"{profile}#s.sc.plain", access_mode="dir").equals(expected)
    wrong = {"aws_endpoint": f"http://127.0.0.1:{free_port()}"}
    with pytest.raises(StorageError):  # the recipient's own options win over the server's
        load_as_arrow(f"{profile}#s.sc.plain", access_mode="dir", storage_options=wrong)


def test_the_profile_names_the_access_mode(
    dir_server: RunningServer, tmp_path: Path, options: dict[str, str]
) -> None:
    dir_profile = write_dir_profile(tmp_path / "dir.share", dir_server, accessMode="dir")
    before = vend_count(dir_server, "parted")
    by_dir = load_as_arrow(f"{dir_profile}#s.sc.parted")
    assert vend_count(dir_server, "parted") == before + 1
    assert by_dir.equals(load_as_arrow(f"{dir_profile}#s.sc.parted", access_mode="url"))
    assert vend_count(dir_server, "parted") == before + 1  # the call's mode wins
    with SharingClient(dir_profile, storage_options=options) as client:
        assert isinstance(client.table("s.sc.parted").snapshot(), DirectoryScan)
