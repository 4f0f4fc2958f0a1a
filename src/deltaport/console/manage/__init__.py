"""The console's management pages on a catalog server: shares, schemas and tables
(``share_pages``, with the partition filter checked as typed by ``filter_check`` and who
reads each table from ``readers``) and recipients (``recipient_pages``, with their
one-time credentials from ``issued``). Every change goes through the provider service
(:class:`~deltaport.catalog.provider.service.ProviderService`, the admin API's too)
and is audited as an admin action of the signed-in admin token (``changes``); ``forms``
reads and checks the forms. May use ``admin/``, ``catalog/``, ``observe/`` and the
console's rendering and sessions."""
