"""Write transactions: the lock taken up front, nested calls as savepoints.

Its own module, not part of a table's storage module: every write path uses it, the
hook path included, which must not import the memories' storage (and, with it,
``dataclasses``) for a tool call that only logs a session event.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from memory_layer.storage.conn import Conn, db_path, raw

_savepoints = 0


@contextmanager
def transaction(db: Conn) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (or a savepoint when nested): take the write lock up front so
    read-then-write sequences never interleave with another process's writes."""
    global _savepoints
    conn = raw(db)
    if conn.in_transaction:
        _savepoints += 1
        name = f"ml_sp_{_savepoints}"
        conn.execute("SAVEPOINT " + name)
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO SAVEPOINT " + name)
                conn.execute("RELEASE SAVEPOINT " + name)
            raise
        else:
            conn.execute("RELEASE SAVEPOINT " + name)
        return
    _locking(conn, "BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        _locking(conn, "COMMIT")


def _locking(conn: sqlite3.Connection, statement: str) -> None:
    """Run a statement that waits for the write lock; a lock still held by another
    process after the busy timeout becomes the store's named error, saying what to do."""
    try:
        conn.execute(statement)
    except sqlite3.OperationalError as exc:
        from memory_layer.storage.db import explain_error, is_locked

        if not is_locked(exc):
            raise

        path = db_path(conn)
        if conn.in_transaction:  # a COMMIT that could not finish: nothing half-written
            conn.execute("ROLLBACK")
        raise explain_error(exc, path) from None
