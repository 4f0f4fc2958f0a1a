"""Delta snapshots as Iceberg tables: schema and stable field ids, statistics as column
metrics, content-addressed Avro manifests, Puffin deletion vectors and the table metadata
JSON, written once per version where the table's files are."""
