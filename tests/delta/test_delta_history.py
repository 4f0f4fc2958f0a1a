"""history(): commitInfo per version, oldest first, matching deltalake's history."""

from __future__ import annotations

import deltalake
import pytest

from corpus import corpus_table
from deltaport.delta import DeltaTable, VersionNotFoundError


@pytest.mark.parametrize(
    "name", ["drs__simple_table", "kdefaults__basic-with-checkpoint", "drs__cdf-table"]
)
def test_history_matches_deltalake(name: str) -> None:
    path = corpus_table(name).path
    ours = DeltaTable(str(path)).history()
    theirs = sorted(deltalake.DeltaTable(path).history(), key=lambda h: h["version"])
    assert [h.version for h in ours] == [h["version"] for h in theirs]
    assert [h.commit_info.get("operation") for h in ours] == [h.get("operation") for h in theirs]
    assert [h.commit_info.get("timestamp") for h in ours] == [h.get("timestamp") for h in theirs]


def test_history_of_truncated_log_starts_at_oldest_commit() -> None:
    table = DeltaTable(str(corpus_table("drs__checkpoint-cdf-table").path))
    history = table.history()
    assert history[0].version == 3 and history[-1].version == 5
    assert [h.version for h in table.history(4)] == [4, 5]
    with pytest.raises(VersionNotFoundError, match="earliest commit is 3"):
        table.history(1)
