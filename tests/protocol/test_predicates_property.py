"""Property: file skipping never drops a file that holds a matching row (the tables and
predicates are made by ``tests/predicate_tables.py``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from deltaport.protocol.predicates import evaluate_rows, file_mask
from predicate_tables import (
    COLUMN_TYPES,
    PARTITIONS,
    files_table,
    random_file,
    random_predicate,
    row_owners,
    rows_table,
)


@pytest.mark.parametrize("chunk", range(8))
def test_file_mask_never_drops_a_matching_file(chunk: int) -> None:
    rng = random.Random(chunk)
    dropped = 0
    for _ in range(25):
        files = [random_file(rng) for _ in range(6)]
        file_table = files_table(rng, files)
        all_rows = rows_table(files)
        owners = row_owners(files)
        for _ in range(10):
            predicate = random_predicate(rng)
            mask = np.asarray(file_mask(predicate, file_table, COLUMN_TYPES, PARTITIONS))
            assert len(mask) == len(files)
            matches = np.asarray(evaluate_rows(predicate, all_rows), dtype=bool)
            matching_files = set(owners[matches].tolist())
            missed = [i for i in matching_files if not mask[i]]
            assert not missed, (
                predicate,
                [files[i] for i in missed],
                file_table.take(missed).to_pylist(),
            )
            dropped += int((~mask).sum())
    assert dropped > 150
