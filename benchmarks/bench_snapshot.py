"""Snapshot load speed against deltalake on a checkpointed table of 100,000 add files.

Builds a log-only table (a classic checkpoint at version 10 written with pyarrow in the
protocol's checkpoint schema, then three JSON commits), times a cold snapshot load with
deltaport and ``deltalake.DeltaTable(path).get_add_actions()`` in the same run, then one
incremental update after one more commit. Run: ``uv run python benchmarks/bench_snapshot.py``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import deltalake
from checkpointed_log import CHECKPOINT_VERSION, write_checkpoint, write_commit

from deltaport.delta import DeltaTable

N_FILES = 100_000


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) if runs < 3 else statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "table"
        log = root / "_delta_log"
        log.mkdir(parents=True)
        write_checkpoint(log, N_FILES, "bench")
        for version in range(CHECKPOINT_VERSION + 1, CHECKPOINT_VERSION + 4):
            write_commit(log, version, N_FILES)
        expected = N_FILES + 3 * 10 - 3

        ours = DeltaTable(str(root)).snapshot()
        theirs = deltalake.DeltaTable(str(root)).get_add_actions()
        assert ours.num_files == expected == theirs.num_rows, (ours.num_files, theirs.num_rows)

        cold = best_of(5, lambda: DeltaTable(str(root)).snapshot())
        peer = best_of(5, lambda: deltalake.DeltaTable(str(root)).get_add_actions())
        print(
            f"cold snapshot, {expected} files: deltaport {cold * 1000:.0f} ms, "
            f"deltalake {peer * 1000:.0f} ms, ratio {cold / peer:.2f}x (target <= 1.5x)"
        )

        table = DeltaTable(str(root))
        table.snapshot()
        updates = []
        for version in range(CHECKPOINT_VERSION + 4, CHECKPOINT_VERSION + 9):
            write_commit(log, version, N_FILES)
            start = time.perf_counter()
            updated = table.snapshot()
            updates.append(time.perf_counter() - start)
            assert updated.version == version
        cold_updated = DeltaTable(str(root)).snapshot()
        assert updated.num_files == cold_updated.num_files == expected + 5 * 9
        incremental = statistics.median(updates)
        print(
            f"incremental update after one commit (median of 5): {incremental * 1000:.1f} ms "
            f"(target < 50 ms)"
        )
        print(f"num_records: {updated.num_records} ({N_FILES // 1000}k files)")


if __name__ == "__main__":
    main()
