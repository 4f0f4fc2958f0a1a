"""The provider API in Unity Catalog's shape (``/api/2.1/unity-catalog/shares``, recipients,
permissions, rotate-token), beside deltaport's own admin API, over the same provider service
(``catalog.provider.service``). ``listeners`` mounts it.

``errors`` (the ``{"error_code", "message"}`` answers), ``paging`` (``max_results`` and
``page_token``), ``bodies`` (the request bodies), ``objects`` (a ``data_object`` as a shared
table), ``shares`` and ``recipients`` (the routes), ``api`` (them together)."""
