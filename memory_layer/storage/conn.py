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
