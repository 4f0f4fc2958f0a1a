"""The catalog as a server holds it in memory, and how changes reach it.

``live_catalog`` (:class:`LiveCatalog`: the snapshot requests read, refreshed by a thread of
its own), ``snapshot`` (one generation in memory, built whole or from the one before and
the items changed) and ``reading`` (the rows read: all, or those the change log names).
Uses the rest of ``catalog/`` (the log itself, written by the database in every change's
transaction, is ``catalog/database/change_log``, beside the store that writes it); nothing in
``catalog/`` outside this room uses it."""
