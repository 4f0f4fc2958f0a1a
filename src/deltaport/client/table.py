"""A handle on one shared table: its version, metadata and protocol, and scans of its
snapshots and change data. It also answers to the official client's table API
(``snapshot(jsonPredicateHints=...)``, ``to_record_batches``, ``to_record_batch_reader``,
``to_spark``, and the table's own ``to_pandas`` ... of its latest snapshot)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deltaport.client.access import AccessMode, choose_mode, fetch_table_access
from deltaport.client.base.errors import SharingError
from deltaport.client.base.models import ScanPlan, Table, TableAccess, TableInfo
from deltaport.client.dir_access.dir_scan import DirectoryScan
from deltaport.client.dir_access.directory import DirectoryTable, RenewalSettings
from deltaport.client.files.scan import DEFAULT_CONCURRENCY, TableScan
from deltaport.client.files.spark_load import SparkLoad
from deltaport.client.remote.async_query import remember_size, wants_async
from deltaport.client.remote.planning import (
    DEFAULT_MAX_FILES,
    capabilities,
    changes_query,
    fetch_plan,
    refresh_plan,
    response_formats,
    snapshot_query,
    versions_query,
)
from deltaport.client.remote.responses import parse_page
from deltaport.client.remote.rest import CAPABILITIES_HEADER, RestClient, table_path
from deltaport.delta.model import Metadata, Protocol
from deltaport.protocol.credentials import DIR, URL
from deltaport.protocol.predicates import parse_json_predicate
from deltaport.storage import StorageError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from pyspark.sql import DataFrame

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AccessSettings:
    """How the caller allows a table to be read.

    ``storage_options`` are obstore options for directory mode that the credentials
    answer does not carry: for S3-compatible stores ``aws_endpoint`` (and
    ``aws_allow_http``, ``aws_virtual_hosted_style_request``), for buckets outside
    us-east-1 ``aws_region``, an ``azure_endpoint`` for Azure-compatible stores."""

    mode: AccessMode = "url"
    storage_options: Mapping[str, str] = field(default_factory=dict)
    renewal: RenewalSettings = field(default_factory=RenewalSettings)


class TableHandle:
    def __init__(
        self,
        rest: RestClient,
        table: Table,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        access: AccessSettings | None = None,
    ) -> None:
        self._rest = rest
        self.table = table
        self.concurrency = concurrency
        self.settings = access or AccessSettings()
        self._directory: DirectoryTable | None = None
        self._mode: str | None = None

    def access(self) -> TableAccess:
        """What the table offers: from the listing that named it, else from ``/metadata``."""
        if self.table.access is None:
            self.table = dataclasses.replace(
                self.table, access=fetch_table_access(self._rest, self.table)
            )
        assert self.table.access is not None
        return self.table.access

    def access_mode(self) -> str:
        """``url`` or ``dir``: how this handle reads. ``auto`` picks ``dir`` when the table
        offers it in a cloud this client reads, and falls back to ``url`` (when offered)
        if the credentials of a location are refused or its directory cannot be read."""
        if self._mode is None:
            self._mode = URL
            if self.settings.mode != URL:
                self._mode = choose_mode(self.settings.mode, self.access(), self.table.full_name)
            if self._mode == DIR:
                self._directory = self._open_directory()
                self._mode = DIR if self._directory is not None else URL
        return self._mode

    def directory(self) -> DirectoryTable | None:
        """The table opened for directory mode; None when it is read in ``url`` mode."""
        return self._directory if self.access_mode() == DIR else None

    def _open_directory(self) -> DirectoryTable | None:
        access = self.access()
        try:
            return DirectoryTable.open(
                self._rest,
                self.table,
                access,
                dict(self.settings.storage_options),
                self.settings.renewal,
            )
        except (SharingError, StorageError) as exc:
            if self.settings.mode == DIR or URL not in access.modes:
                raise
            log.warning(
                "reading %s in url mode: its directory cannot be read (%s)",
                self.table.full_name,
                exc,
            )
            return None

    def __repr__(self) -> str:
        return f"TableHandle({self.table.full_name!r})"

    def info(self) -> TableInfo:
        """The table's identifiers and formats (OpenSharing's Get Table; servers that only
        speak Delta Sharing answer 404)."""
        body = self._rest.get_json(table_path(self.table))
        if not isinstance(body, dict):
            raise SharingError(f"Get Table answered {type(body).__name__}, not a JSON object")
        return TableInfo.from_json(body)

    def version(self, starting_timestamp: str | None = None) -> int:
        """The latest version, or the first one at or after ``starting_timestamp``."""
        return self._rest.table_version(self.table, starting_timestamp)

    def _metadata_page(self, use_delta_format: bool | None) -> tuple[Protocol, Metadata]:
        formats = response_formats(use_delta_format)
        answer = self._rest.lines(
            "GET",
            table_path(self.table) + "/metadata",
            headers={CAPABILITIES_HEADER: capabilities(formats)},
        )
        page = parse_page(answer, formats, cdf=False)
        if page.protocol is None or page.metadata is None:
            raise SharingError("the metadata answer lacks its protocol or metaData line")
        remember_size(self._rest.profile.endpoint, self.table, page.num_files)
        return page.protocol, page.metadata

    def metadata(self, use_delta_format: bool | None = True) -> Metadata:
        return self._metadata_page(use_delta_format)[1]

    def protocol(self, use_delta_format: bool | None = True) -> Protocol:
        """The table's Delta protocol (the delta response format carries the real one)."""
        return self._metadata_page(use_delta_format)[0]

    def snapshot(
        self,
        version: int | None = None,
        timestamp: str | None = None,
        predicate: str | None = None,
        limit: int | None = None,
        use_delta_format: bool | None = None,
        *,
        columns: Sequence[str] | None = None,
        max_files: int | None = DEFAULT_MAX_FILES,
        async_query: bool | None = None,
        file_id_hash: str | None = None,
        jsonPredicateHints: str | None = None,
    ) -> TableScan | DirectoryScan:
        """A scan of the table at ``version`` / ``timestamp`` (default: latest);
        ``predicate`` (or, as the official client names it, ``jsonPredicateHints``) is a
        JSON predicate, sent as a hint (or used to skip files in directory mode) and
        applied to the rows. ``async_query``: ask the server to
        prepare the files while the client polls (None: for tables known to hold 100,000
        files or more, from an earlier answer in this process). ``file_id_hash``
        (``parquet`` or ``delta``) asks for file ids in that ``fileidhash`` scheme (url mode
        only); a server that does not echo it is an error."""
        if jsonPredicateHints is not None:
            if predicate is not None:
                raise ValueError("give either predicate or jsonPredicateHints, not both")
            predicate = jsonPredicateHints
        spark = self._spark_load(
            {"versionAsOf": version, "timestampAsOf": timestamp},
            use_delta_format,
            limit=limit,
            columns=columns,
            predicate=predicate,
        )
        return _with_spark(
            self._snapshot_scan(
                version,
                timestamp,
                predicate,
                limit,
                use_delta_format,
                columns=columns,
                max_files=max_files,
                async_query=async_query,
                file_id_hash=file_id_hash,
            ),
            spark,
        )

    def _snapshot_scan(
        self,
        version: int | None,
        timestamp: str | None,
        predicate: str | None,
        limit: int | None,
        use_delta_format: bool | None,
        *,
        columns: Sequence[str] | None,
        max_files: int | None,
        async_query: bool | None,
        file_id_hash: str | None,
    ) -> TableScan | DirectoryScan:
        directory = self.directory()
        if directory is not None:
            expr = parse_json_predicate(predicate) if predicate else None
            return DirectoryScan(
                lambda: directory.snapshot_read(version, timestamp, expr, limit),
                directory.storage,
                predicate=expr,
                limit=limit,
                columns=columns,
                concurrency=self.concurrency,
            )
        query = snapshot_query(
            self.table,
            version=version,
            timestamp=timestamp,
            json_predicate_hints=predicate,
            limit_hint=limit,
            use_delta_format=use_delta_format,
            max_files=max_files,
            async_query=wants_async(self._rest.profile.endpoint, self.table, async_query),
            file_id_hash=file_id_hash,
        )
        return TableScan(
            self._rest,
            query,
            predicate=predicate,
            limit=limit,
            columns=columns,
            concurrency=self.concurrency,
        )

    def changes(
        self,
        starting_version: int | None = None,
        ending_version: int | None = None,
        starting_timestamp: str | None = None,
        ending_timestamp: str | None = None,
        use_delta_format: bool | None = None,
        *,
        columns: Sequence[str] | None = None,
        file_id_hash: str | None = None,
    ) -> TableScan | DirectoryScan:
        """A scan of the change data feed between two versions or timestamps (inclusive);
        ``file_id_hash`` as for ``snapshot()``."""
        spark = self._spark_load(
            {
                "readChangeFeed": "true",
                "startingVersion": starting_version,
                "endingVersion": ending_version,
                "startingTimestamp": starting_timestamp,
                "endingTimestamp": ending_timestamp,
            },
            use_delta_format,
            columns=columns,
        )
        return _with_spark(
            self._changes_scan(
                starting_version,
                ending_version,
                starting_timestamp,
                ending_timestamp,
                use_delta_format,
                columns=columns,
                file_id_hash=file_id_hash,
            ),
            spark,
        )

    def _changes_scan(
        self,
        starting_version: int | None,
        ending_version: int | None,
        starting_timestamp: str | None,
        ending_timestamp: str | None,
        use_delta_format: bool | None,
        *,
        columns: Sequence[str] | None,
        file_id_hash: str | None,
    ) -> TableScan | DirectoryScan:
        directory = self.directory()
        if directory is not None:
            return DirectoryScan(
                lambda: directory.changes_read(
                    starting_version, ending_version, starting_timestamp, ending_timestamp
                ),
                directory.storage,
                columns=columns,
                concurrency=self.concurrency,
            )
        query = changes_query(
            self.table,
            starting_version=starting_version,
            ending_version=ending_version,
            starting_timestamp=starting_timestamp,
            ending_timestamp=ending_timestamp,
            use_delta_format=use_delta_format,
            file_id_hash=file_id_hash,
        )
        return TableScan(self._rest, query, columns=columns, concurrency=self.concurrency)

    def _spark_load(
        self,
        options: Mapping[str, object],
        use_delta_format: bool | None,
        *,
        limit: int | None = None,
        columns: Sequence[str] | None = None,
        predicate: str | None = None,
    ) -> SparkLoad:
        given = {key: str(value) for key, value in options.items() if value is not None}
        if use_delta_format is not None:
            given["responseFormat"] = "delta" if use_delta_format else "parquet"
        given["accessMode"] = self.settings.mode
        given.update({f"storage.{k}": v for k, v in self.settings.storage_options.items()})
        return SparkLoad(
            self._rest.profile,
            self.table.full_name,
            given,
            limit=limit,
            columns=columns,
            predicate=predicate,
        )

    def to_pandas(self, convert_in_batches: bool = False) -> pd.DataFrame:
        """The latest snapshot (the official table API's shortcut for
        ``snapshot().to_pandas()``)."""
        return self.snapshot().to_pandas(convert_in_batches)

    def to_arrow(self) -> pa.Table:
        return self.snapshot().to_arrow()

    def to_record_batches(self) -> Iterator[pa.RecordBatch]:
        return self.snapshot().to_record_batches()

    def to_record_batch_reader(self) -> pa.RecordBatchReader:
        return self.snapshot().to_record_batch_reader()

    def to_spark(self) -> DataFrame:
        return self.snapshot().to_spark()

    def files_since(
        self,
        starting_version: int,
        ending_version: int | None = None,
        *,
        use_delta_format: bool | None = None,
        max_files: int | None = DEFAULT_MAX_FILES,
        file_id_hash: str | None = None,
    ) -> ScanPlan:
        """The files each version from ``starting_version`` to ``ending_version``
        (default: the latest) added or removed, in commit order: a plan whose files are
        ``add`` and ``remove`` actions carrying their ``version`` and ``timestamp``, read
        as table rows (not change data). ``metadata_changes`` holds the metadata in
        effect at ``starting_version``, then each later version that changed it;
        ``protocol_changes`` each later version that changed the protocol (delta format;
        a protocol this client cannot read is an error). The table must be shared with
        history; ``file_id_hash`` as for ``snapshot()``. Pass the plan to
        [`refresh_plan`][deltaport.client.SharingClient.refresh_plan] for fresh URLs."""
        query = versions_query(
            self.table,
            starting_version=starting_version,
            ending_version=ending_version,
            use_delta_format=use_delta_format,
            max_files=max_files,
            file_id_hash=file_id_hash,
        )
        return fetch_plan(self._rest, query)

    def refresh_plan(self, plan: ScanPlan) -> ScanPlan:
        """``plan`` with fresh URLs for the same files (same version)."""
        return refresh_plan(self._rest, plan)


def _with_spark(scan: TableScan | DirectoryScan, spark: SparkLoad) -> TableScan | DirectoryScan:
    scan.spark_load = spark
    return scan
