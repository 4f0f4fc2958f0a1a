"""S3 through moto in server mode: deltalake writes, Storage reads and signs.

moto does not check request signatures, so these tests prove that signed URLs address the
right objects path-style on a custom endpoint, not that S3 would accept the signature.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import obstore
import pytest
from cloudtables import check_reads, check_signed_downloads, data_files, write_table

from deltaport.storage import Storage, StorageError, parse_location
from emulators import S3Emulator


@pytest.fixture(scope="module")
def s3_table(s3_emulator: S3Emulator) -> tuple[Storage, int]:
    s3_emulator.create_bucket("tables")
    rows = write_table("s3://tables/sales", s3_emulator.deltalake_options)
    return Storage("s3a://tables/sales/", s3_emulator.options), rows


def test_reads(s3_table):
    storage, _ = s3_table
    check_reads(storage)


def test_signed_urls_download_path_style(s3_table, s3_emulator):
    storage, rows = s3_table
    urls = check_signed_downloads(storage, rows)
    for url in urls:
        assert url.startswith(f"{s3_emulator.endpoint}/tables/sales/")
        query = parse_qs(urlsplit(url).query)
        assert query["X-Amz-Expires"] == ["600"]
        assert "X-Amz-Signature" in query


def test_sign_batches_per_bucket_and_keeps_order(s3_table, s3_emulator):
    storage, _ = s3_table
    s3_emulator.create_bucket("other")
    files = data_files(storage)
    others = [parse_location(f"s3://other/k{i}") for i in range(len(files))]
    mixed = list(itertools.chain.from_iterable(zip(files, others, strict=True)))
    urls = storage.sign(mixed, timedelta(minutes=1))
    for location, url in zip(mixed, urls, strict=True):
        assert urlsplit(url).path.startswith(f"/{location.bucket}/")
    with pytest.raises(StorageError):
        storage.sign([parse_location("/tmp/x")], timedelta(minutes=1))


RAW_NAMES = ["raw/a #?b.bin", "raw/pct%41%.bin", "raw/😈 a&b+c=d.bin", "raw/col:on;semi,comma.bin"]


def test_raw_special_names_download(s3_table):
    storage, _ = s3_table
    locations = [storage.resolve(name) for name in RAW_NAMES]
    for i, location in enumerate(locations):
        obstore.put(storage.object_store(location), location.key, f"content {i}".encode())
    urls = storage.sign(locations, timedelta(minutes=1))
    for i, url in enumerate(urls):
        response = httpx.get(url)
        assert response.status_code == 200, url
        assert response.content == f"content {i}".encode()


def test_holds_anything_sees_a_table_and_not_a_missing_prefix(s3_table, s3_emulator, tmp_path):
    storage, _ = s3_table
    assert storage.holds_anything()
    assert not Storage("s3://tables/sal", s3_emulator.options).holds_anything()
    assert not Storage("s3://tables/no-such-table", s3_emulator.options).holds_anything()
    assert Storage(str(tmp_path)).holds_anything()
    assert not Storage(str(tmp_path / "missing")).holds_anything()
