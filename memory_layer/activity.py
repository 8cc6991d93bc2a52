"""Session activity: touch/end/reset a session, record a session event cleaned and
bounded, record surfacings, transcript offsets.

The use cases the hooks (and the engine, which runs the same handlers) call; the SQL
lives in ``storage.sessions`` and ``storage.usage``. Storage stores what it is given,
so this is where every text an agent produced is put through
``capture.privacy.clean`` (and cut to a bound) before it reaches those tables.

On the hook path: nothing heavy is imported here.
"""

from __future__ import annotations

from memory_layer.capture.privacy import clean
from memory_layer.models import iso, utcnow
from memory_layer.storage import sessions
from memory_layer.storage.sessions import (
    Session,
    clear_pending,
    get_session,
    reset_context,
    transcript_offset,
)

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from memory_layer.capture.provenance import ToolText
    from memory_layer.storage.conn import Conn

__all__ = [
    "EVENT_COMMAND_CHARS",
    "EVENT_ERROR_CHARS",
    "EVENT_TEXT_CHARS",
    "PENDING_BATCH",
    "QUERY_CHARS",
    "RECENT_TOOL_EVENTS",
    "Session",
    "clear_pending",
    "end_session",
    "get_session",
    "pending_sessions",
    "record_event",
    "record_usage",
    "recent_tool_events",
    "reset_context",
    "set_transcript_offset",
    "shown_in_context",
    "touch_session",
    "transcript_offset",
    "transcript_tool_text",
]

# Bounds on what one session event keeps: enough to name an error or a prompt.
EVENT_TEXT_CHARS = 4000
EVENT_COMMAND_CHARS = 2000
EVENT_ERROR_CHARS = 2000
# How many recent tool events the fail-then-fix signal looks at.
RECENT_TOOL_EVENTS = 80
# Ended sessions finished per run of the pending queue (the rest wait for the next).
PENDING_BATCH = 20
# Scores are logged to six places: enough to replay a ranking, no float noise.
SCORE_DIGITS = 6
# What a usage row keeps of the query that surfaced it.
QUERY_CHARS = 500


def touch_session(
    conn: Conn,
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
    sessions.touch_session(
        conn,
        session_id,
        project=project,
        cwd=cwd,
        transcript_path=transcript_path,
        now=now or iso(utcnow()),
    )


def end_session(conn: Conn, session_id: str, reason: str, now: str) -> None:
    """Mark the session ended with its transcript pending extraction."""
    sessions.end_session(conn, session_id, reason, now)


def pending_sessions(conn: Conn, limit: int = PENDING_BATCH) -> list[Session]:
    return sessions.pending_sessions(conn, limit)


def _bounded(text: str | None, limit: int) -> str | None:
    if not text:
        return None
    cleaned = clean(text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1] + "…"


def record_event(
    conn: Conn,
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
    return sessions.add_event(
        conn,
        session_id,
        project,
        kind,
        at=at or iso(utcnow()),
        tool=tool,
        command=_bounded(command, EVENT_COMMAND_CHARS),
        ok=ok,
        error=_bounded(error, EVENT_ERROR_CHARS),
        file_path=file_path or None,
        text=_bounded(text, EVENT_TEXT_CHARS),
    )


def recent_tool_events(
    conn: Conn, session_id: str, *, before_id: int | None = None
) -> list[dict[str, Any]]:
    """The session's last tool events, oldest first, as dicts for ``ToolEvent.from_dict``."""
    return [
        {
            "tool": e.tool or "",
            "command": e.command or "",
            # Stored without a result counts as a success, as the signals always read it.
            "ok": e.ok is not False,
            "error": e.error or "",
            "file_path": e.file_path or "",
            "ts": e.at or "",
        }
        for e in sessions.recent_tool_events(
            conn, session_id, limit=RECENT_TOOL_EVENTS, before_id=before_id
        )
    ]


def shown_in_context(conn: Conn, session_id: str) -> set[str]:
    """Memory ids already surfaced into this session's current context (injected, at
    session start, recalled): the hooks do not show them again."""
    from memory_layer.storage.usage import shown_in_context as shown

    return shown(conn, session_id)


def record_usage(
    conn: Conn,
    rows: Iterable[tuple[str, float]],
    *,
    session_id: str,
    project: str | None,
    kind: str,
    query: str | None = None,
    at: str | None = None,
) -> int:
    """One usage row per surfaced memory (memory id, score), ranked in order; the query
    is cleaned, then bounded (cut after cleaning, a redaction marker stays whole)."""
    # Imported here: a tool event (the most frequent hook) records no surfacing.
    from memory_layer.storage import usage

    at = at or iso(utcnow())
    logged_query = clean(query)[:QUERY_CHARS] if query else None
    return usage.record_surfacings(
        conn,
        [
            usage.Surfacing(
                memory_id=memory_id,
                rank=rank,
                score=round(score, SCORE_DIGITS),
                kind=kind,
                session_id=session_id or None,
                project=project,
                query=logged_query,
                at=at,
            )
            for rank, (memory_id, score) in enumerate(rows, start=1)
        ],
    )


def set_transcript_offset(
    conn: Conn,
    path: str,
    session_id: str,
    offset: int,
    *,
    main: bool,
    tool_text: ToolText | None = None,
) -> None:
    """Remember how far the transcript at ``path`` was read (``main``: the session's own
    transcript, whose offset its session row also keeps) and, when given, the recent
    tool text read up to there, for relay detection in the next batch."""
    # A batch that read no tool text leaves the saved window as it is (NULL keeps it),
    # instead of rewriting the same bytes at every Stop.
    window = tool_text.window() if tool_text is not None and tool_text.grew else None
    sessions.set_transcript_offset(
        conn, path, session_id, offset, main=main, now=iso(utcnow()), tool_window=window
    )


def transcript_tool_text(conn: Conn, path: str) -> ToolText:
    """The recent tool text the transcript at ``path`` showed before its offset: what
    an assistant sentence in the next batch may be relaying."""
    # Imported here: every hook imports this module, only transcript reads need it.
    from memory_layer.capture.provenance import ToolText

    return ToolText(sessions.transcript_tool_window(conn, path))
