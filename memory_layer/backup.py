"""`memory-layer backup`: a consistent copy of the database while it is in use.

SQLite's online backup API copies page by page and restarts if a writer changes a
page mid-copy, so the copy is a snapshot of one committed state even with hooks,
the dashboard and MCP servers writing at the same time (a plain file copy of a
WAL database can miss the WAL or tear between the two files).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.models import utcnow
from memory_layer.paths import user_dir


def default_path() -> Path:
    return user_dir() / "backups" / f"memories-{utcnow().strftime('%Y%m%dT%H%M%S%fZ')}.db"


def backup(dest: Path | None = None) -> dict[str, Any]:
    from memory_layer.storage.db import copy_store, open_db, quick_check
    from memory_layer.storage.operations import count_operations
    from memory_layer.storage.records import total_memories

    if dest is None:
        dest = default_path()
        dest.parent.mkdir(parents=True, exist_ok=True)
    elif not dest.parent.is_dir():
        # A typo in -o would otherwise build a directory tree nobody looks in.
        raise InvalidInput(
            f"{dest.parent} is not an existing directory; create it first "
            f"(mkdir -p {dest.parent}) or choose another file with -o."
        )
    if dest.exists():
        raise InvalidInput(f"{dest} already exists; choose another file with -o.")
    # Memories can hold private project details: the copy is as private as the original.
    os.close(os.open(dest, os.O_CREAT | os.O_WRONLY, 0o600))
    source = open_db()
    try:
        target = copy_store(source, dest)
        try:
            # Checked and counted on the copy itself: what a restore would get.
            check = quick_check(target)
            count = total_memories(target)
            ops = count_operations(target)
        finally:
            target.close()
    finally:
        source.close()
    return {
        "path": str(dest),
        "memories": count,
        "operations": ops,
        "bytes": dest.stat().st_size,
        "check": check,
    }


def restore(source: Path) -> dict[str, Any]:
    """Make the store exactly the backup ``source``: checked (integrity, a schema this
    version knows), staged beside the store, copied into it in one transaction while no
    other process has it open (it keeps its file, so a process opening it meanwhile
    waits and then reads the backup); the current store is copied to backups/ first and
    named in the result. The engine must be stopped first (the CLI does it)."""
    from memory_layer.paths import db_path
    from memory_layer.storage.db import store_files
    from memory_layer.storage.restore import (
        StoreInUse,
        content_digest,
        copy_aside,
        copy_in,
        held_alone,
        holders,
        inspect_backup,
        replace_damaged,
        stage,
    )

    store = db_path()
    source = source.expanduser().resolve()
    if source in {f.resolve() for f in store_files(store)}:
        raise InvalidInput(f"{source} is the store itself; name a backup file.")
    info = inspect_backup(source)
    others = holders(store_files(store))
    if others:
        listed = "; ".join(f"pid {pid}: {cmd}" for pid, cmd in others[:5])
        raise StoreInUse(
            f"{store} is open in other processes ({listed}). Close them (the dashboard, MCP "
            "clients, Claude Code sessions), then run the restore again. Nothing was changed."
        )
    stamp = utcnow().strftime("%Y%m%dT%H%M%S%fZ")
    aside = user_dir() / "backups" / f"replaced-{stamp}.db"
    staged = store.with_name(f".{store.name}.restore-{os.getpid()}")
    try:
        exact = stage(source, staged)
        expected = content_digest(staged)
        had_store = store.exists()
        with held_alone(store) as held:
            if held is not None:
                kept = [copy_aside(held, aside)]
                restored = copy_in(held, store, staged)
            else:
                kept = replace_damaged(store, staged, aside if had_store else None)
                restored = content_digest(store)
    finally:
        staged.unlink(missing_ok=True)
    return {
        "restored": str(source),
        "path": str(store),
        "memories": info.memories,
        "operations": info.operations,
        # The same pages as the backup: every row, schema and setting (SQLite's change
        # counters in the header differ; `exact` is False when a -wal beside the backup
        # was folded in, then the comparison is with the folded copy).
        "identical": (restored == expected) if exact else None,
        "previous": [str(p) for p in kept],
        "previous_was_sound": (held is not None) if had_store else None,
    }
