"""One resolver for "this shared table, for this recipient, at this version": the grant, the
location, the history and ``startVersion`` rules, the partition filter bound to the
recipient, the snapshot -- or one typed refusal, which each surface (the sharing API,
the Iceberg catalog, the console, the diff service) maps to its own error shape. Uses
``catalog``, ``delta`` and below; knows no HTTP."""

from deltaport.sharing.refusals import RefusalKind, TableRefusal
from deltaport.sharing.resolver import ProviderLookup, TableHistory, TableRead, TableResolver
from deltaport.sharing.rules import SharingRules, VersionAsk

__all__ = [
    "ProviderLookup",
    "RefusalKind",
    "SharingRules",
    "TableHistory",
    "TableRead",
    "TableRefusal",
    "TableResolver",
    "VersionAsk",
]
