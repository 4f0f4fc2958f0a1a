"""The loaders' progress line: drawn on stderr when it is a terminal (a real
pseudo-terminal, in a real subprocess) and the load runs longer than a moment; not when
stderr is piped, nor with ``DELTAPORT_PROGRESS=0`` or ``progress=False``."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from deltalake import DeltaTable

from deltaport.client import RemoteFile
from deltaport.client.files.progress import LOAD_DELAY, ProgressLine
from sharing_proxy import SharingProxy

MB = 1024 * 1024

LOAD = """
import sys
import deltaport

kwargs = {"progress": False} if sys.argv[2] == "off" else {}
loader = getattr(deltaport, sys.argv[3])
frame = loader(sys.argv[1], **kwargs)
print("rows", len(frame))
"""
TABLE = "share1.default.small_files"
SLOW_DOWNLOAD = 0.5
"""Seconds per download: 40 files, 16 at a time, make a load of well over a second."""


@pytest.fixture
def slow_proxy(proxy: SharingProxy) -> Iterator[SharingProxy]:
    proxy.faults.download_delay = SLOW_DOWNLOAD
    yield proxy


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DELTAPORT_PROGRESS"}
    return {**env, **extra}


def _on_terminal(args: list[str], env: dict[str, str]) -> tuple[str, str]:
    """stdout (piped) and what was written to stderr, a pseudo-terminal."""
    main, child = pty.openpty()
    with subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=child, env=env
    ) as proc:
        os.close(child)
        seen = bytearray()
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            seen.extend(chunk)
        out = proc.stdout.read().decode() if proc.stdout else ""
        assert proc.wait(timeout=120) == 0, seen.decode(errors="replace")
    os.close(main)
    return out, seen.decode(errors="replace")


def _rows(client_tables: dict[str, Path]) -> int:
    return int(DeltaTable(str(client_tables["small_files"])).to_pyarrow_table().num_rows)


@pytest.mark.parametrize("loader", ["load_as_pandas", "load_as_arrow"])
def test_a_long_load_draws_its_progress_on_a_terminal(
    slow_proxy: SharingProxy, proxy_profile: Path, client_tables: dict[str, Path], loader: str
) -> None:
    url = f"{proxy_profile}#{TABLE}"
    out, terminal = _on_terminal([sys.executable, "-c", LOAD, url, "auto", loader], _env())
    assert f"rows {_rows(client_tables)}" in out.splitlines()
    assert "\r" in terminal
    assert "40/40 files" in terminal
    assert " MB " in terminal and "rows" in terminal


def test_no_progress_when_stderr_is_piped(
    slow_proxy: SharingProxy, proxy_profile: Path, client_tables: dict[str, Path]
) -> None:
    url = f"{proxy_profile}#{TABLE}"
    done = subprocess.run(
        [sys.executable, "-c", LOAD, url, "auto", "load_as_pandas"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"rows {_rows(client_tables)}" in done.stdout.splitlines()
    assert "files" not in done.stderr


@pytest.mark.parametrize("switch", ["env", "argument"])
def test_progress_turned_off_on_a_terminal(
    slow_proxy: SharingProxy, proxy_profile: Path, client_tables: dict[str, Path], switch: str
) -> None:
    url = f"{proxy_profile}#{TABLE}"
    env = _env(DELTAPORT_PROGRESS="0") if switch == "env" else _env()
    mode = "off" if switch == "argument" else "auto"
    out, terminal = _on_terminal([sys.executable, "-c", LOAD, url, mode, "load_as_pandas"], env)
    assert f"rows {_rows(client_tables)}" in out.splitlines()
    assert "files" not in terminal


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _file(size: int) -> RemoteFile:
    return RemoteFile(url="https://example.invalid/f", id="f", size=size, partition_values={})


def test_a_load_quicker_than_the_delay_draws_nothing() -> None:
    clock, stream = Clock(), io.StringIO()
    line = ProgressLine(2, 2 * MB, stream, delay=LOAD_DELAY, clock=clock)
    clock.now += LOAD_DELAY / 2
    line.file_done(_file(MB), 10)
    line.file_done(_file(MB), 10)
    line.close()
    assert stream.getvalue() == ""


def test_a_load_past_the_delay_draws_files_bytes_and_ends_its_line() -> None:
    clock, stream = Clock(), io.StringIO()
    line = ProgressLine(2, 2 * MB, stream, delay=LOAD_DELAY, clock=clock)
    line.file_done(_file(MB), 10)
    assert stream.getvalue() == ""
    clock.now += LOAD_DELAY + 1
    line.file_done(_file(MB), 10)
    line.close()
    text = stream.getvalue()
    assert "\r2/2 files  2.0/2.0 MB  100.0%  20 rows" in text
    assert text.endswith("\n")
