"""The tasks table and its event log: one row per task from any tracker."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import iso, parse_time, utcnow
from memory_layer.storage.conn import Conn, raw

COLUMNS = (
    "id",
    "source",
    "external_id",
    "list_id",
    "project",
    "session_id",
    "subject",
    "description",
    "status",
    "outcome",
    "reason",
    "opened_at",
    "started_at",
    "closed_at",
    "state_at",
    "updated_at",
)


class UnknownTask(NotFound):
    """No task with that id (or external id) is known."""


@dataclass(frozen=True)
class Task:
    id: str
    source: str
    external_id: str
    list_id: str | None
    project: str | None
    session_id: str | None
    subject: str | None
    description: str | None
    status: str
    outcome: str | None
    reason: str | None
    opened_at: str
    started_at: str | None
    closed_at: str | None
    state_at: str
    updated_at: str

    @property
    def is_open(self) -> bool:
        return self.outcome is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def stamp(value: str | datetime | None) -> str | None:
    """Any tracker time as our ISO form, so times from hooks, Beads and the usage
    table compare correctly as text."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return iso(value)
    try:
        return iso(parse_time(str(value)))
    except ValueError:
        raise InvalidInput(f"Cannot read the time {value!r}; use ISO 8601.") from None


def now_stamp() -> str:
    return iso(utcnow())


def task_key(source: str, scope: str | None, external_id: str) -> str:
    """Our id for a tracker's task: Claude Code numbers tasks per list and Beads ids
    repeat across repos, so the scope (list id, project) is part of the key."""
    return f"{source}:{scope or '-'}:{external_id}"


def _row_to_task(row: sqlite3.Row | tuple[Any, ...]) -> Task:
    return Task(**dict(zip(COLUMNS, row, strict=True)))


_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM tasks"


def find_task(db: Conn, task_id: str) -> Task | None:
    row = raw(db).execute(_SELECT + " WHERE id = ?", [task_id]).fetchone()
    return _row_to_task(row) if row else None


def get_task(db: Conn, task_id: str) -> Task:
    task = find_task(db, task_id)
    if task is None:
        raise UnknownTask(f"No task '{task_id}'. `memory-layer tasks list` shows known tasks.")
    return task


def resolve_task(db: Conn, ref: str, *, project: str | None = None) -> Task:
    """A task by our id, or by the tracker's id ("3", "bd-a3f8").

    Claude Code reuses "1", "2"... in every list, so a tracker id may match several
    tasks: the one in ``project`` wins, then the most recently changed.
    """
    ref = (ref or "").strip()
    if not ref:
        raise InvalidInput("A task id is required. `memory-layer tasks list` shows them.")
    exact = find_task(db, ref)
    if exact is not None:
        return exact
    rows = (
        raw(db)
        .execute(_SELECT + " WHERE external_id = ? ORDER BY updated_at DESC, id", [ref])
        .fetchall()
    )
    matches = [_row_to_task(r) for r in rows]
    if project is not None:
        matches = [t for t in matches if t.project == project] or matches
    if not matches:
        raise UnknownTask(
            f"No task '{ref}'. `memory-layer tasks list` shows known tasks; "
            "`memory-layer outcome --memory ID` scores a single memory instead."
        )
    return matches[0]


def insert_task(db: Conn, values: dict[str, Any]) -> Task:
    row = {name: values.get(name) for name in COLUMNS}
    raw(db).execute(
        "INSERT INTO tasks("
        + ", ".join(COLUMNS)
        + ") VALUES ("
        + ", ".join("?" for _ in COLUMNS)
        + ")",
        [row[name] for name in COLUMNS],
    )
    return get_task(db, row["id"])


def update_task(db: Conn, task_id: str, changes: dict[str, Any]) -> Task:
    unknown = set(changes) - set(COLUMNS)
    if unknown:
        raise InvalidInput(f"Unknown task field(s): {', '.join(sorted(unknown))}.")
    changes = {**changes, "updated_at": now_stamp()}
    # Column names come from COLUMNS (checked above), never from input.
    raw(db).execute(
        "UPDATE tasks SET " + ", ".join(f"{c} = ?" for c in changes) + " WHERE id = ?",
        [*changes.values(), task_id],
    )
    return get_task(db, task_id)


def log_event(
    db: Conn,
    task_id: str,
    *,
    at: str,
    source: str,
    event: str,
    status: str | None,
    session_id: str | None,
    applied: bool,
    note: str | None = None,
    event_key: str | None = None,
) -> None:
    raw(db).execute(
        "INSERT INTO task_events(task_id, at, source, event, status, session_id, applied, "
        "note, event_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [task_id, at, source, event, status, session_id, int(applied), note, event_key],
    )


def seen_event(db: Conn, event_key: str | None) -> bool:
    if not event_key:
        return False
    row = raw(db).execute("SELECT 1 FROM task_events WHERE event_key = ?", [event_key]).fetchone()
    return row is not None


# Sources whose close is not a person's verdict: the trackers (hooks, syncs, Beads' own
# hooks) and agents (MCP report_outcome: an agent grading its own work must not
# outrank what the tracker says later). Any other source is a person: the CLI,
# /outcome, the dashboard.
TRACKER_SOURCES = ("hook:", "sync:", "beads", "mcp:")


def manual_verdict(db: Conn, task_id: str) -> bool:
    """Whether a person set the task's outcome and has not undone it since.

    A human's verdict outranks what the tracker says later: Claude Code rewrites a
    task file whenever the task is touched, still "in_progress" if the agent never
    closed it, and that must not reopen a task the human declared done.
    """
    row = (
        raw(db)
        .execute(
            "SELECT event, source FROM task_events WHERE task_id = ? AND applied = 1 "
            "ORDER BY id DESC LIMIT 1",
            [task_id],
        )
        .fetchone()
    )
    return row is not None and row[0] == "close" and not row[1].startswith(TRACKER_SOURCES)


def task_sessions(db: Conn, task: Task) -> list[str]:
    """Sessions that worked on the task: the one that created it, then any that sent
    an event for it (a shared Claude list, or bd's closed_by_session)."""
    rows = raw(db).execute(
        "SELECT DISTINCT session_id FROM task_events WHERE task_id = ? "
        "AND session_id IS NOT NULL AND session_id != '' ORDER BY id",
        [task.id],
    )
    sessions = [task.session_id] if task.session_id else []
    for (session,) in rows:
        if session not in sessions:
            sessions.append(session)
    return sessions


def task_events(db: Conn, task_id: str) -> list[dict[str, Any]]:
    rows = raw(db).execute(
        "SELECT id, at, source, event, status, session_id, applied, note FROM task_events "
        "WHERE task_id = ? ORDER BY id",
        [task_id],
    )
    names = ("id", "at", "source", "event", "status", "session_id", "applied", "note")
    return [{**dict(zip(names, r, strict=True)), "applied": bool(r[6])} for r in rows]


def get_task_by_ref(db: Conn, ref: str) -> Task:
    """Our id first, then the tracker's id (see resolve_task)."""
    task = find_task(db, ref)
    return task if task is not None else resolve_task(db, ref)
