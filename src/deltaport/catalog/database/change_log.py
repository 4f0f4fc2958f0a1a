"""The catalog's change log: which shares, tables and recipients each generation changed,
written by the database itself in the transaction of the change.

Every change transaction first moves the generation counter (:func:`begin_change`), which
also makes writers take turns: generations are then committed in their order. Triggers on
every table the servers read (shares, shared tables, recipients, tokens, grants, OAuth
clients) add one row ``(generation, kind, key)`` per item changed, whatever statement
changed it (a cascade included), so no write path can forget to log. Tokens, grants and
OAuth clients are logged under their recipient, which a server reads again with all of
them. Activation links and audit records are not logged: servers do not hold them.

The log is bounded: a change of more than :data:`MAX_ITEMS_PER_CHANGE` items is not kept
(servers load the catalog whole instead), and every :data:`PRUNE_EVERY` generations the
rows more than :data:`KEEP_GENERATIONS` old are dropped. ``changes_kept_from`` in
``deltaport_meta`` says from which generation on the log is complete: a server holding an
older generation loads the catalog whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from deltaport.catalog.database.connection import Database, Transaction

KEEP_GENERATIONS = 1000
"""How many generations the log keeps: a server that fell further behind (at one poll a
second, a thousand changes) loads the catalog whole."""
PRUNE_EVERY = 100
MAX_ITEMS_PER_CHANGE = 1000
"""A change touching more items than this (dropping a share granted to thousands, an
import) is not logged item by item: servers load the catalog whole after it."""

KINDS = ("share", "table", "recipient")
_LOGGED = (
    # table, kind, the column holding the item's key
    ("shares", "share", "name_key"),
    ("shared_tables", "table", "name_key"),
    ("recipients", "recipient", "name_key"),
    ("tokens", "recipient", "recipient_key"),
    ("grants", "recipient", "recipient_key"),
    ("oauth_clients", "recipient", "recipient_key"),
)
_CURRENT = "SELECT CAST(value AS BIGINT) FROM deltaport_meta WHERE key = 'generation'"


def migration(kind: str) -> tuple[str, ...]:
    """The statements of the catalog migration that adds the log (for ``kind``: sqlite or
    postgresql), with the indexes a server's reads of one recipient's rows need."""
    common = (
        """CREATE TABLE catalog_changes (
            generation BIGINT NOT NULL,
            kind TEXT NOT NULL,
            item_key TEXT NOT NULL,
            PRIMARY KEY (generation, kind, item_key))""",
        "CREATE INDEX tokens_recipient ON tokens (recipient_key)",
        "CREATE INDEX grants_recipient ON grants (recipient_key)",
        "CREATE INDEX oauth_clients_recipient ON oauth_clients (recipient_key)",
        "CREATE INDEX shared_tables_share ON shared_tables (share_key)",
        "INSERT INTO deltaport_meta (key, value) "
        "SELECT 'changes_kept_from', value FROM deltaport_meta WHERE key = 'generation'",
    )
    return common + (_postgres_triggers() if kind == "postgresql" else _sqlite_triggers())


def _sqlite_triggers() -> tuple[str, ...]:
    statements = []
    for table, kind, column in _LOGGED:
        for event, rows in (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",))):
            inserts = "".join(
                f"INSERT OR IGNORE INTO catalog_changes (generation, kind, item_key) "
                f"SELECT CAST(value AS BIGINT), '{kind}', {row}.{column} FROM deltaport_meta "
                f"WHERE key = 'generation'; "
                for row in rows
            )
            statements.append(
                f"CREATE TRIGGER {table}_{event.lower()}_logged AFTER {event} ON {table} "
                f"FOR EACH ROW BEGIN {inserts}END"
            )
    return tuple(statements)


def _postgres_triggers() -> tuple[str, ...]:
    function = """CREATE FUNCTION deltaport_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP <> 'DELETE' THEN
                INSERT INTO catalog_changes (generation, kind, item_key)
                SELECT CAST(value AS BIGINT), TG_ARGV[0], to_jsonb(NEW) ->> TG_ARGV[1]
                FROM deltaport_meta WHERE key = 'generation' ON CONFLICT DO NOTHING;
            END IF;
            IF TG_OP <> 'INSERT' THEN
                INSERT INTO catalog_changes (generation, kind, item_key)
                SELECT CAST(value AS BIGINT), TG_ARGV[0], to_jsonb(OLD) ->> TG_ARGV[1]
                FROM deltaport_meta WHERE key = 'generation' ON CONFLICT DO NOTHING;
            END IF;
            RETURN NULL;
        END $$"""
    triggers = tuple(
        f"CREATE TRIGGER {table}_logged AFTER INSERT OR UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION deltaport_log_change('{kind}', '{column}')"
        for table, kind, column in _LOGGED
    )
    return (function, *triggers)


@contextmanager
def changing(database: Database) -> Iterator[Transaction]:
    """A write transaction that moves the generation counter first (the change log rows
    its triggers write carry the new generation)."""
    with database.transaction() as tx:
        generation = begin_change(tx)
        yield tx
        end_change(tx, generation)


def begin_change(tx: Transaction) -> int:
    """Move the generation counter first thing in a change transaction (on PostgreSQL the
    row stays locked until commit, so concurrent changes commit in generation order), and
    prune the log every :data:`PRUNE_EVERY` generations; returns the new generation."""
    tx.execute(
        "UPDATE deltaport_meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) "
        "WHERE key = 'generation'"
    )
    generation = int(tx.execute(_CURRENT)[0][0])
    if generation % PRUNE_EVERY == 0:
        _forget_up_to(tx, generation - KEEP_GENERATIONS)
    return generation


def end_change(tx: Transaction, generation: int) -> None:
    """Before a change commits: a change of too many items is dropped from the log (and
    servers holding an older generation then load the catalog whole)."""
    logged = tx.execute("SELECT COUNT(*) FROM catalog_changes WHERE generation = ?", (generation,))[
        0
    ][0]
    if logged > MAX_ITEMS_PER_CHANGE:
        _forget_up_to(tx, generation)


def _forget_up_to(tx: Transaction, generation: int) -> None:
    tx.execute("DELETE FROM catalog_changes WHERE generation <= ?", (generation,))
    tx.execute(
        "UPDATE deltaport_meta SET value = ? "
        "WHERE key = 'changes_kept_from' AND CAST(value AS BIGINT) < ?",
        (str(generation), generation),
    )
