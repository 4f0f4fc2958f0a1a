"""Delta file actions -> Arrow: read data files as the table's logical rows.

Partition values are added, column-mapped names mapped to logical ones, rows deleted by
deletion vectors dropped, types cast to the table schema, and change-data-feed columns
added. Everything streams record batches, one row group at a time. Each file's own
encoding of the columns (``FileEncoding``: its types before the cast) can travel beside
its batches (``open_data_file``, ``read_encoded_files``).
"""

from deltaport.read.casting import cast_leaf
from deltaport.read.data_file import (
    DEFAULT_BATCH_SIZE,
    ChangeInfo,
    FileRows,
    RowSelection,
    Source,
    iter_file_batches,
    open_data_file,
    read_data_file,
)
from deltaport.read.deletion_vectors import (
    DeletionVectorError,
    RowIndexes,
    decode_bitmap,
    decode_inline,
    decode_stored,
    load_deletion_vector,
    stored_range,
)
from deltaport.read.file_encoding import EncodedBatch, FileEncoding
from deltaport.read.files import read_encoded_files, read_files
from deltaport.read.partition_values import parse_partition_values, serialised_values
from deltaport.read.plan import CDF_FIELDS, ReadPlan, table_arrow_schema
from deltaport.read.scan import end_metadata, read_change_data, scan_snapshot

__all__ = [
    "CDF_FIELDS",
    "DEFAULT_BATCH_SIZE",
    "ChangeInfo",
    "DeletionVectorError",
    "EncodedBatch",
    "FileEncoding",
    "FileRows",
    "ReadPlan",
    "RowIndexes",
    "RowSelection",
    "Source",
    "cast_leaf",
    "decode_bitmap",
    "decode_inline",
    "decode_stored",
    "end_metadata",
    "iter_file_batches",
    "load_deletion_vector",
    "open_data_file",
    "parse_partition_values",
    "read_change_data",
    "read_data_file",
    "read_encoded_files",
    "read_files",
    "scan_snapshot",
    "serialised_values",
    "stored_range",
    "table_arrow_schema",
]
