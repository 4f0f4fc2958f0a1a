"""The command line imports only what a command needs (its start-up time is measured in
benchmarks/bench_startup.py): ``--version`` no Arrow, web framework or HTTP client, and a
diff of two Delta logs not the Delta Sharing client (nor httpx, which imports its own
command line's click, rich and pygments when they are installed)."""

from __future__ import annotations

import json
import subprocess
import sys

from corpus import corpus_table

PROBE = """
import json, sys
from deltaport.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _imported(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def _packages(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_version_imports_no_arrow_web_framework_or_http_client() -> None:
    imported = _imported("--version")
    assert "deltaport.cli" in imported
    heavy = {"pyarrow", "pandas", "numpy", "starlette", "uvicorn", "httpx", "msgspec", "obstore"}
    assert not heavy & _packages(imported)


def test_a_diff_of_two_delta_logs_does_not_load_the_sharing_client() -> None:
    table = str(corpus_table("drs__simple_table").path)
    imported = _imported("diff", table, table)
    assert "deltaport.diff.history.delta_differ" in imported
    assert not {m for m in imported if m.startswith(("deltaport.client", "deltaport.diff.rows"))}
    assert not {"httpx", "starlette", "rich", "click"} & _packages(imported)
