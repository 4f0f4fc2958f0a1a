"""The admin listener's answer (admin API, provider API, console) to storage it cannot read
names the location and the cause, and nothing the store said (credentials, signed URLs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deltaport.admin.errors import as_sharing_error
from deltaport.storage import Storage, parse_location


def _raised(read: object) -> OSError:
    with pytest.raises(OSError) as caught:
        read()  # type: ignore[operator]
    return caught.value


def test_a_location_the_server_cannot_read_is_named_with_the_cause(tmp_path: Path) -> None:
    root = parse_location(str(tmp_path))
    storage = Storage(root)
    missing = _raised(lambda: storage.read(root.child("_delta_log/00.json")))
    answer = as_sharing_error(missing)
    assert answer is not None and answer.status == 400
    assert answer.error_code == "INVALID_PARAMETER_VALUE"
    assert answer.message == (
        f"the table's storage could not be read: not found: file://{tmp_path}/_delta_log/00.json"
    )
    (tmp_path / "a-directory").mkdir()
    directory = _raised(lambda: storage.read(root.child("a-directory")))
    answer = as_sharing_error(directory)
    assert answer is not None
    assert answer.message.startswith(
        f"the table's storage could not be read: cannot read file://{tmp_path}/a-directory: "
    )


def test_an_os_refusal_names_its_reason_and_path(tmp_path: Path) -> None:
    target = tmp_path / "not-a-dir"
    target.write_text("x")
    refused = _raised(lambda: os.listdir(target / "below"))
    answer = as_sharing_error(refused)
    assert answer is not None
    assert answer.message == (
        f"the table's storage could not be read: Not a directory: {target / 'below'}"
    )
