"""The one memory budget (``snapshotCacheBytes``) holding while more tables are read than
fit, measured against the same reads without a budget in the same run.

``TABLES`` tables of ``FILES`` files each (checkpointed logs, as in ``bench_snapshot.py``)
are read one after the other through the sharing resolver -- the latest snapshot of each,
then of each again, as the sharing API and the Iceberg catalog read them -- in a fresh
process per mode, which reports its resident memory (``VmRSS``) and Arrow's allocated
bytes before the first read (the baseline) and after the last. Without a budget every
table stays open with its snapshot; with a budget of ``BUDGET_TABLES`` tables' worth the
least recently used are dropped. Targets: the budget holds (bytes held <= the budget), the
memory Arrow holds grows by at most about the budget, and resident memory stays flat as
tables are added (without a budget it grows with every table). Measured here (2 cores): 40
tables, a 19 MB budget: resident memory grew 148 MB against 333 MB without one (0.44x; the
rest is the replay's transient memory the allocator keeps), Arrow held 0.82x the budget.

Run: ``uv run python benchmarks/bench_snapshot_budget.py`` (about ten seconds).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from checkpointed_log import write_checkpoint

TABLES = 40
FILES = 20_000
BUDGET_TABLES = 4
ROUNDS = 2


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def build_tables(root: Path) -> list[Path]:
    paths = []
    for i in range(TABLES):
        path = root / f"t{i:02d}"
        write_checkpoint(path / "_delta_log", FILES, f"budget-bench-{i}")
        paths.append(path)
    return paths


def child(limit: int | None, root: Path) -> dict[str, float | int | None]:
    """Read every table ``ROUNDS`` times through a resolver whose budget is ``limit``."""
    from deltaport.catalog.model import SharedTable
    from deltaport.sharing import TableResolver, VersionAsk
    from deltaport.storage import parse_location

    resolver = TableResolver(budget_bytes=limit)
    tables = [
        SharedTable("s", "d", p.name, parse_location(str(p)), {}) for p in sorted(root.iterdir())
    ]
    baseline_rss, baseline_arrow = rss_bytes(), pa.total_allocated_bytes()
    start = time.perf_counter()
    for _ in range(ROUNDS):
        for table in tables:
            resolver.read(table, VersionAsk())
    seconds = time.perf_counter() - start
    return {
        "budget": limit,
        "baseline_rss": baseline_rss,
        "rss": rss_bytes(),
        "arrow_growth": pa.total_allocated_bytes() - baseline_arrow,
        "held": resolver.budget.held_bytes,
        "evictions": resolver.budget.evictions,
        "seconds": round(seconds, 2),
    }


def run_child(limit: int | None, root: Path) -> dict[str, float | int | None]:
    argument = "none" if limit is None else str(limit)
    out = subprocess.run(
        [sys.executable, __file__, "--child", argument, str(root)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float | int | None] = json.loads(out)
    return result


def one_table_bytes(path: Path) -> int:
    from deltaport.delta import DeltaTable

    table = DeltaTable(str(path))
    table.snapshot()
    return table.held_bytes()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build_tables(root)
        per_table = one_table_bytes(root / "t00")
        budget = BUDGET_TABLES * per_table + per_table // 2
        unbounded = run_child(None, root)
        bounded = run_child(budget, root)
    mb = 2**20

    def growth(run: dict[str, float | int | None]) -> float:
        return (float(run["rss"] or 0) - float(run["baseline_rss"] or 0)) / mb

    report = {
        "tables": TABLES,
        "files_per_table": FILES,
        "one_table_mb": round(per_table / mb, 1),
        "budget_mb": round(budget / mb, 1),
        "no_budget_rss_growth_mb": round(growth(unbounded), 1),
        "no_budget_arrow_growth_mb": round(float(unbounded["arrow_growth"] or 0) / mb, 1),
        "budget_rss_growth_mb": round(growth(bounded), 1),
        "budget_arrow_growth_mb": round(float(bounded["arrow_growth"] or 0) / mb, 1),
        "budget_held_mb": round(float(bounded["held"] or 0) / mb, 1),
        "budget_evictions": bounded["evictions"],
        "rss_growth_budget_vs_none": round(growth(bounded) / max(growth(unbounded), 1e-9), 2),
        "arrow_growth_vs_budget": round(float(bounded["arrow_growth"] or 0) / budget, 2),
        "no_budget_seconds": unbounded["seconds"],
        "budget_seconds": bounded["seconds"],
    }
    print(json.dumps(report, indent=2))
    print(
        f"{TABLES} tables of {FILES} files read {ROUNDS} times: resident memory grew "
        f"{report['budget_rss_growth_mb']} MB under a {report['budget_mb']} MB budget against "
        f"{report['no_budget_rss_growth_mb']} MB without one "
        f"({report['rss_growth_budget_vs_none']}x); Arrow holds "
        f"{report['arrow_growth_vs_budget']}x the budget; held {report['budget_held_mb']} MB"
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        limit = None if sys.argv[2] == "none" else int(sys.argv[2])
        print(json.dumps(child(limit, Path(sys.argv[3]))))
    else:
        main()
