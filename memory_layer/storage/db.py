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
# Less free space than this beside the store: a "disk I/O error" is a full disk.
NEARLY_FULL_BYTES = 1024 * 1024


_LOCK_WORDS = ("locked", "busy")
# What sqlite3 says when the store itself is the trouble, as opposed to a bug in a query
# ("no such column"): every door turns these into the named error below.
_STORE_WORDS = (*_LOCK_WORDS, "malformed", "corrupt", "not a database", "disk I/O",
                "readonly", "unable to open", "disk is full")
# The files SQLite keeps for one store: the database, its write-ahead log and the
# shared-memory index (present while the store is in use, and left by a crash).
STORE_SUFFIXES = ("", "-wal", "-shm")
RESTORE_HINT = (
    "`memory-layer backup restore FILE` puts a backup back "
    "(backups are in the backups/ folder of the memory-layer directory)"
)


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
            f"changed. To restore a backup: {RESTORE_HINT}, keeping the damaged file "
            "aside; or point MEMORY_LAYER_HOME at another directory."
        )
    if "disk is full" in message or ("disk I/O" in message and _nearly_full(Path(path))):
        return DatabaseError(
            f"The disk holding {path} is full: nothing was written, and what was stored "
            "before is intact. Free some space and run the command again."
        )
    if "readonly" in message:
        problems = file_problems(Path(path))
        named = "; ".join(problems) if problems else f"{path} or its folder is read-only"
        return DatabaseError(
            f"Cannot write to the store: {named}. Make the files writable "
            "(`chmod u+w` on each, as their owner) or remove a stale -wal/-shm after "
            "`memory-layer engine stop`; `memory-layer doctor` checks every file."
        )
    return DatabaseError(f"Cannot use {path}: {message}")


def _nearly_full(path: Path) -> bool:
    """Whether the filesystem holding ``path`` has less room than a write needs: SQLite
    reports a full disk as "disk I/O error" when the log or its index cannot grow."""
    try:
        st = os.statvfs(path.parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < NEARLY_FULL_BYTES


def store_files(path: Path) -> list[Path]:
    """The database file and the -wal/-shm files beside it, present or not."""
    return [path.with_name(path.name + suffix) for suffix in STORE_SUFFIXES]


def describe_store_files(path: Path) -> list[tuple[str, bool]]:
    """One line per file of the store (present or not) and whether it is fine: what
    `doctor` shows, so a stale read-only -wal/-shm is named, not hidden behind "ok"."""
    import stat

    problems = {p.split(" ", 1)[0]: p for p in file_problems(path)}
    lines = []
    for file in store_files(path):
        if file.name in problems:
            lines.append((problems[file.name], False))
            continue
        try:
            st = file.lstat()
        except FileNotFoundError:
            lines.append((f"{file.name} absent", True))
            continue
        lines.append((f"{file.name} mode {stat.S_IMODE(st.st_mode):04o}, {st.st_size} bytes", True))
    return lines


def file_problems(path: Path) -> list[str]:
    """What keeps this user from writing each file of the store at ``path``: a file
    without the owner's write bit (root writes it anyway, nobody else does), owned by
    another user, or not a regular file. Empty when every present file is fine."""
    import stat

    problems = []
    for file in store_files(path):
        try:
            st = file.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            problems.append(f"{file.name} is not a regular file")
            continue
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid != os.getuid():
            problems.append(f"{file.name} belongs to uid {st.st_uid}, not to you")
        elif not mode & stat.S_IWUSR:
            problems.append(f"{file.name} is read-only (mode {mode:04o})")
    return problems


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
    from memory_layer.storage.migrations import NAMES, SET_NAME

    try:
        applied = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [SET_NAME]
            )
        }
    except sqlite3.OperationalError:  # no migrations table yet: a new database
        return False
    return all(name in applied for name in NAMES)


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


def write_lock_free(db: Conn, wait_ms: int) -> bool:
    """Whether a write could start within ``wait_ms``: False while another process holds
    the store's write lock (a long write, a stuck process, ``sqlite3`` left in a
    transaction), which reads do not notice but every hook write would wait for."""
    conn = raw(db)
    with brief_wait(conn, wait_ms):
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if is_locked(exc):
                return False
            raise
        conn.execute("ROLLBACK")
    return True


def copy_store(source: Conn, dest: Path) -> sqlite3.Connection:
    """Copy the open store into the file ``dest`` and return a connection to the copy,
    for the caller to check and close.

    SQLite's online backup API copies page by page and restarts if a writer changes a
    page mid-copy, so the copy is one committed state even while others write."""
    target = sqlite3.connect(str(dest))
    try:
        raw(source).backup(target)
        # One self-contained file (a WAL store's copy would be in WAL mode too, and any
        # reader would leave -wal/-shm files beside it).
        target.execute("PRAGMA journal_mode = DELETE")
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
