"""Start-up of the ``deltaport`` command line, against ``python -c pass`` in the same run.

Runs, in turn (A B C A B C ...: a machine whose speed drifts slows all three alike),
``python -c pass``, ``deltaport --version`` and ``deltaport diff`` of a 5-commit corpus
table with itself, ``ROUNDS`` times each as whole processes, and prints the median wall
time of each and each command's median less the bare interpreter's. It then prints the
modules each command imports (``python -X importtime``), the largest first: what a command
costs beyond the interpreter is what it imports.

Bytecode matters more than anything else here: without ``.pyc`` files every start compiles
pandas, numpy and pyarrow's Python modules from source. pip compiles them when it installs;
``uv sync`` does not (unless ``--compile-bytecode``), and with ``PYTHONDONTWRITEBYTECODE=1``
(as in this project's sessions) they are never written. The commands are timed as a pip
install runs them (a bytecode cache in a temporary ``PYTHONPYCACHEPREFIX``, filled by the
warm-up runs), and the diff once more without any bytecode.

Run: ``uv run --frozen python benchmarks/bench_startup.py [ROUNDS]`` (default 15).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CORPUS = Path(os.environ.get("DELTAPORT_CORPUS", Path(__file__).parents[2] / "shared/delta-corpus"))
TABLE = CORPUS / "tables/drs__simple_table/delta"
"""Five commits (versions 0-4)."""
CLI = "from deltaport.cli import main; import sys; sys.exit(main())"
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "deltaport --version": [sys.executable, "-c", CLI, "--version"],
    "deltaport diff (5 commits)": [sys.executable, "-c", CLI, "diff", str(TABLE), str(TABLE)],
}


def environment(cache: str | None) -> dict[str, str]:
    """With ``cache``: bytecode read from and written to it; without: none at all."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    if cache is None:
        return {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": tempfile.mkdtemp()}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return {**env, "PYTHONPYCACHEPREFIX": cache}


def wall(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - started


def top_imports(args: list[str], env: dict[str, str], n: int = 8) -> list[tuple[int, str]]:
    """The ``n`` top-level imports that took longest (cumulative microseconds)."""
    done = subprocess.run(
        [args[0], "-X", "importtime", *args[1:]],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    found: list[tuple[int, str]] = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        if not name.startswith(" ") or name.startswith("  "):
            continue  # only imports made at the top (not inside another module's)
        if cumulative.strip().isdigit():
            found.append((int(cumulative), name.strip()))
    return sorted(found, reverse=True)[:n]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    cached = environment(tempfile.mkdtemp(prefix="pycache-"))
    bare = environment(None)
    no_bytecode = "deltaport diff, no bytecode"
    times: dict[str, list[float]] = {name: [] for name in [*COMMANDS, no_bytecode]}
    for args in COMMANDS.values():
        wall(args, cached)  # warm the file cache and write the bytecode
    for _ in range(rounds):
        for name, args in COMMANDS.items():
            times[name].append(wall(args, cached))
        times[no_bytecode].append(wall(COMMANDS["deltaport diff (5 commits)"], bare))
    base = statistics.median(times["python -c pass"])
    print(f"{rounds} rounds, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(
            f"{name:28} median {median * 1000:7.0f} ms  (min {min(runs) * 1000:.0f}, "
            f"max {max(runs) * 1000:.0f})  beyond the interpreter {(median - base) * 1000:6.0f} ms"
        )
    for name, args in list(COMMANDS.items())[1:]:
        print(f"\n{name}: slowest top-level imports (cumulative ms)")
        for micros, module in top_imports(args, cached):
            print(f"  {micros / 1000:8.1f}  {module}")


if __name__ == "__main__":
    main()
