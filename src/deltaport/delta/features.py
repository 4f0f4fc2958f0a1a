"""Reader protocol gate: refuse tables whose reader features we would misread.

Writer-only features (appendOnly, invariants, domainMetadata, rowTracking, ...) never
change what a reader must do, so only ``minReaderVersion`` and ``readerFeatures`` matter.
"""

from __future__ import annotations

from deltaport.delta.errors import UnsupportedFeatureError
from deltaport.delta.model import Protocol

MAX_READER_VERSION = 3

SUPPORTED_READER_FEATURES = frozenset(
    {
        "columnMapping",
        "deletionVectors",
        "timestampNtz",
        "typeWidening",
        "typeWidening-preview",
        "v2Checkpoint",
        "vacuumProtocolCheck",
        "variantType",
        "variantType-preview",
        # The published log of a catalog-managed table is a valid, possibly stale, prefix
        # of the table's history; deltaport serves that prefix (staged commits are ignored).
        "catalogManaged",
        "catalogOwned-preview",
    }
)
"""Reader features deltaport reads correctly. Not here, and so refused: shredded variants
(``variantShredding-preview``, the read layer cannot reassemble them yet), ``geospatial``
and any name this module does not know."""


def check_readable(protocol: Protocol, version: int) -> None:
    """Raise [`UnsupportedFeatureError`][deltaport.delta.UnsupportedFeatureError] unless deltaport
    can read ``protocol``."""
    if protocol.min_reader_version > MAX_READER_VERSION:
        raise UnsupportedFeatureError(
            f"table version {version} requires reader protocol version "
            f"{protocol.min_reader_version}; deltaport supports up to {MAX_READER_VERSION}"
        )
    if protocol.min_reader_version < MAX_READER_VERSION:
        return
    unsupported = sorted(set(protocol.reader_features or ()) - SUPPORTED_READER_FEATURES)
    if unsupported:
        names = ", ".join(unsupported)
        features = "feature" if len(unsupported) == 1 else "features"
        raise UnsupportedFeatureError(
            f"table version {version} requires unsupported reader {features}: {names}"
        )
