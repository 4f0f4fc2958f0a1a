"""The catalog's database: one connection with its SQL dialect (``connection``), the schema
applied one migration at a time (``migrations``), and the change log its triggers write
(``change_log``)."""
