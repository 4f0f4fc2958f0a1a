"""Azure through Azurite (which checks SAS signatures): reads, SAS URLs, SAS tokens."""

from __future__ import annotations

from datetime import timedelta

import httpx
import obstore
import pytest
from cloudtables import check_reads, check_signed_downloads, data_files, tamper, write_table

from deltaport.storage import Storage
from emulators import AzuriteEmulator


@pytest.fixture(scope="module")
def azure_table(azurite: AzuriteEmulator) -> tuple[Storage, int]:
    azurite.create_container("tables")
    rows = write_table("az://tables/sales", azurite.deltalake_options)
    return Storage("az://tables/sales", azurite.options), rows


def test_reads(azure_table):
    storage, _ = azure_table
    check_reads(storage)


def test_account_key_sas_urls_download_and_are_checked(azure_table):
    storage, rows = azure_table
    urls = check_signed_downloads(storage, rows)
    for url in urls:
        assert httpx.get(tamper(url, "sig")).status_code == 403
        assert httpx.get(url.replace("sp=r", "sp=rw")).status_code == 403
    expired = storage.sign(data_files(storage)[:1], timedelta(seconds=-120))[0]
    assert httpx.get(expired).status_code == 403


def test_abfss_spelling_takes_the_account_from_the_uri(azure_table, azurite):
    _, rows = azure_table
    options = {k: v for k, v in azurite.options.items() if k != "azure_storage_account_name"}
    storage = Storage(f"abfss://tables@{azurite.account}.dfs.core.windows.net/sales", options)
    check_reads(storage)
    check_signed_downloads(storage, rows)


def test_configured_sas_token(azure_table, azurite):
    _, rows = azure_table
    options = {
        "azure_storage_account_name": azurite.account,
        "azure_storage_sas_key": azurite.account_sas("rl"),
        "azure_endpoint": azurite.endpoint,
        "azure_allow_http": "true",
    }
    storage = Storage("az://tables/sales", options)
    check_reads(storage)
    check_signed_downloads(storage, rows)
    list_only = Storage(
        "az://tables/sales", {**options, "azure_storage_sas_key": azurite.account_sas("l")}
    )
    url = list_only.sign(data_files(storage)[:1], timedelta(minutes=1))[0]
    assert httpx.get(url).status_code == 403


RAW_NAMES = ["raw/a #?b.bin", "raw/pct%41%.bin", "raw/😈 a&b+c=d.bin", "raw/col:on;semi,comma.bin"]


def test_raw_special_names_download(azure_table):
    storage, _ = azure_table
    locations = [storage.resolve(name) for name in RAW_NAMES]
    for i, location in enumerate(locations):
        obstore.put(storage.object_store(location), location.key, f"content {i}".encode())
    urls = storage.sign(locations, timedelta(minutes=1))
    for i, url in enumerate(urls):
        response = httpx.get(url)
        assert response.status_code == 200, url
        assert response.content == f"content {i}".encode()
        assert httpx.get(tamper(url, "sig")).status_code == 403
