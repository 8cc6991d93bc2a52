"""Tasks as outcome learning sees them: our key for a tracker's task, tracker times as
our stamps, the named ``UnknownTask`` error, resolving what a person typed, and whether
a person's verdict stands.

The rows themselves (``tasks``, ``task_events``) are ``storage.tasks``'s; this module
adds the outcome rules on top and re-reads what it writes so callers get the ``Task``.
"""

from __future__ import annotations

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import now_stamp
from memory_layer.storage import tasks
from memory_layer.storage.conn import Conn
from memory_layer.storage.tasks import Task, find_task

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); signals.py, on the hook path, imports this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "TRACKER_SOURCES",
    "UnknownTask",
    "get_task",
    "get_task_by_ref",
    "insert_task",
    "manual_verdict",
    "resolve_task",
    "task_key",
    "task_sessions",
    "update_task",
]


class UnknownTask(NotFound):
    """No task with that id (or external id) is known."""


def task_key(source: str, scope: str | None, external_id: str) -> str:
    """Our id for a tracker's task: Claude Code numbers tasks per list and Beads ids
    repeat across repos, so the scope (list id, project) is part of the key."""
    return f"{source}:{scope or '-'}:{external_id}"


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
    matches = tasks.tasks_with_external_id(db, ref)
    if project is not None:
        matches = [t for t in matches if t.project == project] or matches
    if not matches:
        raise UnknownTask(
            f"No task '{ref}'. `memory-layer tasks list` shows known tasks; "
            "`memory-layer outcome --memory ID` scores a single memory instead."
        )
    return matches[0]


def get_task_by_ref(db: Conn, ref: str) -> Task:
    """Our id first, then the tracker's id (see resolve_task)."""
    task = find_task(db, ref)
    return task if task is not None else resolve_task(db, ref)


def insert_task(db: Conn, values: dict[str, Any]) -> Task:
    tasks.insert_task(db, values)
    return get_task(db, values["id"])


def update_task(db: Conn, task_id: str, changes: dict[str, Any]) -> Task:
    """Change the task's columns (``updated_at`` is stamped now) and return it."""
    tasks.update_task(db, task_id, {**changes, "updated_at": now_stamp()})
    return get_task(db, task_id)


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
    last = tasks.last_applied_event(db, task_id)
    return last is not None and last[0] == "close" and not last[1].startswith(TRACKER_SOURCES)


def task_sessions(db: Conn, task: Task) -> list[str]:
    """Sessions that worked on the task: the one that created it, then any that sent
    an event for it (a shared Claude list, or bd's closed_by_session)."""
    sessions = [task.session_id] if task.session_id else []
    for session in tasks.event_sessions(db, task.id):
        if session not in sessions:
            sessions.append(session)
    return sessions
