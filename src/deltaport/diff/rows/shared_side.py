"""A row diff side that is a table shared with the caller (``profile#share.schema.table``),
listed and read through its sharing server with deltaport's client.

A sharing server names each file with an id that stays the same for the same file across
versions (the protocol asks it to), so two versions of the same shared table are diffed
like two copies with a common history: files listed in both with the same id, size and
deletion vector hold the same rows and are not read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from deltaport.client import SharingClient, TableScan
from deltaport.client.base.models import ScanPlan
from deltaport.delta.model import Metadata
from deltaport.protocol.profile import split_table_url


def is_shared_table_url(uri: str) -> bool:
    """``profile#share.schema.table`` with an existing profile file."""
    at = uri.rfind("#")
    return at > 0 and Path(uri[:at]).is_file()


@dataclass(frozen=True)
class SharedRowSide:
    """The table at one version as its sharing server lists it; ``files`` are the rows of
    ``plan.files`` to read (``index``), with the ``size``, ``partition_values`` and ``stats``
    a filter can skip files by."""

    uri: str
    client: SharingClient
    table_name: str
    plan: ScanPlan
    files: pa.Table

    @property
    def version(self) -> int:
        return self.plan.version

    @property
    def metadata(self) -> Metadata:
        return self.plan.metadata

    def same_table(self, other: SharedRowSide) -> bool:
        return (
            self.client.profile.endpoint == other.client.profile.endpoint
            and self.table_name.casefold() == other.table_name.casefold()
        )

    def identities(self) -> pa.Array:
        """Id, size and deletion vector of each file of ``files``."""
        texts = []
        for index in self.files.column("index").to_pylist():
            f = self.plan.files[index]
            dv = f.deletion_vector
            shape = "" if dv is None else f"{dv.size_in_bytes}:{dv.cardinality}:{dv.offset}"
            texts.append(f"{f.id}\0{f.size}\0{shape}")
        return pa.array(texts, pa.string())

    def read(self, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """The rows of ``files`` (deletion vectors applied), ``columns`` only."""
        chosen = tuple(self.plan.files[i] for i in self.files.column("index").to_pylist())
        if not chosen:
            return iter(())
        scan = TableScan.of_plan(
            self.client.rest, replace(self.plan, files=chosen), columns=columns
        )
        return scan.to_batches()


def shared_side(uri: str, version: int | None) -> SharedRowSide:
    """The shared table of ``uri`` at ``version`` (default: latest), every file listed."""
    profile, share, schema, table = split_table_url(uri)
    client = SharingClient(profile, access_mode="url")  # file ids are a url-mode listing
    name = f"{share}.{schema}.{table}"
    scan = client.table(name).snapshot(version=version, use_delta_format=True)
    if not isinstance(scan, TableScan):
        raise TypeError("a url-mode client scans with TableScan")
    plan = scan.plan()
    files = pa.table(
        {
            "index": pa.array(range(len(plan.files)), pa.int64()),
            "size": pa.array([f.size for f in plan.files], pa.int64()),
            "partition_values": pa.array(
                [list(f.partition_values.items()) for f in plan.files],
                pa.map_(pa.string(), pa.string()),
            ),
            "stats": pa.array([f.stats for f in plan.files], pa.string()),
        }
    )
    return SharedRowSide(uri, client, name, plan, files)
