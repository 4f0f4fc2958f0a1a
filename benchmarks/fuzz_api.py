"""The long schemathesis run against every OpenAPI document a real server on 127.0.0.1 serves.

The same server, documents, targets and checks as the bounded run in the test command
(``tests/api_fuzz.py``, ``tests/test_api_fuzz.py``), with more cases: every operation gets
``--per-operation`` schema-valid cases, as many schema-invalid ones and as many naming
things that exist, for each target (sharing API with a recipient's token, with an OAuth
client's credentials and with none; the sharing listener's root document; the Iceberg
catalog's document with the recipient's token and with none; the admin listener's with the
admin token and with none), each request sent where the document's ``servers`` say.
The default, 25, makes about 15,000 cases. Prints the cases per target, per check how
many passed and failed, the statuses answered and the failures (each with a curl command
that repeats it, credentials filtered); exits 1 on any failure.

Run: ``uv run python benchmarks/fuzz_api.py [--per-operation 25]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from api_fuzz import FuzzReport, fuzz_server, run_fuzz


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-operation", type=int, default=25)
    args = parser.parse_args()
    report = FuzzReport()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, fuzz_server(Path(tmp)) as server:
        for target in server.targets():
            run_fuzz(target, args.per_operation, report)
            print(f"{target.name}: {report.cases[target.name]} cases", flush=True)
    print(f"\n{time.monotonic() - started:.0f} s")
    print("\n".join(report.lines()))
    for failure in report.failures:
        print(failure)
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
