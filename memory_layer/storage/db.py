"""Opening the database: file mode, WAL, busy timeout, migrations, clear errors."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_layer.errors import DatabaseError
from memory_layer.paths import db_path
from memory_layer.storage.conn import Conn, raw

BUSY_TIMEOUT_MS = 5000


_LOCK_WORDS = ("locked", "busy")
# What sqlite3 says when the store itself is the trouble, as opposed to a bug in a query
# ("no such column"): every door turns these into the named error below.
_STORE_WORDS = (*_LOCK_WORDS, "malformed", "corrupt", "not a database", "disk I/O",
                "readonly", "unable to open")


def is_locked(exc: sqlite3.Error) -> bool:
    return any(word in str(exc) for word in _LOCK_WORDS)


def store_trouble(exc: sqlite3.Error) -> bool:
    return any(word in str(exc) for word in _STORE_WORDS)


def explain_error(exc: sqlite3.Error, path: Path | str) -> DatabaseError:
    """The named error, with how to fix it, for a SQLite error on the store at ``path``."""
    message = str(exc)
    if is_locked(exc):
        return DatabaseError(
            f"{path} is locked by another process (waited {BUSY_TIMEOUT_MS / 1000:.0f}s). "
            "Close the other writer (`memory-layer engine stop` stops the background engine) "
            "and try again."
        )
    if "not a database" in message or "malformed" in message or "corrupt" in message:
        return DatabaseError(
            f"{path} is corrupt or not a memory-layer database ({message}). Nothing was "
            "changed. Move it aside and restore a backup (`memory-layer backup` makes them), "
            "or point MEMORY_LAYER_HOME at another directory."
        )
    return DatabaseError(f"Cannot use {path}: {message}")


def set_busy_timeout(conn: sqlite3.Connection, ms: int) -> None:
    """How long a write waits for another process's lock before failing."""
    # PRAGMA takes no bound parameters: int() keeps anything but a number out of the SQL.
    conn.execute(f"PRAGMA busy_timeout = {int(ms)}")


@contextmanager
def brief_wait(conn: sqlite3.Connection, ms: int) -> Iterator[None]:
    """Wait at most ``ms`` for another writer, for bookkeeping writes that may be
    skipped: a reader must not stall for the full busy timeout behind a long write.
    The connection's own timeout (a hook sets a shorter one) is put back afterwards."""
    before = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    set_busy_timeout(conn, ms)
    try:
        yield
    finally:
        set_busy_timeout(conn, before)


def _connect(path: Path) -> sqlite3.Connection:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # Create the file ourselves so it is never world-readable, even for an instant.
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    # Autocommit: transactions are explicit (records.transaction), never opened behind our back.
    conn.isolation_level = None
    set_busy_timeout(conn, BUSY_TIMEOUT_MS)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _up_to_date(conn: sqlite3.Connection) -> bool:
    from memory_layer.storage.migrations import MIGRATIONS, SET_NAME

    try:
        applied = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [SET_NAME]
            )
        }
    except sqlite3.OperationalError:  # no migrations table yet: a new database
        return False
    return all(name in applied for name, _ in MIGRATIONS)


def open_db(path: Path | None = None, *, migrate: bool = True) -> sqlite3.Connection:
    """Open (creating with mode 0600 if needed) and migrate the memory database.

    Returns a plain sqlite3 connection in autocommit mode; sqlite-utils is imported
    only to apply pending migrations (see migrations.py for why).
    """
    path = path or db_path()
    try:
        conn = _connect(path)
        if migrate and not _up_to_date(conn):
            from sqlite_utils import Database

            from memory_layer.storage.migrations import migration_set

            # BEGIN IMMEDIATE serialises concurrent first opens: the second process waits,
            # then finds nothing pending. Each migration nests inside as a savepoint.
            conn.execute("BEGIN IMMEDIATE")
            try:
                migration_set().apply(Database(conn))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
    except sqlite3.Error as exc:
        raise explain_error(exc, path) from None
    return conn


def generation(db: Conn) -> int:
    """Counter bumped by triggers on any change the vector cache depends on."""
    row = raw(db).execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def quick_check(db: Conn) -> str:
    """``PRAGMA quick_check``'s verdict on a store: "ok" when sound."""
    return str(raw(db).execute("PRAGMA quick_check").fetchone()[0])


def health(db: Conn) -> tuple[str, str]:
    """(``PRAGMA quick_check`` verdict, "ok" when sound; journal mode) of an open store."""
    verdict = quick_check(db)
    mode = raw(db).execute("PRAGMA journal_mode").fetchone()[0]
    return verdict, str(mode)


def copy_store(source: Conn, dest: Path) -> sqlite3.Connection:
    """Copy the open store into the file ``dest`` and return a connection to the copy,
    for the caller to check and close.

    SQLite's online backup API copies page by page and restarts if a writer changes a
    page mid-copy, so the copy is one committed state even while others write."""
    target = sqlite3.connect(str(dest))
    try:
        raw(source).backup(target)
    except BaseException:
        target.close()
        raise
    return target


def fts5_available() -> str:
    """The SQLite version, when it has FTS5 and the porter tokenizer keyword search is
    built on; raises ``sqlite3.OperationalError`` when it has not."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    finally:
        conn.close()
    return sqlite3.sqlite_version
