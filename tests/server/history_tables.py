"""Helpers for the version-range, change-data, paging and end-of-stream tests: tables with a
history written by deltalake, a server sharing them, and readers of its answers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

from deltaport.server.paging.tokens import TokenSigner
from emulators import official_call, official_client_results
from sharing_server import TOKEN, set_commit_times, table_entry

ENABLE_CDF = {"delta.enableChangeDataFeed": "true"}
DELTA_CAPS = {"delta-sharing-capabilities": "responseformat=delta"}
END_CAPS = {"delta-sharing-capabilities": "responseformat=parquet;includeendstreamaction=true"}
TABLES = "/shares/hist/schemas/s/tables"
SIGNING_KEY = "history-tests-key"


def rows(ids: range | list[int], tag: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "part": pa.array([f"p{i % 2}" for i in ids]),
            "value": pa.array([f"{tag}{i}" for i in ids]),
        }
    )


def write_cdf_table(path: Path) -> Path:
    """v0 insert, v1 append, v2 update, v3 delete, v4 merge; CDF on from the start;
    commit v at 2024-01-01 + v hours."""
    write_deltalake(path, rows(range(10), "a"), partition_by=["part"], configuration=ENABLE_CDF)
    write_deltalake(path, rows(range(10, 15), "b"), mode="append")
    DeltaTable(path).update(updates={"value": "'updated'"}, predicate="id < 3")
    DeltaTable(path).delete("id = 5")
    (
        DeltaTable(path)
        .merge(rows([1, 20, 21], "m"), "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    set_commit_times(path, {v: v for v in range(5)})
    return path


def write_late_cdf_table(path: Path) -> Path:
    """CDF switched on at v2 (v0 and v1 without it), an update at v3."""
    write_deltalake(path, rows(range(4), "a"))
    write_deltalake(path, rows(range(4, 8), "b"), mode="append")
    DeltaTable(path).alter.set_table_properties(ENABLE_CDF)
    DeltaTable(path).update(updates={"value": "'updated'"}, predicate="id = 1")
    set_commit_times(path, {v: v for v in range(4)})
    return path


def write_evolving_table(path: Path) -> Path:
    """v0 insert, v1 append, v2 append adding column ``extra`` (a metaData change),
    v3 delete (adds and removes), v4 optimize (dataChange=false only)."""
    write_deltalake(path, rows(range(4), "a"), configuration=ENABLE_CDF)
    write_deltalake(path, rows(range(4, 8), "b"), mode="append")
    wider = rows(range(8, 10), "c").append_column("extra", pa.array([1.5, 2.5]))
    write_deltalake(path, wider, mode="append", schema_mode="merge")
    DeltaTable(path).delete("id = 2")
    DeltaTable(path).optimize.compact()
    set_commit_times(path, {v: v for v in range(5)})
    return path


def write_appends(path: Path, commits: int) -> Path:
    """``commits`` commits of one 3-row file each (CDF on), then a delete of ids 0..5."""
    write_deltalake(path, rows(range(3), "c0"), configuration=ENABLE_CDF)
    for c in range(1, commits):
        write_deltalake(path, rows(range(c * 3, c * 3 + 3), f"c{c}"), mode="append")
    DeltaTable(path).delete("id < 6")
    return path


def history_config(tables: dict[str, Path], **table_extra: dict[str, Any]) -> dict[str, Any]:
    """A server config sharing ``tables`` with history under share ``hist``, schema ``s``."""
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": SIGNING_KEY,
        "shares": [
            {
                "name": "hist",
                "schemas": [
                    {
                        "name": "s",
                        "tables": [
                            table_entry(
                                name,
                                path,
                                **({"historyShared": True} | table_extra.get(name, {})),
                            )
                            for name, path in tables.items()
                        ],
                    }
                ],
            }
        ],
    }


def expired_copy(token: str) -> str:
    """``token`` re-signed with the test servers' key, with an expiry in the past."""
    server_key = hashlib.sha256(SIGNING_KEY.encode()).digest()
    signer = TokenSigner(hmac.digest(server_key, b"table-tokens", "sha256"))
    body = token.partition(".")[0]
    raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    purpose, _, payload = msgspec.msgpack.decode(raw)
    return signer.seal(purpose, payload, int(time.time()) - 60)


def lines_of(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines() if line]


def changes(client: httpx.Client, table: str, **params: Any) -> httpx.Response:
    headers = params.pop("headers", None)
    return client.get(f"{TABLES}/{table}/changes", params=params, headers=headers)


def query(client: httpx.Client, table: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
    return client.post(f"{TABLES}/{table}/query", json=body, **kw)


def row_key(record: dict[str, Any]) -> str:
    """A row as comparable text (values as strings: partition values arrive as text)."""
    return json.dumps({k: None if v is None else str(v) for k, v in sorted(record.items())})


def change_rows(client: httpx.Client, lines: list[dict[str, Any]]) -> list[str]:
    """Every row (with ``_change_type`` and ``_commit_version``) a parquet-format answer of
    ``/changes`` describes, sorted; files are fetched through their URLs."""
    out: list[str] = []
    for line in lines:
        kind = next(iter(line))
        if kind not in ("add", "remove", "cdf"):
            continue
        file = line[kind]
        response = client.get(file["url"])
        assert response.status_code == 200
        data = pq.read_table(io.BytesIO(response.content))
        for record in data.to_pylist():
            record.update(file["partitionValues"])
            if kind != "cdf":
                record["_change_type"] = "insert" if kind == "add" else "delete"
            record["_commit_version"] = file["version"]
            out.append(row_key(record))
    return sorted(out)


def with_all_columns(keys: list[str]) -> list[str]:
    """Rows written before a column was added lack it: give them the column as null."""
    records = [json.loads(k) for k in keys]
    columns = {c for r in records for c in r}
    return sorted(row_key({c: None for c in columns} | r) for r in records)


def deltalake_change_rows(path: Path, start: int, end: int | None = None) -> list[str]:
    reader = DeltaTable(path).load_cdf(starting_version=start, ending_version=end)
    table = pa.table(reader.read_all()).drop_columns(["_commit_timestamp"])
    return sorted(row_key(r) for r in table.to_pylist())


def write_token_profile(directory: Path, endpoint: str) -> Path:
    profile = {"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN}
    path = directory / "history.share"
    path.write_text(json.dumps(profile))
    return path


def run_official_client(python: Path, jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each job's answer from the official client: ``{"rows": [row keys, sorted]}`` or
    ``{"error": traceback}`` (all jobs in one process: importing the client is slow)."""
    calls = []
    for job in jobs:
        url = f"{job['profile']}#hist.s.{job['table']}"
        delta = job["format"] == "delta"
        if job["kind"] == "changes":
            calls.append(
                official_call(
                    "load_table_changes_as_pandas",
                    url,
                    starting_version=job["start"],
                    ending_version=job.get("end"),
                    use_delta_format=delta,
                )
            )
        else:
            version = job.get("version")
            calls.append(
                official_call("load_as_pandas", url, version=version, use_delta_format=delta)
            )
    return [
        {"rows": sorted(row_key(_without_commit_time(r)) for r in out["rows"])}
        if "rows" in out
        else out
        for out in official_client_results(python, calls)
    ]


def _without_commit_time(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "_commit_timestamp"}


def write_log_only_table(
    path: Path, n_files: int, outside: int | None, cdf: bool, outside_data: bool = False
) -> Path:
    """One commit adding ``n_files`` files that do not exist (the answer is only URLs); the
    file at index ``outside`` has a deletion vector stored at an absolute path outside the
    table, which the server's local URL signer refuses when it signs that file's line (in
    delta format): a real failure in the middle of a stream. With ``outside_data`` the file's
    own path lies outside instead, which the server finds before answering. With ``cdf`` a
    second commit adds as many files again (same failure position)."""
    log = path / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
    head = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 4}},
        {
            "metaData": {
                "id": "log-only",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": ENABLE_CDF if cdf else {},
                "createdTime": 0,
            }
        },
    ]
    elsewhere = f"file:///{path.parent.as_posix().lstrip('/')}/elsewhere"

    def add(i: int, prefix: str) -> dict[str, object]:
        action: dict[str, object] = {
            "path": f"{prefix}part-{i:06d}.parquet",
            "partitionValues": {},
            "size": 100,
            "modificationTime": 0,
            "dataChange": True,
        }
        if i == outside and outside_data:
            action["path"] = f"{elsewhere}/part-{i:06d}.parquet"
        elif i == outside:
            action["deletionVector"] = {
                "storageType": "p",
                "pathOrInlineDv": f"{elsewhere}/deletion_vector_{i}.bin",
                "offset": 1,
                "sizeInBytes": 40,
                "cardinality": 1,
            }
        return {"add": action}

    adds = [add(i, "") for i in range(n_files)]
    (log / f"{0:020d}.json").write_text("\n".join(json.dumps(a) for a in head + adds) + "\n")
    if cdf:
        more = [add(i, "more-") for i in range(n_files)]
        (log / f"{1:020d}.json").write_text("\n".join(json.dumps(a) for a in more) + "\n")
    return path
