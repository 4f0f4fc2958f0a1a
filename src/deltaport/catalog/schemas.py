"""What recipients see of a share's schemas besides their names: a display name, a comment
and properties, as a YAML configuration gives them.

A schema exists through its tables, so it has no row of its own: its details are kept on
its share's row (``shares.schema_details``, a JSON object by schema name key). A change of
them is then a change of the share, which the change log records and every server follows
as it follows any share's change. The details of a schema go with its last table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from deltaport.catalog.database.connection import Transaction
from deltaport.catalog.limits import text_problem
from deltaport.catalog.rows import (
    CatalogNotFoundError,
    Details,
    Keep,
    SchemaDetails,
    SchemaRow,
    schema_rows,
)
from deltaport.catalog.store_checks import check
from deltaport.protocol.names import name_key


def set_details(tx: Transaction, share: str, schema: str, given: SchemaDetails) -> SchemaRow:
    """Replace, in ``tx``, what is ``given`` of the schema ``share.schema``, which must hold
    a table; returns what the schema has then. The share is known to exist."""
    display_name, comment, properties = given.display_name, given.comment, given.properties
    if not isinstance(comment, Keep):
        check("comment", text_problem(comment))
    share_key = name_key(share)
    if name_key(schema) not in _schemas_with_tables(tx, share_key):
        raise CatalogNotFoundError(f"no schema {share}.{schema} (it holds no tables)")
    details = dict(_details(tx, share_key))
    old = details.get(name_key(schema), SchemaRow())
    new = SchemaRow(
        old.comment if isinstance(comment, Keep) else comment,
        old.display_name if isinstance(display_name, Keep) else display_name,
        old.properties if isinstance(properties, Keep) else tuple(properties.items()),
    )
    Details(new.display_name, new.properties).check()
    details[name_key(schema)] = new
    _write(tx, share_key, details)
    return new


def forget_empty_schemas(tx: Transaction, share_key: str) -> None:
    """Drop the details of the share's schemas that hold no table any more (called in the
    transaction that removed a table)."""
    details = dict(_details(tx, share_key))
    kept = {k: v for k, v in details.items() if k in _schemas_with_tables(tx, share_key)}
    if kept != details:
        _write(tx, share_key, kept)


def _schemas_with_tables(tx: Transaction, share_key: str) -> set[str]:
    rows = tx.execute("SELECT schema_name FROM shared_tables WHERE share_key = ?", (share_key,))
    return {name_key(r[0]) for r in rows}


def _details(tx: Transaction, share_key: str) -> tuple[tuple[str, SchemaRow], ...]:
    found = tx.execute("SELECT schema_details FROM shares WHERE name_key = ?", (share_key,))
    return schema_rows(found[0][0])


def _write(tx: Transaction, share_key: str, details: Mapping[str, SchemaRow]) -> None:
    column = {key: row.as_json() for key, row in sorted(details.items()) if row != SchemaRow()}
    tx.execute(
        "UPDATE shares SET schema_details = ? WHERE name_key = ?", (json.dumps(column), share_key)
    )
