"""The catalog read a page at a time, for the provider's console and the provider API.

``listings``: a page of shares or recipients with what each row counts, one share with its
tables and recipients, one recipient with its grants and credentials, one shared table.
``by_name``: shares and recipients after a name key (the provider API's keyset pages), each
recipient with its live credentials. Each a few statements over the catalog's keys and
indexes, never the whole catalog. Uses the rest of ``catalog/``; nothing in ``catalog/``
outside this room uses it."""
