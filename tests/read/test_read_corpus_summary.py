"""Which corpus tables deltaport cannot read, and why (the list the README quotes).

Every table that is not invalid on purpose and whose data files are present is scanned
in full; the tables that fail must be exactly the ones listed here.
"""

from __future__ import annotations

import pytest

from corpus import corpus_table, corpus_tables
from deltaport.delta.errors import DeltaError
from deltaport.delta.table import DeltaTable
from deltaport.read import scan_snapshot
from deltaport.storage import StorageError

_SHREDDED = "shredded variants (reader feature variantShredding-preview) are not supported"
_DV_PREFIX = (
    "upstream test artefact: the DV files carry Spark's test prefix 'test%dv%prefix-' "
    "that the 'u' descriptor does not encode, so no reader finds them"
)

KNOWN_UNREADABLE = {
    "kdefaults__spark-shredded-variant-preview-delta": _SHREDDED,
    "spark__variant-stats-nested-no-checkpoint": _SHREDDED,
    "spark__variant-stats-no-checkpoint": _SHREDDED,
    "spark__variant-stats-state-reconstruction": _SHREDDED,
    "spark__variant-stats-with-struct-no-checkpoint": _SHREDDED,
    "krs__table-with-geo": "reader feature geospatial is not supported",
    "spark__table-with-dv-small": _DV_PREFIX,
    "spark__table-with-dv-large": _DV_PREFIX,
    "spark__partitioned-table-with-dv-large": _DV_PREFIX,
    "spark__table-with-dv-special-char": (
        "its absolute ('p') DV path is a template ({{FOLDER_WITH_SPECIAL_CHAR}}); it reads "
        "once the placeholder is filled in (see test_read_deletion_vectors)"
    ),
}

READABLE_CANDIDATES = [t.name for t in corpus_tables() if not t.negative and not t.data_missing]


def _scan_error(name: str) -> Exception | None:
    delta = DeltaTable(str(corpus_table(name).path))
    try:
        for _ in scan_snapshot(delta.snapshot(), delta.storage):
            pass
    except (DeltaError, StorageError, ValueError) as exc:
        return exc
    return None


@pytest.mark.parametrize("name", READABLE_CANDIDATES)
def test_table_reads_unless_known(name: str) -> None:
    error = _scan_error(name)
    if name in KNOWN_UNREADABLE:
        assert error is not None, f"{name} now reads: remove it from KNOWN_UNREADABLE"
    else:
        assert error is None, f"{name}: {type(error).__name__}: {error}"


def test_known_unreadable_are_candidates() -> None:
    assert set(KNOWN_UNREADABLE) <= set(READABLE_CANDIDATES)
    assert len(READABLE_CANDIDATES) - len(KNOWN_UNREADABLE) >= 200


@pytest.mark.parametrize("name", [t.name for t in corpus_tables() if t.negative])
def test_invalid_tables_are_refused(name: str) -> None:
    assert _scan_error(name) is not None
