"""S3 through moto in server mode: deltalake writes, Storage reads and signs.

moto does not check request signatures, so the moto tests prove that signed URLs address
the right objects path-style on a custom endpoint. That S3 would accept the signature is
checked offline: botocore's own signer signs the same GET (same key, credentials, region,
time and expiry) and must produce the same URL, escaping and signature included.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from urllib.parse import parse_qs, parse_qsl, urlsplit

import botocore.auth
import botocore.session
import httpx
import obstore
import pytest
from botocore.config import Config
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


SIGNED_KEYS = [
    "p=plain/part-0.parquet",
    "p=%F0%9F%98%88%20a%26b/part-1.parquet",
    "test%file%prefix-part-2.parquet",
    "a b+c=d&e/😈 #?.parquet",
    "col:on;semi,comma~t!*'()[]@$.parquet",
]
KEYS = {
    "aws_access_key_id": "AKIDEXAMPLE",
    "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    "aws_session_token": "session/token+with=padding==",
    "aws_region": "eu-west-1",
}


def _botocore_url(
    key: str, endpoint: str | None, when: datetime, monkeypatch: pytest.MonkeyPatch
) -> str:
    """The GET URL botocore pre-signs for ``key`` at ``when``, path-style as obstore signs."""
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda remove_tzinfo=True: when)
    client = botocore.session.get_session().create_client(
        "s3",
        region_name=KEYS["aws_region"],
        endpoint_url=endpoint,
        aws_access_key_id=KEYS["aws_access_key_id"],
        aws_secret_access_key=KEYS["aws_secret_access_key"],
        aws_session_token=KEYS["aws_session_token"],
        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
    )
    url: str = client.generate_presigned_url(
        "get_object", Params={"Bucket": "my-bucket", "Key": key}, ExpiresIn=600
    )
    return url


def _parts(url: str) -> tuple[str, str, str, list[tuple[str, str]]]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc, parts.path, sorted(parse_qsl(parts.query))


@pytest.mark.parametrize("endpoint", [None, "http://127.0.0.1:9000"], ids=["aws", "custom"])
def test_sigv4_urls_equal_botocores_for_awkward_keys(
    endpoint: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = dict(KEYS)
    if endpoint is not None:
        options |= {"aws_endpoint": endpoint, "aws_allow_http": "true"}
    storage = Storage("s3://my-bucket/sales", options)
    urls = storage.sign([storage.resolve(key) for key in SIGNED_KEYS], timedelta(minutes=10))
    for key, url in zip(SIGNED_KEYS, urls, strict=True):
        stamp = parse_qs(urlsplit(url).query)["X-Amz-Date"][0]
        when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ")
        expected = _botocore_url(f"sales/{key}", endpoint, when, monkeypatch)
        assert _parts(url) == _parts(expected), key
    if endpoint is None:
        assert urlsplit(urls[0]).netloc == "s3.eu-west-1.amazonaws.com"


def test_sigv4_signature_names_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: a neighbouring key or another time signs differently."""
    storage = Storage("s3://my-bucket/sales", KEYS)
    (url,) = storage.sign([storage.resolve("a b.parquet")], timedelta(minutes=10))
    stamp = parse_qs(urlsplit(url).query)["X-Amz-Date"][0]
    when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ")
    signature = parse_qs(urlsplit(url).query)["X-Amz-Signature"]
    for key, at in (("sales/a+b.parquet", when), ("sales/a b.parquet", when + timedelta(0, 1))):
        other = parse_qs(urlsplit(_botocore_url(key, None, at, monkeypatch)).query)
        assert other["X-Amz-Signature"] != signature


def test_delete_removes_objects_and_forgives_missing_ones(s3_emulator, tmp_path):
    s3_emulator.create_bucket("doomed")
    storage = Storage("s3://doomed/t/", s3_emulator.options)
    objects = [storage.resolve(f"f{i}") for i in range(3)] + [storage.resolve("keep")]
    for location in objects:
        storage.write(location, b"x")
    local = Storage(str(tmp_path))
    local.write(local.resolve("a"), b"x")
    storage.delete([*objects[:3], storage.resolve("never-written")])
    local.delete([local.resolve("a"), local.resolve("b")])
    assert [o.name for o in storage.list_dir("")] == ["keep"]
    assert list(tmp_path.iterdir()) == []
