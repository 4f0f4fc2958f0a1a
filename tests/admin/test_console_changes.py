"""The console's change tab: the file actions of a version range and the first rows of its
change data feed, as a recipient reading the feed gets them."""

from __future__ import annotations

from corpus import corpus_table
from deltaport.catalog.model import SharedTable
from deltaport.console.table_view import ROWS, changes_page
from deltaport.direct import read_change_batches
from deltaport.sharing.resolver import TableResolver
from deltaport.storage import parse_location


def provider_side(location: str) -> SharedTable:
    """The table at ``location`` as the console reads it, through the resolver's provider
    side."""
    table = SharedTable("s", "d", "t", parse_location(location), {})
    return TableResolver().provider_table(lambda _: table, "s.d.t")


def test_the_feed_rows_are_the_change_data_feed() -> None:
    location = str(corpus_table("krs__cdf-table-with-dv").path)
    page = changes_page(TableResolver(), provider_side(location), 0, 3)
    schema, batches = read_change_batches(location, 0, 3)
    expected = [[row[n] for n in schema.names] for b in batches for row in b.to_pylist()]
    assert page.feed_columns == schema.names
    assert "_change_type" in page.feed_columns
    assert page.feed_rows == expected[:ROWS] and page.feed_rows
    assert page.feed_note is None


def test_a_range_without_the_feed_says_why() -> None:
    location = str(corpus_table("dat__basic_append").path)
    page = changes_page(TableResolver(), provider_side(location), 0, 1)
    assert page.feed_rows == [] and page.feed_note and "not enabled" in page.feed_note
    assert page.actions
