"""AES-CMAC of many messages at once, against the ``cryptography`` package's CMAC."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.cmac import CMAC
from hypothesis import given, settings
from hypothesis import strategies as st

from deltaport.storage import cmac as cmac_module
from deltaport.storage.cmac import BLOCK_BYTES, CmacMessages, cmac, cmacs, hex_strings


def library_cmac(key: bytes, message: bytes) -> bytes:
    mac = CMAC(algorithms.AES(key))
    mac.update(message)
    return mac.finalize()


def split(macs: bytes) -> list[bytes]:
    return [macs[i : i + BLOCK_BYTES] for i in range(0, len(macs), BLOCK_BYTES)]


def test_rfc_4493_examples() -> None:
    key = bytes.fromhex("2b7e151628aed2a6abf7158809cf4f3c")
    text = bytes.fromhex(
        "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
        "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
    )
    expected = {
        0: "bb1d6929e95937287fa37d129b756746",
        16: "070a16b46b4d4144f79bdd9dd04a287c",
        40: "dfa66747de9ae63030ca32611497c827",
        64: "51f0bebf7e3b9d92fc49741779363cfe",
    }
    messages = pa.array([text[:n] for n in expected], pa.binary())
    assert [m.hex() for m in split(cmacs(key, messages))] == list(expected.values())
    assert [cmac(key, text[:n]).hex() for n in expected] == list(expected.values())


@pytest.mark.parametrize("key_bytes", [16, 24, 32])
def test_every_length_around_block_edges(key_bytes: int) -> None:
    key = os.urandom(key_bytes)
    messages = [os.urandom(n) for n in range(0, 4 * BLOCK_BYTES + 2)]
    got = split(cmacs(key, pa.array(messages, pa.binary())))
    assert got == [library_cmac(key, m) for m in messages]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=120), max_size=40), st.integers(0, 5))
def test_strings_of_mixed_lengths_and_slices(texts: list[str], offset: int) -> None:
    key = b"k" * 32
    column = pa.array(["x" * 7] * offset + texts, pa.string()).slice(offset)
    got = split(cmacs(key, column))
    assert got == [library_cmac(key, t.encode()) for t in texts]
    assert got == [cmac(key, t.encode()) for t in texts]


def test_large_strings_and_nulls_count_as_empty() -> None:
    key = os.urandom(16)
    column = pa.array(["a/b.parquet", None, "c=1/ü 😀.parquet"], pa.large_string())
    expected = [library_cmac(key, m) for m in (b"a/b.parquet", b"", "c=1/ü 😀.parquet".encode())]
    assert split(cmacs(key, column)) == expected
    assert cmacs(key, pa.array([], pa.string())) == b""


@pytest.mark.parametrize("narrow_bytes", [0, 2**31])
def test_one_layout_serves_several_keys(monkeypatch: pytest.MonkeyPatch, narrow_bytes: int) -> None:
    """Messages laid out once give each key's CMACs, with 32-bit or 64-bit offsets (the
    latter, for over 2 GB of messages, forced here by lowering the limit)."""
    monkeypatch.setattr(cmac_module, "_NARROW_BYTES", narrow_bytes)
    for lengths in [(0, 5, 16, 17, 31, 32, 33, 64, 3), (16, 32, 16)]:  # the latter unpadded
        messages = [os.urandom(n) for n in lengths]
        column = pa.array([b"before", *messages], pa.binary()).slice(1)
        layout = CmacMessages(column)
        for key in (os.urandom(16), os.urandom(32)):
            assert split(cmacs(key, layout)) == [library_cmac(key, m) for m in messages]


def test_hex_strings() -> None:
    macs = bytes(range(32))
    column = hex_strings(macs)
    assert column.type == pa.string()
    assert column.to_pylist() == [bytes(range(16)).hex(), bytes(range(16, 32)).hex()]
    assert hex_strings(b"").to_pylist() == []
