"""A connection is either a sqlite-utils Database or a bare sqlite3 connection.

The hook fallback path opens a bare connection because importing sqlite-utils
(which pulls in numpy, dateutil and pluggy) costs ~0.2 s, more than the whole
hook budget. Storage and retrieval functions accept either.
"""

from __future__ import annotations

import sqlite3

TYPE_CHECKING = False  # no typing import at run time (~3 ms on the hook path)
if TYPE_CHECKING:
    from sqlite_utils import Database

    Conn = Database | sqlite3.Connection
else:
    # Only type checkers read the alias (annotations are strings at run time). Built
    # at run time, the forward reference "Database" is compiled on import: ~2 ms of
    # every hook process.
    Conn = sqlite3.Connection


def raw(db: Conn) -> sqlite3.Connection:
    return db if isinstance(db, sqlite3.Connection) else db.conn


def db_path(db: Conn) -> str:
    """The file of the connection's main database: what the warm-process caches of
    retrieval are keyed by, and what an error about the store names."""
    return str(raw(db).execute("PRAGMA database_list").fetchone()[2])


def source_match(source: str, *, prefix: bool) -> tuple[str, list[str]]:
    """A ``source`` condition: exactly ``source``, or every source starting with it (a
    range, not LIKE, whose ``_`` and ``%`` a client name may hold)."""
    if prefix:
        return "source >= ? AND source < ?", [source, source + "\U0010ffff"]
    return "source = ?", [source]


def id_matches(db: Conn, table: str, item_id: str, prefix_limit: int) -> list[str]:
    """``[item_id]`` when ``table`` has a row with exactly that id, else up to
    ``prefix_limit`` ids there that start with it (none when 0).

    The one lookup the table modules share (inbox ids are typed as prefixes); each
    passes its own table as a literal, never input."""
    conn = raw(db)
    # The table name is one of the callers' literals; only values are bound.
    if conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", [item_id]).fetchone():
        return [item_id]
    if prefix_limit < 1:
        return []
    rows = conn.execute(
        f"SELECT id FROM {table} WHERE substr(id, 1, ?) = ? LIMIT ?",
        [len(item_id), item_id, prefix_limit],
    )
    return [str(r[0]) for r in rows]
