"""Session bookkeeping for hooks: sessions, session events, usage rows, offsets.

These tables (migrations m010/m011) are logs, not memories, so they are written
directly rather than through ``records.update_memory``: nothing here changes a
memory. Every text that lands in them goes through ``capture.privacy.clean``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

from memory_layer.capture.privacy import clean
from memory_layer.models import iso, utcnow

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Bounds on what one session event keeps: enough to name an error or a prompt.
EVENT_TEXT_CHARS = 4000
EVENT_COMMAND_CHARS = 2000
EVENT_ERROR_CHARS = 2000
# How many recent tool events the fail-then-fix signal looks at.
RECENT_TOOL_EVENTS = 80


@dataclass(frozen=True)
class Session:
    session_id: str
    project: str | None
    cwd: str | None
    transcript_path: str | None
    transcript_offset: int
    started_at: str | None
    ended_at: str | None
    context_since: str | None
    pending: bool


_SESSION_COLUMNS = (
    "session_id, project, cwd, transcript_path, transcript_offset, started_at, ended_at, "
    "context_since, pending"
)


def _session(row: tuple[Any, ...] | None) -> Session | None:
    if row is None:
        return None
    return Session(*row[:8], pending=bool(row[8]))


def get_session(conn: sqlite3.Connection, session_id: str) -> Session | None:
    row = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", [session_id]
    ).fetchone()
    return _session(row)


def touch_session(
    conn: sqlite3.Connection,
    session_id: str,
    *,
    project: str,
    cwd: str,
    transcript_path: str,
    now: str | None = None,
) -> None:
    """Create the session row on first sight; keep its latest cwd/project/transcript."""
    if not session_id:
        return
    now = now or iso(utcnow())
    conn.execute(
        "INSERT INTO sessions(session_id, project, cwd, transcript_path, started_at, "
        "context_since) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(session_id) DO UPDATE SET project = excluded.project, cwd = excluded.cwd, "
        "transcript_path = COALESCE(NULLIF(excluded.transcript_path, ''), transcript_path)",
        [session_id, project, cwd, transcript_path, now, now],
    )


def reset_context(conn: sqlite3.Connection, session_id: str, now: str) -> None:
    """The agent's context starts empty again (startup, /clear, compaction)."""
    conn.execute(
        "UPDATE sessions SET context_since = ?, ended_at = NULL, end_reason = NULL "
        "WHERE session_id = ?",
        [now, session_id],
    )


def end_session(conn: sqlite3.Connection, session_id: str, reason: str, now: str) -> None:
    """Mark the session ended with its transcript pending extraction."""
    conn.execute(
        "INSERT INTO sessions(session_id, started_at, ended_at, end_reason, pending) "
        "VALUES (?, ?, ?, ?, 1) ON CONFLICT(session_id) DO UPDATE SET "
        "ended_at = excluded.ended_at, end_reason = excluded.end_reason, pending = 1",
        [session_id, now, now, reason],
    )


def pending_sessions(conn: sqlite3.Connection, limit: int = 20) -> list[Session]:
    rows = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE pending = 1 ORDER BY ended_at LIMIT ?",
        [limit],
    ).fetchall()
    return [s for s in (_session(r) for r in rows) if s is not None]


def clear_pending(conn: sqlite3.Connection, session_id: str) -> None:
    conn.execute("UPDATE sessions SET pending = 0 WHERE session_id = ?", [session_id])


def _bounded(text: str | None, limit: int) -> str | None:
    if not text:
        return None
    cleaned = clean(text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def record_event(
    conn: sqlite3.Connection,
    session_id: str,
    project: str | None,
    kind: str,
    *,
    tool: str | None = None,
    command: str | None = None,
    ok: bool | None = None,
    error: str | None = None,
    file_path: str | None = None,
    text: str | None = None,
    at: str | None = None,
) -> int:
    """One cheap session event (tool | prompt | assistant), cleaned and bounded."""
    cursor = conn.execute(
        "INSERT INTO session_events(session_id, project, at, kind, tool, command, ok, error, "
        "file_path, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            session_id,
            project,
            at or iso(utcnow()),
            kind,
            tool,
            _bounded(command, EVENT_COMMAND_CHARS),
            None if ok is None else int(ok),
            _bounded(error, EVENT_ERROR_CHARS),
            file_path or None,
            _bounded(text, EVENT_TEXT_CHARS),
        ],
    )
    return int(cursor.lastrowid or 0)


def recent_tool_events(
    conn: sqlite3.Connection, session_id: str, *, before_id: int | None = None
) -> list[dict[str, Any]]:
    """The session's last tool events, oldest first, as dicts for ``ToolEvent.from_dict``."""
    sql = (
        "SELECT id, tool, command, ok, error, file_path, at FROM session_events "
        "WHERE session_id = ? AND kind = 'tool'"
    )
    args: list[Any] = [session_id]
    if before_id is not None:
        sql += " AND id < ?"
        args.append(before_id)
    sql += " ORDER BY id DESC LIMIT ?"
    args.append(RECENT_TOOL_EVENTS)
    rows = conn.execute(sql, args).fetchall()
    return [
        {
            "tool": tool or "",
            "command": command or "",
            "ok": ok != 0,
            "error": error or "",
            "file_path": file_path or "",
            "ts": at or "",
        }
        for _id, tool, command, ok, error, file_path, at in reversed(rows)
    ]


def shown_in_context(conn: sqlite3.Connection, session_id: str) -> set[str]:
    """Memory ids already injected into this session's current context."""
    if not session_id:
        return set()
    row = conn.execute(
        "SELECT context_since FROM sessions WHERE session_id = ?", [session_id]
    ).fetchone()
    since = row[0] if row and row[0] else ""
    rows = conn.execute(
        "SELECT DISTINCT memory_id FROM usage WHERE session_id = ? AND at >= ? "
        "AND kind IN ('injected', 'session_start', 'recalled')",
        [session_id, since],
    ).fetchall()
    return {r[0] for r in rows}


def record_usage(
    conn: sqlite3.Connection,
    rows: Iterable[tuple[str, float]],
    *,
    session_id: str,
    project: str | None,
    kind: str,
    query: str | None = None,
    at: str | None = None,
) -> int:
    """One usage row per surfaced memory (memory id, score), ranked in order."""
    at = at or iso(utcnow())
    values = [
        (memory_id, session_id or None, project, kind, at, query, rank, round(score, 6))
        for rank, (memory_id, score) in enumerate(rows, start=1)
    ]
    conn.executemany(
        "INSERT INTO usage(memory_id, session_id, project, kind, at, query, rank, score) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        values,
    )
    return len(values)


def transcript_offset(conn: sqlite3.Connection, path: str) -> int:
    row = conn.execute("SELECT offset FROM transcript_offsets WHERE path = ?", [path]).fetchone()
    return int(row[0]) if row else 0


def set_transcript_offset(
    conn: sqlite3.Connection, path: str, session_id: str, offset: int, *, main: bool
) -> None:
    now = iso(utcnow())
    conn.execute(
        "INSERT INTO transcript_offsets(path, session_id, offset, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, "
        "updated_at = excluded.updated_at",
        [path, session_id, offset, now],
    )
    if main and session_id:
        conn.execute(
            "UPDATE sessions SET transcript_offset = ? WHERE session_id = ?", [offset, session_id]
        )
