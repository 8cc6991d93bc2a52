"""Read-only aggregates the pages need and the library does not offer yet.

Nothing here writes, and nothing here ranks: search goes through ``recall`` and
lists through ``memory_layer.listing``. These are plain parameterised SELECTs.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from memory_layer.storage.records import Operation, operations


def outcome_scores(conn: sqlite3.Connection) -> list[float]:
    """Scores of active memories some outcome has judged. Never-judged ones sit at 0.0,
    which would fill the "+0.0 to +0.2" bar with memories no outcome ever touched."""
    rows = conn.execute(
        "SELECT outcome_score FROM memories WHERE status = 'active' "
        "AND success_count + failure_count > 0"
    ).fetchall()
    return [float(r[0]) for r in rows]


def recent_operations(conn: sqlite3.Connection, limit: int = 25) -> list[Operation]:
    """The last ``limit`` operations, newest first."""
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM operations").fetchone()[0]
    ops = operations(conn, after_id=max(0, int(newest) - limit), limit=limit)
    return list(reversed(ops))


def usage_history(
    conn: sqlite3.Connection, memory_id: str, limit: int = 100
) -> list[dict[str, Any]]:
    """When and where a memory was shown to an agent (the ``usage`` table), newest first."""
    if not _has_table(conn, "usage"):
        return []
    rows = conn.execute(
        "SELECT at, session_id, project, kind, query, rank, score FROM usage "
        "WHERE memory_id = ? ORDER BY at DESC, id DESC LIMIT ?",
        [memory_id, limit],
    ).fetchall()
    keys = ("at", "session_id", "project", "kind", "query", "rank", "score")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name]
    ).fetchone()
    return row is not None
