"""Who a request is and what it may see: bearer tokens of a YAML configuration or the live
catalog, one ``CatalogSource`` answering the catalog question. Uses ``config`` and ``catalog``."""
