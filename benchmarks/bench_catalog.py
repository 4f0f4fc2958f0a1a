"""Request rates of a server on a catalog of 10,000 recipients and 1,000 shares, against the
YAML single-token server on the same table, measured in turn in one run.

Builds one small local table (10 files), a YAML configuration sharing it with one bearer
token, and a SQLite catalog with 1,000 shares (each holding the table) and 10,000
recipients (each granted one share, with a ``region`` property), then measures
``GET /shares`` and ``POST .../query`` requests per second on each server (as
``bench_server.py`` measures them), alternating the two servers over ``ROUNDS`` rounds
and printing the medians and their ratio (catalog / YAML; target at least 0.8).

Run: ``uv run python benchmarks/bench_catalog.py`` (about two minutes).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from bench_server import deltaport_serving, free_port, requests_per_second
from deltalake import write_deltalake

from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog

RECIPIENTS = 10_000
SHARES = 1_000
ROUNDS = 3
YAML_TOKEN = "bench-yaml-token"


def build(tmp: Path) -> tuple[Path, Path, str]:
    table = tmp / "table"
    for i in range(10):
        rows = pa.table({"id": list(range(i * 100, i * 100 + 100)), "region": ["eu"] * 100})
        write_deltalake(str(table), rows, mode="append")
    yaml_config = tmp / "yaml.json"
    yaml_config.write_text(
        json.dumps(
            {
                "authorization": {"bearerToken": YAML_TOKEN},
                "shares": [
                    {
                        "name": "share0",
                        "schemas": [
                            {"name": "s", "tables": [{"name": "t", "location": str(table)}]}
                        ],
                    }
                ],
            }
        )
    )
    url = f"sqlite:///{tmp}/catalog.db"
    started = time.perf_counter()
    store = SqlCatalog(url)
    for i in range(SHARES):
        store.create_share(f"share{i}")
        store.add_table(f"share{i}", "s", "t", TableSpec(str(table)))
    token = ""
    for i in range(RECIPIENTS):
        issued = store.create_recipient(f"r{i}", {"region": "eu"})
        store.grant(f"share{i % SHARES}", f"r{i}")
        if i == 0:
            token = issued.token
    print(
        f"catalog of {SHARES} shares and {RECIPIENTS} recipients built in "
        f"{time.perf_counter() - started:.1f} s"
    )
    catalog_config = tmp / "catalog.json"
    catalog_config.write_text(json.dumps({"catalog": url}))
    return yaml_config, catalog_config, token


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="deltaport-bench-") as folder:
        tmp = Path(folder)
        yaml_config, catalog_config, token = build(tmp)
        query = "/delta-sharing/shares/share0/schemas/s/tables/t/query"
        results: dict[tuple[str, str], list[float]] = {}
        for _ in range(ROUNDS):
            for kind, config, bearer in (
                ("yaml", yaml_config, YAML_TOKEN),
                ("catalog", catalog_config, token),
            ):
                port = free_port()
                with deltaport_serving(config, port):
                    shares = requests_per_second(port, "/delta-sharing/shares", bearer)
                    answers = requests_per_second(port, query, bearer, b"{}")
                results.setdefault((kind, "/shares"), []).append(shares)
                results.setdefault((kind, "/query"), []).append(answers)
        for route in ("/shares", "/query"):
            yaml_rate = statistics.median(results[("yaml", route)])
            catalog_rate = statistics.median(results[("catalog", route)])
            ratio = catalog_rate / yaml_rate
            verdict = "met" if ratio >= 0.8 else "MISSED"
            print(
                f"{route}: catalog {catalog_rate:,.0f} req/s, YAML {yaml_rate:,.0f} req/s, "
                f"ratio {ratio:.2f} (target >= 0.8: {verdict})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
