"""The recipient's command-line actions, as functions the CLI wires to subcommands:
``shares``, ``tables``, ``cat`` and ``download``."""

from __future__ import annotations

import os

import pyarrow.parquet as pq

from deltaport.client.base.models import Table
from deltaport.client.files.progress import ProgressLine
from deltaport.client.files.scan import TableScan
from deltaport.client.sharing_client import SharingClient
from deltaport.protocol.profile import split_table_url
from deltaport.text.terminal import one_line


def shares(profile: str | os.PathLike[str]) -> str:
    """The names of the shares the profile can read, one per line (a name the server
    sent with a line break or another control character shows it escaped)."""
    with SharingClient(profile) as client:
        return "\n".join(one_line(share.name) for share in client.list_shares())


def tables(profile: str | os.PathLike[str], share: str | None = None) -> str:
    """``share.schema.table`` of every table (of ``share``, or of all shares), one per line."""
    with SharingClient(profile) as client:
        return "\n".join(one_line(table.full_name) for table in client.list_all_tables(share))


def _handle_parts(url: str) -> tuple[str, Table]:
    profile, share, schema, name = split_table_url(url)
    return profile, Table(name, share, schema)


def cat(url: str, limit: int | None = None, version: int | None = None) -> str:
    """The rows of a table (at ``version``, up to ``limit`` rows) as aligned text."""
    profile, table = _handle_parts(url)
    with SharingClient(profile) as client:
        frame = client.table(table).snapshot(version=version, limit=limit).to_pandas()
    return str(frame.to_string(index=False))


def download(url: str, output: str | os.PathLike[str], progress: bool = False) -> int:
    """Write the table to one parquet file, streaming; returns the number of rows.
    The file appears only when complete (written beside it, then renamed). With
    ``progress`` a progress line is drawn on stderr."""
    profile, table = _handle_parts(url)
    with SharingClient(profile, access_mode="url") as client:  # progress counts url files
        scan = client.table(table).snapshot()
        assert isinstance(scan, TableScan)
        plan = scan.plan()
        line = ProgressLine(len(plan.files), sum(f.size for f in plan.files)) if progress else None
        rows = 0
        target = os.fspath(output)
        partial = f"{target}.partial"
        try:
            with pq.ParquetWriter(partial, scan.schema) as writer:
                for batch in scan.to_batches(on_file=line.file_done if line else None):
                    writer.write_batch(batch)
                    rows += batch.num_rows
            os.replace(partial, target)
        finally:
            if line is not None:
                line.close()
            if os.path.exists(partial):
                os.remove(partial)
    return rows
