"""Putting a backup file in the store's place: check it, stage it, hold the store alone,
copy it in.

A live SQLite store is three files (``memories.db``, ``-wal``, ``-shm``). Copying a
backup over the first while a process has the store open corrupts it; copying it
while a ``-wal`` is left beside it makes SQLite apply that log on top of the backup
(the restore silently changes nothing). Renaming a backup over it is no better: a
process that opened the old file a moment before keeps writing to the old inode, and
its ``-wal``/``-shm``, found by name, would be applied to the new one.

So the store keeps its inode and the backup is copied *into* it with SQLite's backup
API, through one connection that holds the store alone: switching it out of WAL mode
succeeds only when no other connection has it open and folds the log into the file;
``locking_mode = EXCLUSIVE`` then keeps its exclusive lock from the moment it is taken
until the connection closes, so a newcomer waits on SQLite's lock and, once let in,
reads the restored store through the same file. The copy runs in one transaction with
a rollback journal: a crash mid-copy leaves the old store, rolled back on next open.
The current store is first copied aside the same way.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from memory_layer.errors import DatabaseError, InvalidInput
from memory_layer.storage.db import is_locked, store_files

# Waiting this long for another process's lock means it is in use: refuse, don't queue.
HOLD_WAIT_S = 0.5
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "disk I/O")


class StoreInUse(DatabaseError):
    """Another process has the store open, so it cannot be swapped safely."""


@dataclass(frozen=True)
class BackupInfo:
    """What a backup file holds, checked before it may replace the store."""

    memories: int
    operations: int
    migrations: int


def inspect_backup(path: Path) -> BackupInfo:
    """Open ``path`` read-only and check it is a sound memory-layer store this version
    can use: SQLite's integrity check, and a schema made of migrations we know."""
    from memory_layer.storage.migrations import NAMES, SET_NAME

    if not path.is_file():
        raise InvalidInput(f"{path} is not a file. Name a backup made by `memory-layer backup`.")
    try:
        conn = _read_only(path)
    except sqlite3.Error as exc:
        raise InvalidInput(f"Cannot open {path}: {exc}. Nothing was changed.") from None
    try:
        verdict = str(conn.execute("PRAGMA integrity_check").fetchone()[0])
        if verdict != "ok":
            raise InvalidInput(
                f"{path} fails SQLite's integrity check ({verdict[:200]}). Nothing was "
                "changed; choose another backup."
            )
        try:
            applied = {
                str(row[0])
                for row in conn.execute(
                    "SELECT name FROM _sqlite_migrations WHERE migration_set = ?", [SET_NAME]
                )
            }
            memories = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
            operations = int(conn.execute("SELECT count(*) FROM operations").fetchone()[0])
        except sqlite3.OperationalError as exc:
            raise InvalidInput(
                f"{path} is a SQLite database but not a memory-layer store ({exc}). "
                "Nothing was changed."
            ) from None
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(
            f"{path} is not a usable SQLite database ({exc}). Nothing was changed."
        ) from None
    finally:
        conn.close()
    unknown = applied - set(NAMES)
    if unknown:
        raise InvalidInput(
            f"{path} was made by a newer memory-layer (schema steps {', '.join(sorted(unknown))} "
            "are unknown here). Upgrade memory-layer, then restore it. Nothing was changed."
        )
    return BackupInfo(memories, operations, len(applied))


def _read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that leaves no -wal/-shm behind: a self-contained file is
    opened immutable; one with a -wal beside it reads that log too."""
    self_contained = not any(f.exists() for f in store_files(path)[1:])
    flags = "mode=ro&immutable=1" if self_contained else "mode=ro"
    return sqlite3.connect(f"file:{quote(str(path))}?{flags}", uri=True)


def stage(source: Path, staged: Path) -> bool:
    """Copy the backup next to the store (same filesystem: the swap is a rename), mode
    0600 and on disk. Byte for byte when the backup is one self-contained file (True);
    through SQLite's backup API, folding in a ``-wal`` left beside it, otherwise."""
    staged.unlink(missing_ok=True)
    os.close(os.open(staged, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
    exact = not any(f.exists() for f in store_files(source)[1:])
    if exact:
        shutil.copyfile(source, staged)
    else:
        src = _read_only(source)
        dst = sqlite3.connect(str(staged))
        try:
            src.backup(dst)
        finally:
            dst.close()
            src.close()
    fd = os.open(staged, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return exact


# Bytes of SQLite's database header that a copy through the backup API changes and
# that say nothing about the content (https://www.sqlite.org/fileformat.html#the_database_header):
# write versions (18-19: rollback journal or WAL), file change counter (24-27), schema
# cookie (40-43, bumped so other connections reload the schema), version-valid-for and
# the library version that last wrote (92-99).
_BOOKKEEPING_BYTES = ((18, 20), (24, 28), (40, 44), (92, 100))


@dataclass
class Held:
    """The one connection holding the store, and descriptors of the store's file to
    close only after it (closing any descriptor of a file drops every POSIX lock this
    process has on it, SQLite's included)."""

    conn: sqlite3.Connection
    descriptors: list[int] = field(default_factory=list)


@contextmanager
def held_alone(store: Path) -> Iterator[Held | None]:
    """Hold the store so nobody else uses it while it is replaced.

    Yields a connection that holds the store's exclusive lock until it is closed (out
    of WAL mode, its log folded in), or None when there is no store or it is too
    damaged to be opened as a database (then only its files are moved). Raises
    ``StoreInUse`` when another connection has it open."""
    if not store.exists():
        yield None
        return
    conn = sqlite3.connect(str(store), timeout=HOLD_WAIT_S, isolation_level=None)
    try:
        held: Held | None = Held(conn)
        try:
            mode = str(conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0])
            if mode.lower() != "delete":
                raise StoreInUse(_in_use(store, f"it stayed in {mode} mode"))
            # Exclusive locking mode keeps the lock after COMMIT, so the backup API (which
            # needs a connection outside any transaction) writes under a lock never let go.
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if is_locked(exc):
                raise StoreInUse(_in_use(store, str(exc))) from None
            if not any(word in str(exc) for word in _DAMAGE_WORDS):
                raise
            held = None
        except sqlite3.DatabaseError as exc:
            if not any(word in str(exc) for word in _DAMAGE_WORDS):
                raise
            held = None
        yield held
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
        if held is not None:
            for fd in held.descriptors:
                os.close(fd)


def _in_use(store: Path, why: str) -> str:
    return (
        f"{store} is in use by another process ({why}). Close the dashboard "
        "(`memory-layer serve`), MCP clients and running Claude Code sessions, then run "
        "the restore again. Nothing was changed."
    )


def copy_aside(held: Held, aside: Path) -> Path:
    """Copy the held store to ``aside`` (0600, one self-contained file), so a restore
    can itself be undone."""
    aside.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(aside, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o600))
    target = sqlite3.connect(str(aside))
    try:
        held.conn.backup(target)
        target.execute("PRAGMA journal_mode = DELETE")
    finally:
        target.close()
    return aside


def copy_in(held: Held, store: Path, staged: Path) -> str:
    """Copy the staged backup into the held store, in one transaction; the store's
    ``content_digest`` afterwards, read before anybody else can write."""
    source = _read_only(staged)
    try:
        source.backup(held.conn)
    finally:
        source.close()
    # A WAL-mode backup would switch the header to WAL and leave the (zeroed) rollback
    # journal of the exclusive lock behind; DELETE mode, as `backup` writes them, removes it.
    held.conn.execute("PRAGMA journal_mode = DELETE")
    # Read while the lock is held, so no newcomer can have written yet; the descriptor is
    # closed after the held connection (see ``Held``).
    fd = os.open(store, os.O_RDONLY)
    held.descriptors.append(fd)
    return _digest_fd(fd)


def content_digest(path: Path) -> str:
    """sha256 of a database file with the header's bookkeeping bytes left out: equal for
    two files whose pages, and so whose every row, schema and setting, are the same."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return _digest_fd(fd)
    finally:
        os.close(fd)


def _digest_fd(fd: int) -> str:
    digest = hashlib.sha256()
    header = bytearray(os.pread(fd, 100, 0))
    for start, stop in _BOOKKEEPING_BYTES:
        header[start:stop] = bytes(stop - start)
    digest.update(header)
    offset = len(header)
    while block := os.pread(fd, 1 << 20, offset):
        digest.update(block)
        offset += len(block)
    return digest.hexdigest()


def replace_damaged(store: Path, staged: Path, aside: Path | None) -> list[Path]:
    """Rename ``staged`` over a store too damaged to open (nobody can be using it), the
    old files kept as ``aside`` and its ``-wal``/``-shm``, for whoever tries to recover
    it. A hard link is made first, so the store never goes missing."""
    kept: list[Path] = []
    if aside is not None and store.exists():
        aside.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(store, aside)
        except OSError:  # no hard links here: a copy, then the rename replaces it
            shutil.copy2(store, aside)
        kept.append(aside)
    for extra, suffix in zip(store_files(store)[1:], ("-wal", "-shm"), strict=True):
        if not extra.exists():
            continue
        if aside is None:
            extra.unlink()
        else:
            target = aside.with_name(aside.name + suffix)
            os.replace(extra, target)
            kept.append(target)
    store.with_name(store.name + "-journal").unlink(missing_ok=True)
    os.replace(staged, store)
    dir_fd = os.open(store.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return kept


def holders(paths: list[Path]) -> list[tuple[int, str]]:
    """Other processes with one of ``paths`` open (pid, command), from /proc where
    there is one: a connection that has not read yet holds no SQLite lock to detect."""
    wanted = {str(p.resolve()) for p in paths if p.exists()}
    proc = Path("/proc")
    if not wanted or not proc.is_dir():
        return []
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:
            continue  # gone, or another user's (who cannot open a 0600 store anyway)
        if links & wanted:
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                command = "?"
            found.append((int(entry.name), command.strip()[:120]))
    return found
