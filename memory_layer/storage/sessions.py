"""Agent sessions, their events and transcript offsets (tables ``sessions``,
``session_events``, ``transcript_offsets``; migrations m010/m011).

These tables are logs, not memories, so they are written directly rather than through
``records.update_memory``: nothing here changes a memory and nothing here needs an
operation row. Values are stored exactly as given: cleaning and bounding what agents
typed is ``memory_layer.activity``'s job (storage must not depend on capture).

On the hook path: nothing heavy is imported here.
"""

from __future__ import annotations

from memory_layer.frozen import Frozen
from memory_layer.storage.conn import Conn, raw

# How long a transcript's relay window is kept after it was last read.
WINDOW_KEEP_DAYS = 7
# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Session(Frozen):
    session_id: str
    project: str | None
    cwd: str | None
    transcript_path: str | None
    transcript_offset: int
    started_at: str | None
    ended_at: str | None
    context_since: str | None
    pending: bool


class SessionEvent(Frozen):
    """One row of ``session_events``; ``ok`` is None when the event has no result."""

    id: int
    at: str
    kind: str
    tool: str | None
    command: str | None
    ok: bool | None
    error: str | None
    file_path: str | None
    text: str | None


_SESSION_COLUMNS = (
    "session_id, project, cwd, transcript_path, transcript_offset, started_at, ended_at, "
    "context_since, pending"
)
_EVENT_COLUMNS = "id, at, kind, tool, command, ok, error, file_path, text"


def _session(row: Sequence[Any] | None) -> Session | None:
    if row is None:
        return None
    session_id, project, cwd, path, offset, started_at, ended_at, since, pending = row
    return Session(
        session_id, project, cwd, path, offset, started_at, ended_at, since, bool(pending)
    )


def _event(row: Sequence[Any]) -> SessionEvent:
    event_id, at, kind, tool, command, ok, error, file_path, text = row
    return SessionEvent(
        event_id, at, kind, tool, command, None if ok is None else bool(ok), error, file_path, text
    )


def get_session(db: Conn, session_id: str) -> Session | None:
    row = (
        raw(db)
        .execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", [session_id])
        .fetchone()
    )
    return _session(row)


def touch_session(
    db: Conn, session_id: str, *, project: str, cwd: str, transcript_path: str, now: str
) -> None:
    """Create the session row on first sight; keep its latest cwd/project/transcript
    (an event without a transcript path does not forget the one already known)."""
    raw(db).execute(
        "INSERT INTO sessions(session_id, project, cwd, transcript_path, started_at, "
        "context_since) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(session_id) DO UPDATE SET project = excluded.project, cwd = excluded.cwd, "
        "transcript_path = COALESCE(NULLIF(excluded.transcript_path, ''), transcript_path)",
        [session_id, project, cwd, transcript_path, now, now],
    )


def reset_context(db: Conn, session_id: str, now: str) -> None:
    """The agent's context starts empty again (startup, /clear, compaction)."""
    raw(db).execute(
        "UPDATE sessions SET context_since = ?, ended_at = NULL, end_reason = NULL "
        "WHERE session_id = ?",
        [now, session_id],
    )


def context_since(db: Conn, session_id: str) -> str:
    """When the session's current context began ("" when the session is unknown)."""
    row = (
        raw(db)
        .execute("SELECT context_since FROM sessions WHERE session_id = ?", [session_id])
        .fetchone()
    )
    return row[0] if row and row[0] else ""


def end_session(db: Conn, session_id: str, reason: str, now: str) -> None:
    """Mark the session ended with its transcript pending extraction."""
    raw(db).execute(
        "INSERT INTO sessions(session_id, started_at, ended_at, end_reason, pending) "
        "VALUES (?, ?, ?, ?, 1) ON CONFLICT(session_id) DO UPDATE SET "
        "ended_at = excluded.ended_at, end_reason = excluded.end_reason, pending = 1",
        [session_id, now, now, reason],
    )


def pending_sessions(db: Conn, limit: int) -> list[Session]:
    """Ended sessions whose transcript still waits for extraction, oldest end first."""
    rows = (
        raw(db)
        .execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE pending = 1 ORDER BY ended_at LIMIT ?",
            [limit],
        )
        .fetchall()
    )
    return [s for s in (_session(r) for r in rows) if s is not None]


def clear_pending(db: Conn, session_id: str) -> None:
    raw(db).execute("UPDATE sessions SET pending = 0 WHERE session_id = ?", [session_id])


def add_event(
    db: Conn,
    session_id: str,
    project: str | None,
    kind: str,
    *,
    at: str,
    tool: str | None = None,
    command: str | None = None,
    ok: bool | None = None,
    error: str | None = None,
    file_path: str | None = None,
    text: str | None = None,
) -> int:
    """Store one session event as given; returns its id."""
    cursor = raw(db).execute(
        "INSERT INTO session_events(session_id, project, at, kind, tool, command, ok, error, "
        "file_path, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            session_id,
            project,
            at,
            kind,
            tool,
            command,
            None if ok is None else int(ok),
            error,
            file_path,
            text,
        ],
    )
    return int(cursor.lastrowid or 0)


def recent_tool_events(
    db: Conn, session_id: str, *, limit: int, before_id: int | None = None
) -> list[SessionEvent]:
    """The session's last ``limit`` tool events (ids below ``before_id``), oldest first."""
    sql = f"SELECT {_EVENT_COLUMNS} FROM session_events WHERE session_id = ? AND kind = 'tool'"
    args: list[Any] = [session_id]
    if before_id is not None:
        sql += " AND id < ?"
        args.append(before_id)
    sql += " ORDER BY id DESC LIMIT ?"
    args.append(limit)
    rows = raw(db).execute(sql, args).fetchall()
    return [_event(r) for r in reversed(rows)]


def work_events(db: Conn, session_id: str, start: str, end: str) -> list[SessionEvent]:
    """The session's tool and assistant events from ``start`` to ``end``, in order: what
    was run or edited and what the agent said, the evidence outcome credit judges by."""
    rows = raw(db).execute(
        f"SELECT {_EVENT_COLUMNS} FROM session_events "
        "WHERE session_id = ? AND at >= ? AND at <= ? AND kind IN ('tool', 'assistant') "
        "ORDER BY id",
        [session_id, start, end],
    )
    return [_event(r) for r in rows]


def prompt_texts(db: Conn, session_id: str, start: str, end: str) -> list[str]:
    """The user's prompts to the session from ``start`` to ``end``, in order."""
    rows = raw(db).execute(
        "SELECT text FROM session_events WHERE session_id = ? AND at >= ? AND at <= ? "
        "AND kind = 'prompt' ORDER BY id",
        [session_id, start, end],
    )
    return [row[0] for row in rows if row[0]]


def has_work_events(db: Conn, session_id: str, until: str) -> bool:
    """Whether the session recorded any tool or assistant event by ``until``."""
    row = (
        raw(db)
        .execute(
            "SELECT 1 FROM session_events WHERE session_id = ? AND at <= ? "
            "AND kind IN ('tool', 'assistant') LIMIT 1",
            [session_id, until],
        )
        .fetchone()
    )
    return row is not None


def last_prompt_at(db: Conn, session_id: str, at: str) -> str | None:
    """When the user last prompted the session at or before ``at``: the start of the
    turn that was running then (None when the session has no prompt that early)."""
    row = (
        raw(db)
        .execute(
            "SELECT max(at) FROM session_events WHERE session_id = ? AND kind = 'prompt' "
            "AND at <= ?",
            [session_id, at],
        )
        .fetchone()
    )
    return row[0] if row and row[0] else None


def transcript_offset(db: Conn, path: str) -> int:
    """How far into the transcript at ``path`` (or a reader's own key) was read."""
    row = raw(db).execute("SELECT offset FROM transcript_offsets WHERE path = ?", [path]).fetchone()
    return int(row[0]) if row else 0


def transcript_tool_window(db: Conn, path: str) -> bytes:
    """The recent tool text kept with the transcript's offset (m095; empty: none)."""
    row = (
        raw(db)
        .execute("SELECT tool_window FROM transcript_offsets WHERE path = ?", [path])
        .fetchone()
    )
    return bytes(row[0]) if row and row[0] else b""


def set_transcript_offset(
    db: Conn,
    path: str,
    session_id: str,
    offset: int,
    *,
    main: bool,
    now: str,
    tool_window: bytes | None = None,
) -> None:
    """Remember the offset (and, when given, the recent tool text read up to it); the
    session's main transcript also updates its session row."""
    conn = raw(db)
    conn.execute(
        "INSERT INTO transcript_offsets(path, session_id, offset, updated_at, tool_window) "
        "VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, "
        "updated_at = excluded.updated_at, "
        "tool_window = coalesce(excluded.tool_window, transcript_offsets.tool_window)",
        [path, session_id, offset, now, tool_window],
    )
    if tool_window is not None:
        from datetime import timedelta  # only where a transcript is read, not every hook

        from memory_layer.models import iso, parse_time

        # Windows of transcripts untouched for WINDOW_KEEP_DAYS are dropped (bounded: one
        # row per transcript ever read, each up to 600 KB); a session resumed later than
        # that only loses relay detection of what its tools returned before.
        conn.execute(
            "UPDATE transcript_offsets SET tool_window = NULL "
            "WHERE tool_window IS NOT NULL AND updated_at < ?",
            [iso(parse_time(now) - timedelta(days=WINDOW_KEEP_DAYS))],
        )
    if main and session_id:
        conn.execute(
            "UPDATE sessions SET transcript_offset = ? WHERE session_id = ?", [offset, session_id]
        )
