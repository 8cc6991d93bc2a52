"""Tasks from every tracker and their event log (tables ``tasks`` and ``task_events``,
migration m020).

One ``tasks`` row per task (Claude Code, Beads, manual): its tracker status, the
outcome once closed, and the tracker time of the last transition applied. Every event
seen for a task lands in ``task_events``, applied or not: the audit trail, the sessions
a task was worked in, and (``event_key``) deduplication of replayed events.

Values are stored as given: task keys, time stamps, the transition rules and the
named ``UnknownTask`` error are ``memory_layer.outcomes``'s. Credits are
``storage.credits``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from memory_layer.errors import InvalidInput
from memory_layer.storage.conn import Conn, raw

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

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


def _task(row: Sequence[Any]) -> Task:
    return Task(**dict(zip(COLUMNS, row, strict=True)))


_SELECT = "SELECT " + ", ".join(COLUMNS) + " FROM tasks"


def find_task(db: Conn, task_id: str) -> Task | None:
    row = raw(db).execute(_SELECT + " WHERE id = ?", [task_id]).fetchone()
    return _task(row) if row else None


def tasks_with_external_id(db: Conn, external_id: str) -> list[Task]:
    """Tasks the trackers call ``external_id`` (Claude Code reuses "1", "2"... in every
    list), most recently changed first."""
    rows = raw(db).execute(
        _SELECT + " WHERE external_id = ? ORDER BY updated_at DESC, id", [external_id]
    )
    return [_task(r) for r in rows]


def list_tasks(db: Conn, *, limit: int, offset: int = 0) -> list[Task]:
    """One page of tasks, most recently changed first."""
    rows = raw(db).execute(
        _SELECT + " ORDER BY updated_at DESC, id LIMIT ? OFFSET ?", [limit, offset]
    )
    return [_task(r) for r in rows]


def insert_task(db: Conn, values: dict[str, Any]) -> None:
    """Store a new task; a column missing from ``values`` is stored as NULL."""
    raw(db).execute(
        "INSERT INTO tasks("
        + ", ".join(COLUMNS)
        + ") VALUES ("
        + ", ".join("?" for _ in COLUMNS)
        + ")",
        [values.get(name) for name in COLUMNS],
    )


def update_task(db: Conn, task_id: str, changes: dict[str, Any]) -> None:
    unknown = set(changes) - set(COLUMNS)
    if unknown:
        raise InvalidInput(f"Unknown task field(s): {', '.join(sorted(unknown))}.")
    # Column names come from COLUMNS (checked above), never from input.
    raw(db).execute(
        "UPDATE tasks SET " + ", ".join(f"{c} = ?" for c in changes) + " WHERE id = ?",
        [*changes.values(), task_id],
    )


def started_spans(db: Conn, source: str, session_id: str, exclude: str) -> list[tuple[str, str]]:
    """(started_at, closed_at) of the ``source`` tasks of a session that went in progress,
    but ``exclude``; a task still open ends at '9999' (after any time stamp)."""
    rows = raw(db).execute(
        "SELECT started_at, coalesce(closed_at, '9999') FROM tasks WHERE source = ? "
        "AND session_id = ? AND id != ? AND started_at IS NOT NULL",
        [source, session_id, exclude],
    )
    return [(r[0], r[1]) for r in rows]


def closed_in_session(db: Conn, session_id: str, start: str, end: str) -> list[str]:
    """Ids of tasks closed from ``start`` to ``end`` that the session created or sent
    an event for, in order of closing."""
    rows = raw(db).execute(
        "SELECT id FROM tasks WHERE outcome IS NOT NULL AND closed_at >= ? "
        "AND closed_at <= ? AND (session_id = ? OR id IN "
        "(SELECT task_id FROM task_events WHERE session_id = ?)) ORDER BY closed_at",
        [start, end, session_id, session_id],
    )
    return [r[0] for r in rows]


def list_of_session_task(
    db: Conn, source: str, external_id: str, session_id: str, status: str
) -> str | None:
    """The list of the most recently changed ``source`` task numbered ``external_id`` in
    a list other than ``session_id`` that the session created or sent an event for,
    while it is open or has ``status``."""
    row = (
        raw(db)
        .execute(
            "SELECT list_id FROM tasks WHERE source = ? AND external_id = ? AND list_id != ? "
            "AND (outcome IS NULL OR status = ?) "
            "AND (session_id = ? OR id IN (SELECT task_id FROM task_events WHERE session_id = ?)) "
            "ORDER BY updated_at DESC LIMIT 1",
            [source, external_id, session_id, status, session_id, session_id],
        )
        .fetchone()
    )
    return row[0] if row else None


def outcome_counts(db: Conn) -> dict[str, int]:
    """How many tasks closed with each outcome."""
    rows = raw(db).execute(
        "SELECT outcome, count(*) FROM tasks WHERE outcome IS NOT NULL GROUP BY outcome"
    )
    return {str(outcome): int(count) for outcome, count in rows}


def closed_since(db: Conn, since: str) -> list[tuple[str, str]]:
    """(closed_at, outcome) of the tasks closed with an outcome at or after ``since``."""
    rows = raw(db).execute(
        "SELECT closed_at, outcome FROM tasks WHERE outcome IS NOT NULL AND closed_at >= ?",
        [since],
    )
    return [(r[0], r[1]) for r in rows]


# --- task_events -----------------------------------------------------------------------


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
    """Whether an event with this key was logged already (no key: never)."""
    if not event_key:
        return False
    row = raw(db).execute("SELECT 1 FROM task_events WHERE event_key = ?", [event_key]).fetchone()
    return row is not None


def task_of_event(db: Conn, event_key: str) -> str | None:
    """The task the event with this key was logged for."""
    row = (
        raw(db)
        .execute("SELECT task_id FROM task_events WHERE event_key = ?", [event_key])
        .fetchone()
    )
    return row[0] if row else None


def last_applied_event(db: Conn, task_id: str) -> tuple[str, str] | None:
    """(event, source) of the last event that changed the task."""
    row = (
        raw(db)
        .execute(
            "SELECT event, source FROM task_events WHERE task_id = ? AND applied = 1 "
            "ORDER BY id DESC LIMIT 1",
            [task_id],
        )
        .fetchone()
    )
    return (row[0], row[1]) if row else None


def event_sessions(db: Conn, task_id: str) -> list[str]:
    """The sessions that sent an event for the task (ordered by event id)."""
    rows = raw(db).execute(
        "SELECT DISTINCT session_id FROM task_events WHERE task_id = ? "
        "AND session_id IS NOT NULL AND session_id != '' ORDER BY id",
        [task_id],
    )
    return [r[0] for r in rows]


_EVENT_NAMES = ("id", "at", "source", "event", "status", "session_id", "applied", "note")


def task_events(db: Conn, task_id: str) -> list[dict[str, Any]]:
    """Every event logged for the task, oldest first."""
    rows = raw(db).execute(
        "SELECT " + ", ".join(_EVENT_NAMES) + " FROM task_events WHERE task_id = ? ORDER BY id",
        [task_id],
    )
    return [{**dict(zip(_EVENT_NAMES, r, strict=True)), "applied": bool(r[6])} for r in rows]
