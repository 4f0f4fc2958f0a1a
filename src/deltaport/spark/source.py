"""The ``deltaSharing`` Python data source: the entry point Spark instantiates with the
options of each ``spark.read`` / ``spark.readStream``."""

from __future__ import annotations

from functools import cached_property

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader
from pyspark.sql.types import StructType

from deltaport.spark.base.options import SharingOptions, parse_options
from deltaport.spark.base.types import spark_schema
from deltaport.spark.reading.batch import batch_reader
from deltaport.spark.reading.scans import read_schema
from deltaport.spark.streaming.stream import StreamReader

FORMAT_NAME = "deltaSharing"


class DeltaSharingDataSource(DataSource):
    """Reads tables shared over the Delta Sharing protocol, as batches or streams."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    @cached_property
    def sharing_options(self) -> SharingOptions:
        return parse_options(dict(self.options))

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        return read_schema(self.sharing_options)

    def schema(self) -> StructType:
        return spark_schema(self.arrow_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        return batch_reader(self.sharing_options, self._checked_schema(schema))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return StreamReader(self.sharing_options, self._checked_schema(schema))

    def _checked_schema(self, schema: StructType) -> pa.Schema:
        """The Arrow schema to produce; a schema the user gave must match the table's."""
        if spark_schema(self.arrow_schema) != schema:
            raise ValueError(
                "the schema given to the deltaSharing reader differs from the shared "
                f"table's schema: given {schema.simpleString()}, "
                f"table {spark_schema(self.arrow_schema).simpleString()}"
            )
        return self.arrow_schema
