"""Damaged logs: every case really damages a copy of a corpus log, and its outcome is
pinned: a DeltaError of a known kind with a one-line message naming what is wrong (never
KeyError/TypeError from inside), or, where the damage lies in a file the reader does not
need, exactly what the undamaged copy reads."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import deltalake
import pytest

from corpus import corpus_table
from deltaport.delta import DeltaError, DeltaTable

SOURCES = ["drs__simple_table", "kdefaults__basic-with-checkpoint", "golden__v2-checkpoint-json"]
DV_SOURCE = "kdefaults__basic-dv-no-checkpoint"
"""The sources hold no deletion vector: the deletion-vector edit damages this table."""

TARGETED: dict[str, tuple[list[tuple[str, str]], str]] = {
    # name: (text replacements, what the error must name)
    "format": ([('"format":{', '"format":"parquet","x":{')], "$.format"),
    "minReaderVersion": ([('"minReaderVersion":1', '"minReaderVersion":"1"')], "minReaderVersion"),
    "size": ([('"size":', '"size":"many","was":')], "$.add.size"),
    "partitionValues": (
        [('"partitionValues":{}', '"partitionValues":[]')],
        "$.add.partitionValues",
    ),
    "path": ([('"path":"', '"path":null,"p":"')], ".path`"),
    "deletionVector": ([('"deletionVector":', '"deletionVector":7,"dv":')], "$.add.deletionVector"),
    "configuration": (
        [
            ('"configuration":{}', '"configuration":{"k":{"nested":1}}'),
            ('"configuration":{"', '"configuration":{"k":{"nested":1},"'),
        ],
        "$.configuration",
    ),
    "commitInfo": ([('{"commitInfo":', '["commitInfo",')], "got `array`"),
}

TARGETED_CASES = [
    (name, edit)
    for edit in TARGETED
    for name in ([DV_SOURCE] if edit == "deletionVector" else SOURCES)
]

CLEAN = "reads as the undamaged copy"
EMPTY_COMMIT = "an emptied commit reads as a version without actions, as deltalake reads it"
RANDOM_OUTCOMES = {
    # (source, seed): the error's kind, CLEAN or EMPTY_COMMIT
    ("drs__simple_table", 0): "LogCorruptError",
    ("drs__simple_table", 1): "LogCorruptError",
    ("drs__simple_table", 2): CLEAN,  # an uncommitted file under _delta_log/.tmp
    ("drs__simple_table", 3): "LogCorruptError",
    ("drs__simple_table", 4): "LogCorruptError",
    ("drs__simple_table", 5): "LogCorruptError",
    ("drs__simple_table", 6): "LogCorruptError",
    ("drs__simple_table", 7): EMPTY_COMMIT,
    ("drs__simple_table", 8): "LogCorruptError",
    ("drs__simple_table", 9): "LogCorruptError",
    ("drs__simple_table", 10): "LogCorruptError",
    ("drs__simple_table", 11): EMPTY_COMMIT,
    ("kdefaults__basic-with-checkpoint", 0): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 1): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 2): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 3): EMPTY_COMMIT,
    ("kdefaults__basic-with-checkpoint", 4): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 5): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 6): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 7): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 8): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 9): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 10): "LogCorruptError",
    ("kdefaults__basic-with-checkpoint", 11): EMPTY_COMMIT,
    ("golden__v2-checkpoint-json", 0): "LogCorruptError",
    (
        "golden__v2-checkpoint-json",
        1,
    ): "UnsupportedFeatureError",  # a flipped byte renamed the v2Checkpoint feature
    ("golden__v2-checkpoint-json", 2): "LogCorruptError",
    (
        "golden__v2-checkpoint-json",
        3,
    ): CLEAN,  # commit 1 emptied, but the v2 checkpoint at 2 covers it
    ("golden__v2-checkpoint-json", 4): "LogCorruptError",
    ("golden__v2-checkpoint-json", 5): CLEAN,  # _last_checkpoint is only a hint
    ("golden__v2-checkpoint-json", 6): "LogCorruptError",
    ("golden__v2-checkpoint-json", 7): "LogCorruptError",
    ("golden__v2-checkpoint-json", 8): "LogCorruptError",
    ("golden__v2-checkpoint-json", 9): "LogCorruptError",
    ("golden__v2-checkpoint-json", 10): CLEAN,  # _last_checkpoint is only a hint
    ("golden__v2-checkpoint-json", 11): EMPTY_COMMIT,
}


def _copy_log(name: str, root: Path) -> list[Path]:
    shutil.copytree(corpus_table(name).path / "_delta_log", root / "_delta_log")
    return sorted(p for p in (root / "_delta_log").rglob("*") if p.is_file())


def _outcome(root: Path) -> str:
    """What reading the table gives: its snapshot, history and change feed summarised,
    or the error's kind and message."""
    try:
        table = DeltaTable(str(root))
        snap = table.snapshot()
        paths = sorted(snap.files.column("path").to_pylist())
        history = [entry.version for entry in table.history()]
        changes = table.changes(table.listing().earliest_version or 0)
    except DeltaError as exc:
        return f"{type(exc).__name__}: {exc}"
    return f"v{snap.version} {snap.num_records} rows {paths} history {history} " + (
        f"changes {changes.files.num_rows}"
    )


def _clean_outcome(name: str, tmp_path: Path) -> str:
    _copy_log(name, tmp_path / "clean")
    return _outcome(tmp_path / "clean")


@pytest.mark.parametrize(("name", "edit"), TARGETED_CASES)
def test_targeted_damage(name: str, edit: str, tmp_path: Path) -> None:
    root = tmp_path / "damaged"
    edited = 0
    for path in _copy_log(name, root):
        if path.suffix == ".json":
            text = path.read_text()
            damaged = text
            for old, new in TARGETED[edit][0]:
                damaged = damaged.replace(old, new)
            edited += damaged != text
            path.write_text(damaged)
    assert edited, "the edit found nothing to damage"
    outcome = _outcome(root)
    assert outcome.startswith("LogCorruptError: malformed"), outcome
    assert TARGETED[edit][1] in outcome and "\n" not in outcome


def _damage(victim: Path, action: int, rng: random.Random) -> None:
    data = bytearray(victim.read_bytes())
    assert data, f"{victim.name} is empty already"
    if action == 0:
        victim.write_bytes(bytes(data[: rng.randrange(len(data))]))  # strictly shorter
    elif action == 1:
        for at in rng.sample(range(len(data)), min(3, len(data))):
            data[at] ^= rng.randrange(1, 256)  # a non-zero mask: the byte changes
        victim.write_bytes(bytes(data))
    elif action == 2:
        victim.unlink()
    else:
        victim.write_bytes(b"")


@pytest.mark.parametrize(("name", "seed"), sorted(RANDOM_OUTCOMES))
def test_random_damage(name: str, seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    root = tmp_path / "damaged"
    files = _copy_log(name, root)
    victim = rng.choice([p for p in files if not p.name.endswith(".crc")])
    _damage(victim, seed % 4, rng)
    outcome = _outcome(root)
    expected = RANDOM_OUTCOMES[(name, seed)]
    if expected == CLEAN:
        assert outcome == _clean_outcome(name, tmp_path)
    elif expected == EMPTY_COMMIT:
        assert victim.name.endswith(".json") and outcome.startswith("v"), outcome
        assert outcome != _clean_outcome(name, tmp_path)
        ours = DeltaTable(str(root)).snapshot().files.column("path").to_pylist()
        theirs = deltalake.DeltaTable(str(root)).file_uris()
        assert sorted(ours) == sorted(u.removeprefix(f"{root}/") for u in theirs)
    else:
        assert outcome.startswith(f"{expected}: "), f"{victim.name}: {outcome}"
        assert "\n" not in outcome
