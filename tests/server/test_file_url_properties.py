"""Property: a signed file URL opens the file it was signed for, and any other request
for a file (any table key, path and query, a changed signature or expiry) is refused by
:class:`LocalFiles` with its own :class:`FileError` (403 or 404), never another exception."""

from __future__ import annotations

import os
import time
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from deltaport.server.files.local_files import FileError, LocalFiles
from deltaport.storage import parse_location
from deltaport.storage.local_urls import InvalidSignatureError, LocalUrlSigner

SIGNER = LocalUrlSigner(b"a-secret-for-url-properties-0123", "http://127.0.0.1:1/files")
NAMES = ["part-0.parquet", "a=1/b c%#?.parquet", "é/😈.bin"]
PATHS = st.one_of(
    st.sampled_from([*NAMES, "../x", "a/../../x", "/etc/passwd", "", "a\0b", "dir", "a/./b"]),
    st.text(max_size=30),
)
QUERIES = st.dictionaries(
    st.sampled_from(["se", "sp", "sig", "x"]),
    st.one_of(st.text(max_size=20), st.integers(0, 2**64).map(str), st.just("9" * 5000)),
)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> LocalFiles:
    root = tmp_path_factory.mktemp("url-properties")
    for name in NAMES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(name.encode())
    (root / "dir").mkdir()
    location = parse_location(str(root))
    return LocalFiles(SIGNER, lambda key: location if key == "t" else None)


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def _opened(files: LocalFiles, key: str, path: str, query: dict[str, str]) -> bytes | int:
    """The file's bytes, or the status of the refusal."""
    try:
        fd, _, _ = files.open(key, path, query, "127.0.0.1")
    except FileError as refused:
        assert refused.code in ("PERMISSION_DENIED", "RESOURCE_DOES_NOT_EXIST")
        return refused.status
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


@settings(max_examples=400)
@given(st.sampled_from(["t", "u", "", "a/b", "t\0"]) | st.text(max_size=8), PATHS, QUERIES)
@example("t", "a\ud800", {"se": "1", "sp": "r", "sig": "00"})
def test_any_request_is_refused_with_a_file_error(
    files: LocalFiles, key: str, path: str, query: dict[str, str]
) -> None:
    assert _opened(files, key, path, query) in (403, 404)


@settings(max_examples=200)
@given(st.sampled_from(NAMES), st.data())
def test_signed_urls_open_their_file_and_nothing_else(
    files: LocalFiles, name: str, data: st.DataObject
) -> None:
    expires = int(time.time()) + 600
    query = _query(SIGNER.sign("t", name, expires))
    assert _opened(files, "t", name, query) == name.encode()
    other = data.draw(st.sampled_from([n for n in NAMES if n != name]))
    assert _opened(files, "t", other, query) == 403
    signature = query["sig"]
    at = data.draw(st.integers(0, len(signature) - 1))
    changed = data.draw(st.sampled_from("0123456789abcdef").filter(lambda c: c != signature[at]))
    tampered = signature[:at] + changed + signature[at + 1 :]
    assert _opened(files, "t", name, {**query, "sig": tampered}) == 403
    assert _opened(files, "t", name, {**query, "se": str(expires + 1)}) == 403


def test_expired_urls_are_refused() -> None:
    url = SIGNER.sign("t", NAMES[0], int(time.time()) - 1)
    query = _query(url)
    with pytest.raises(InvalidSignatureError, match="expired"):
        SIGNER.verify("t", NAMES[0], query)
