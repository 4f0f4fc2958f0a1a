"""Counts and times in messages, said as a person would say them ("1 table", "no
shares", "does not expire"), never "1 tables" or "share(s)"."""

from __future__ import annotations


def count(number: int, noun: str, plural: str | None = None) -> str:
    """``count(0, "table")`` is "no tables", ``count(1, "table")`` "1 table"."""
    many = plural or f"{noun}s"
    if number == 0:
        return f"no {many}"
    return f"{number} {noun if number == 1 else many}"
