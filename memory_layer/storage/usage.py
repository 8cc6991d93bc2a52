"""Surfacings: each time a memory was shown to an agent (table ``usage``, migration m010).

Hooks record what they inject, the MCP server what a search returned. Outcome credit
reads the first surfacing of each memory in a task's sessions (or, for trackers
without sessions, its project), the hooks read what the current context already
holds, and the dashboard shows a memory's history. Values are stored exactly as
given: callers clean queries (``capture.privacy.clean``) before they get here.

On the hook path: nothing heavy is imported here.
"""

from __future__ import annotations

from memory_layer.frozen import Frozen
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.sessions import context_since

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


class Surfacing(Frozen):
    """One memory shown to an agent: its rank among the results shown together, the
    score it was ranked by, and how it was shown (injected, session_start, recalled,
    mcp_search)."""

    memory_id: str
    rank: int
    score: float
    kind: str
    session_id: str | None
    project: str | None
    query: str | None
    at: str


class FirstSurfacing(Frozen):
    """When a memory was first shown in one session (the candidates of outcome credit)."""

    memory_id: str
    session_id: str | None
    at: str
    kind: str


class UsageRow(Frozen):
    """One line of a memory's usage history, for the dashboard."""

    at: str
    session_id: str | None
    project: str | None
    kind: str
    query: str | None
    rank: int | None
    score: float | None


def record_surfacings(db: Conn, surfacings: Iterable[Surfacing]) -> int:
    """Store a batch of surfacings as given; returns how many."""
    values = [
        (s.memory_id, s.session_id, s.project, s.kind, s.at, s.query, s.rank, s.score)
        for s in surfacings
    ]
    raw(db).executemany(
        "INSERT INTO usage(memory_id, session_id, project, kind, at, query, rank, score) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    return len(values)


def shown_in_context(db: Conn, session_id: str) -> set[str]:
    """Memory ids already put into this session's current context (since it last started
    empty): injected, shown at session start, or recalled by the agent."""
    if not session_id:
        return set()
    rows = (
        raw(db)
        .execute(
            "SELECT DISTINCT memory_id FROM usage WHERE session_id = ? AND at >= ? "
            "AND kind IN ('injected', 'session_start', 'recalled')",
            [session_id, context_since(db, session_id)],
        )
        .fetchall()
    )
    return {r[0] for r in rows}


def first_surfacings_in_sessions(
    db: Conn, session_ids: Sequence[str], end: str
) -> list[FirstSurfacing]:
    """Each memory's first surfacing per session among ``session_ids``, up to ``end``,
    earliest first."""
    if not session_ids:
        return []
    marks = ", ".join("?" for _ in session_ids)
    rows = raw(db).execute(
        "SELECT memory_id, session_id, min(at), kind FROM usage WHERE session_id IN ("
        + marks
        + ") AND at <= ? GROUP BY memory_id, session_id ORDER BY min(at)",
        [*session_ids, end],
    )
    return [FirstSurfacing(*row) for row in rows]


def first_surfacings_in_project(
    db: Conn, project: str, start: str, end: str
) -> list[FirstSurfacing]:
    """Each memory's first surfacing per session in ``project`` between ``start`` and
    ``end``, earliest first."""
    rows = raw(db).execute(
        "SELECT memory_id, session_id, min(at), kind FROM usage WHERE project = ? "
        "AND at >= ? AND at <= ? GROUP BY memory_id, session_id ORDER BY min(at)",
        [project, start, end],
    )
    return [FirstSurfacing(*row) for row in rows]


def usage_history(db: Conn, memory_id: str, limit: int) -> list[UsageRow]:
    """When and where a memory was shown to an agent, newest first."""
    conn = raw(db)
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'usage'"
    ).fetchone()
    if has_table is None:  # a store opened without migrations (read-only inspection)
        return []
    rows = conn.execute(
        "SELECT at, session_id, project, kind, query, rank, score FROM usage "
        "WHERE memory_id = ? ORDER BY at DESC, id DESC LIMIT ?",
        [memory_id, limit],
    )
    return [UsageRow(*row) for row in rows]


def times_shown_first(db: Conn, memory_ids: Sequence[str]) -> dict[str, int]:
    """How often each memory was the first of what an agent was shown (rank 1)."""
    if not memory_ids:
        return {}
    marks = ",".join("?" * len(memory_ids))
    rows = raw(db).execute(
        "SELECT memory_id, count(*) FROM usage WHERE memory_id IN (" + marks + ") "
        "AND rank = 1 GROUP BY memory_id",
        list(memory_ids),
    )
    return {memory_id: int(count) for memory_id, count in rows}
