"""Damaged logs fail with DeltaError subclasses, never KeyError/TypeError from inside."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from corpus import corpus_table
from deltaport.delta import DeltaError, DeltaTable

SOURCES = ["drs__simple_table", "kdefaults__basic-with-checkpoint", "golden__v2-checkpoint-json"]

TARGETED = [
    ('"format":{', '"format":"parquet","x":{'),
    ('"minReaderVersion":1', '"minReaderVersion":"1"'),
    ('"size":', '"size":"many","was":'),
    ('"partitionValues":{}', '"partitionValues":[]'),
    ('"path":"', '"path":null,"p":"'),
    ('"deletionVector":', '"deletionVector":7,"dv":'),
    ('"configuration":{', '"configuration":{"k":{"nested":1},'),
    ('{"commitInfo":', '["commitInfo",'),
]


def _copy_log(name: str, root: Path) -> list[Path]:
    shutil.copytree(corpus_table(name).path / "_delta_log", root / "_delta_log")
    return sorted(p for p in (root / "_delta_log").rglob("*") if p.is_file())


def _exercise(root: Path) -> None:
    try:
        table = DeltaTable(str(root))
        snap = table.snapshot()
        _ = snap.num_records
        table.history()
        table.changes(table.listing().earliest_version or 0)
    except DeltaError as exc:
        assert str(exc) and "\n" not in str(exc)


@pytest.mark.parametrize("name", SOURCES)
@pytest.mark.parametrize("edit", TARGETED, ids=[e[1][:20] for e in TARGETED])
def test_targeted_damage(name: str, edit: tuple[str, str], tmp_path: Path) -> None:
    for path in _copy_log(name, tmp_path):
        if path.suffix == ".json":
            path.write_text(path.read_text().replace(*edit))
    _exercise(tmp_path)


@pytest.mark.parametrize("name", SOURCES)
@pytest.mark.parametrize("seed", range(12))
def test_random_damage(name: str, seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    files = _copy_log(name, tmp_path)
    victim = rng.choice([p for p in files if not p.name.endswith(".crc")])
    data = bytearray(victim.read_bytes())
    action = seed % 4
    if action == 0:
        victim.write_bytes(bytes(data[: rng.randrange(len(data) + 1)]))
    elif action == 1:
        for _ in range(3):
            data[rng.randrange(len(data))] = rng.randrange(256)
        victim.write_bytes(bytes(data))
    elif action == 2:
        victim.unlink()
    else:
        victim.write_bytes(b"")
    _exercise(tmp_path)
