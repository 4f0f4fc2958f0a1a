"""A bounded schemathesis run against every OpenAPI document a real server serves
(``api_fuzz``), each request sent where the document's own ``servers`` say: no 5xx, no
answer outside its documented status, content type and schema, no hang.
``benchmarks/fuzz_api.py`` runs the long one."""

from __future__ import annotations

from pathlib import Path

import httpx

from api_fuzz import CHECKS, FuzzReport, fuzz_server, run_fuzz
from deltaport.catalog.tokens import TOKEN_ENDPOINT_PATH

CASES_PER_OPERATION = 3
"""About 1,900 cases in all (2 cores: about a minute)."""


def test_the_documented_apis_answer_every_case_as_documented(tmp_path: Path) -> None:
    report = FuzzReport()
    with fuzz_server(tmp_path) as server:
        documents = {n: httpx.get(url).json() for n, url in server.documents().items()}
        assert TOKEN_ENDPOINT_PATH in documents["sharing"]["paths"]  # fuzzed with the rest
        assert "/v1/config" in documents["iceberg"]["paths"]
        assert "/livez" in documents["root"]["paths"]
        assert "/api/2.1/unity-catalog/shares" in documents["admin"]["paths"]
        for document in documents.values():  # only the top's servers: no per-path server
            assert not [p for p, item in document["paths"].items() if "servers" in item]
        for target in server.targets():
            run_fuzz(target, CASES_PER_OPERATION, report)
    assert report.total >= 500, report.lines()
    assert not report.failures, "\n".join(report.failures[:20])
    for check in [*CHECKS, "no_hang"]:
        assert report.passed[check] == report.total, check
    assert set(report.cases) == {t.name for t in server.targets()}
    # the cases reach past authentication and past unknown names
    assert report.statuses[200] >= 50 and report.statuses[404] >= 50, report.statuses
    assert report.successes["iceberg"] >= 20, report.lines()  # the catalog's too
    assert report.successes["sharing root"] >= 2, report.lines()  # the probes
