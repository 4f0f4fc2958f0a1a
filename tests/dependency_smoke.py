"""The smoke suite run by ``tests/test_dependency_floors.py`` inside a virtual environment
holding other versions of deltaport's dependencies than the lock's (the lowest ones
pyproject.toml declares, or the ones the official client pins). Only deltaport's runtime
dependencies are there: no pytest, no test helpers but ``waiting.py`` (the standard library
only, found beside this script), so it is a plain script.

``python dependency_smoke.py CORPUS WORKDIR``: replays corpus logs with the CLI, serves
corpus tables with ``deltaport serve`` and reads them with deltaport's client (and the
official client when it is installed), comparing every read with the corpus's expected
results (read with pyarrow's parquet reader, not deltaport's)."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from waiting import wait_until

TOKEN = "dependency-smoke-token-5b1e"
# (corpus table, versions with an expected result): a first commit only, appends over
# versions, partitions, a checkpoint
TABLES = {
    "dat__basic_append": ("latest", "v0", "v1"),
    "dat__basic_partitioned": ("latest",),
    "dat__with_checkpoint": ("latest",),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def expected(corpus: Path, name: str, version: str) -> pa.Table:
    return pq.read_table(corpus / "tables" / name / "expected" / version / "table_content.parquet")


def same_rows(got: pa.Table, want: pa.Table, what: str) -> None:
    got = got.select(want.column_names)
    keys = [(c, "ascending") for c in want.column_names]
    rows = got.sort_by(keys).to_pylist()
    wanted = want.sort_by(keys).to_pylist()
    if rows != wanted:
        raise SystemExit(f"{what}: {len(rows)} rows read, not the {len(wanted)} expected")


def deltaport_bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def replay_logs(corpus: Path) -> None:
    """``deltaport table show`` replays each log from its first commit (where pyarrow 23.0.1
    used to crash the process)."""
    for name in TABLES:
        shown = subprocess.run(
            [deltaport_bin("deltaport"), "table", "show", str(corpus / "tables" / name / "delta")],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if shown.returncode != 0:
            raise SystemExit(f"table show {name}: exit {shown.returncode}\n{shown.stderr}")


def serve(corpus: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = {
        "version": 1,
        "authorization": {"bearerToken": TOKEN},
        "signingKey": "dependency-smoke-signing-key",
        "shares": [
            {
                "name": "corpus",
                "schemas": [
                    {
                        "name": "dat",
                        "tables": [
                            {
                                "name": name,
                                "location": str(corpus / "tables" / name / "delta"),
                                "historyShared": True,
                            }
                            for name in TABLES
                        ],
                    }
                ],
            }
        ],
    }
    (workdir / "server.yaml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen(
        [
            *(deltaport_bin("deltaport"), "serve", "--config", str(workdir / "server.yaml")),
            *("--host", "127.0.0.1", "--port", str(port)),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def listening() -> bool:
        if process.poll() is not None:
            raise SystemExit(f"the server exited {process.returncode}:\n" + server_log(workdir))
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True

    wait_until(listening, 60, "the server to listen", 0.2, ignore=(OSError,))
    return process, f"http://127.0.0.1:{port}/delta-sharing"


def server_log(workdir: Path) -> str:
    return (workdir / "server.log").read_text(errors="replace")


def read_served(corpus: Path, workdir: Path, endpoint: str) -> None:
    import deltaport.client as dc

    profile = workdir / "profile.share"
    credentials = {"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN}
    profile.write_text(json.dumps(credentials))
    official = importlib.util.find_spec("delta_sharing") is not None
    for name, versions in TABLES.items():
        url = f"{profile}#corpus.dat.{name}"
        for version in versions:
            number = None if version == "latest" else int(version[1:])
            same_rows(
                dc.load_as_arrow(url, version=number),
                expected(corpus, name, version),
                f"{name} {version}",
            )
        if official:
            import delta_sharing

            frame = delta_sharing.load_as_pandas(url)
            want = expected(corpus, name, "latest")
            if len(frame) != want.num_rows or list(frame.columns) != want.column_names:
                raise SystemExit(f"{name}: the official client read {frame.shape}")


def main() -> None:
    corpus, workdir = Path(sys.argv[1]), Path(sys.argv[2])
    replay_logs(corpus)
    process, endpoint = serve(corpus, workdir)
    try:
        read_served(corpus, workdir, endpoint)
    finally:
        process.terminate()
        process.wait(30)
    if process.returncode not in (0, -15):
        raise SystemExit(f"the server ended with {process.returncode}:\n" + server_log(workdir))
    print(f"smoke: pyarrow {pa.__version__}, {len(TABLES)} tables read")


if __name__ == "__main__":
    main()
