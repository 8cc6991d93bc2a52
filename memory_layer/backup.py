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

    dest = dest or default_path()
    if dest.exists():
        raise InvalidInput(f"{dest} already exists; choose another file with -o.")
    dest.parent.mkdir(parents=True, exist_ok=True)
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
