"""The provider's operations, one way in for every front door (the admin API, the Unity
Catalog-shaped API, the console, the commands): ``service`` (the operations over a
:class:`~deltaport.catalog.interface.Catalog`, with their rules), ``settings`` (what the
serving side applies), ``tables`` (a table checked before it is shared) and ``profiles``
(the profile of a credential just issued). The room uses the rest of ``catalog/``;
nothing else in ``catalog/`` uses it."""
