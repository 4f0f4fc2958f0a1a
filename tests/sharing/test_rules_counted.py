"""The sharing rules run once per question: a query of the table service checks the asked
version once, the resolved version once and evaluates the bound partition filter once
(counted by a rule evaluator handed to the resolver, the service's own code unchanged)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.model import SharedTable
from deltaport.catalog.partition_filter import bind
from deltaport.delta import Snapshot, open_table
from deltaport.delta.model import Metadata
from deltaport.protocol.actions import QueryTableRequest
from deltaport.protocol.capabilities import Capabilities
from deltaport.server.files.signing import TableUrlSigner
from deltaport.server.tables.selection import HintSettings
from deltaport.server.tables.service import TableService
from deltaport.sharing import SharingRules, TableResolver, VersionAsk
from deltaport.storage import parse_location
from deltaport.storage.local_urls import LocalUrlSigner


class CountingRules(SharingRules):
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def check_ask(self, table: SharedTable, ask: VersionAsk) -> datetime | None:
        self.calls["check_ask"] += 1
        return super().check_ask(table, ask)

    def check_version(self, table: SharedTable, version: int, timestamp: str | None) -> None:
        self.calls["check_version"] += 1
        super().check_version(table, version, timestamp)

    def visible(self, table: SharedTable, files: pa.Table, metadata: Metadata) -> pa.Array | None:
        self.calls["visible"] += 1
        return super().visible(table, files, metadata)


@pytest.fixture
def table(tmp_path: Path) -> SharedTable:
    location = tmp_path / "t"
    data = pa.table({"id": list(range(6)), "country": ["nl", "de", "fr"] * 2})
    write_deltalake(location, data, partition_by=["country"])
    write_deltalake(location, data, partition_by=["country"], mode="append")
    return SharedTable(
        "s",
        "sc",
        "t",
        parse_location(str(location)),
        {},
        history_shared=True,
        partition_filter="country = CURRENT_RECIPIENT('country')",
        row_filter=bind("country = CURRENT_RECIPIENT('country')", {"country": "nl"}),
    )


def service_with(rules: SharingRules) -> TableService:
    signer = TableUrlSigner(LocalUrlSigner(b"k" * 32, "http://127.0.0.1:1/files"))
    return TableService(signer, timedelta(hours=1), HintSettings(), TableResolver(rules=rules))


def lines(service: TableService, table: SharedTable, request: QueryTableRequest) -> list[Any]:
    answer = service.query(table, Capabilities(), request)
    return [json.loads(line) for line in b"".join(answer.body).splitlines()]


@pytest.mark.parametrize(
    "request_",
    [QueryTableRequest(), QueryTableRequest(version=1), QueryTableRequest(maxFiles=1)],
    ids=["latest", "version", "paged"],
)
def test_a_query_evaluates_each_rule_once(table: SharedTable, request_: QueryTableRequest) -> None:
    rules = CountingRules()
    answer = lines(service_with(rules), table, request_)
    assert rules.calls == {"check_ask": 1, "check_version": 1, "visible": 1}
    files = [line["file"] for line in answer if "file" in line]
    assert {f["partitionValues"]["country"] for f in files} == {"nl"}
    metadata = next(line["metaData"] for line in answer if "metaData" in line)
    assert metadata["numFiles"] == 2  # the recipient's files only (one per commit)


def test_metadata_evaluates_each_rule_once(table: SharedTable) -> None:
    rules = CountingRules()
    answer = service_with(rules).metadata(table, Capabilities(), version=0)
    body = [json.loads(line) for line in b"".join(answer.body).splitlines()]
    assert rules.calls == {"check_ask": 1, "check_version": 1, "visible": 1}
    assert body[1]["metaData"]["numFiles"] == 1


def test_the_counting_rules_see_a_second_evaluation(table: SharedTable) -> None:
    """The counter is not blind: a second evaluation of the filter is seen."""
    rules = CountingRules()
    snapshot: Snapshot = open_table(table.location.uri).snapshot()
    rules.visible(table, snapshot.files, snapshot.metadata)
    lines(service_with(rules), table, QueryTableRequest())
    assert rules.calls["visible"] == 2
