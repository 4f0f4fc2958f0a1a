"""A partition filter read back as Unity Catalog's ``partitions`` (what the provider API
shows), when it has that form."""

from __future__ import annotations

import pytest

from deltaport.catalog.partition_filter import as_partitions


@pytest.mark.parametrize(
    ("text", "partitions"),
    [
        (
            "(`region` = CURRENT_RECIPIENT('region')) OR (`region` = 'asia')",
            [[("region", "property", "region")], [("region", "value", "asia")]],
        ),
        ("a = 'x' AND b IS NULL", [[("a", "value", "x"), ("b", "null", None)]]),
        ("a = CURRENT_RECIPIENT('it''s')", [[("a", "property", "it's")]]),
        ("a = 'CURRENT_RECIPIENT(''k'')'", [[("a", "value", "CURRENT_RECIPIENT('k')")]]),
        ("a > 'x'", None),
        ("'x' = a", None),
        ("(a = 'x' OR b = 'y') AND c = 'z'", None),
        ("NOT a = 'x'", None),
        ("a = ", None),
    ],
)
def test_partitions_of_a_filter(text: str, partitions: object) -> None:
    assert as_partitions(text) == partitions
