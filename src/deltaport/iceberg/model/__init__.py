"""The Iceberg wire contracts as msgspec Structs: the table metadata (``metadata``) and the
REST catalog's request and response bodies (``catalog``), declared once for the code that
builds them and for the OpenAPI document."""
