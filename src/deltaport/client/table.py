"""A handle on one shared table: its version, metadata and protocol, and scans of its
snapshots and change data."""

from __future__ import annotations

from collections.abc import Sequence

from deltaport.client.errors import SharingError
from deltaport.client.models import ScanPlan, Table
from deltaport.client.planning import (
    DEFAULT_MAX_FILES,
    capabilities,
    changes_query,
    fetch_plan,
    refresh_plan,
    response_formats,
    snapshot_query,
    versions_query,
)
from deltaport.client.responses import parse_page
from deltaport.client.rest import CAPABILITIES_HEADER, RestClient, table_path
from deltaport.client.scan import DEFAULT_CONCURRENCY, TableScan
from deltaport.delta.model import Metadata, Protocol


class TableHandle:
    def __init__(
        self, rest: RestClient, table: Table, *, concurrency: int = DEFAULT_CONCURRENCY
    ) -> None:
        self._rest = rest
        self.table = table
        self.concurrency = concurrency

    def __repr__(self) -> str:
        return f"TableHandle({self.table.full_name!r})"

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
    ) -> TableScan:
        """A scan of the table at ``version`` / ``timestamp`` (default: latest);
        ``predicate`` is a JSON predicate, sent as a hint and applied to the rows."""
        query = snapshot_query(
            self.table,
            version=version,
            timestamp=timestamp,
            json_predicate_hints=predicate,
            limit_hint=limit,
            use_delta_format=use_delta_format,
            max_files=max_files,
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
    ) -> TableScan:
        """A scan of the change data feed between two versions or timestamps (inclusive)."""
        query = changes_query(
            self.table,
            starting_version=starting_version,
            ending_version=ending_version,
            starting_timestamp=starting_timestamp,
            ending_timestamp=ending_timestamp,
            use_delta_format=use_delta_format,
        )
        return TableScan(self._rest, query, columns=columns, concurrency=self.concurrency)

    def files_since(
        self,
        starting_version: int,
        ending_version: int | None = None,
        *,
        use_delta_format: bool | None = None,
        max_files: int | None = DEFAULT_MAX_FILES,
    ) -> ScanPlan:
        """The files each version from ``starting_version`` to ``ending_version``
        (default: the latest) added or removed, in commit order: a plan whose files are
        ``add`` and ``remove`` actions carrying their ``version`` and ``timestamp``, read
        as table rows (not change data). ``metadata_changes`` holds the metadata in
        effect at ``starting_version``, then each later version that changed it. The
        table must be shared with history. Pass the plan to :meth:`refresh_plan` for
        fresh URLs."""
        query = versions_query(
            self.table,
            starting_version=starting_version,
            ending_version=ending_version,
            use_delta_format=use_delta_format,
            max_files=max_files,
        )
        return fetch_plan(self._rest, query)

    def refresh_plan(self, plan: ScanPlan) -> ScanPlan:
        """``plan`` with fresh URLs for the same files (same version)."""
        return refresh_plan(self._rest, plan)
