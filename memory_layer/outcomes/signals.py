"""Task signals: what Claude Code said about a task, parsed once at the door.

Claude Code tells us about its tasks three ways: the TaskCreated / TaskCompleted
hooks, the PostToolUse of its TaskCreate / TaskUpdate tools, and the task files it
keeps in ``~/.claude/tasks/<list>/<id>.json``. Session boundaries (SessionStart,
Stop, SessionEnd) are when outcome learning goes and reads those files. Each of them
becomes one frozen ``TaskSignal`` here, the only place that reads those payloads;
``outcomes.claude`` reads signals and nothing else. A payload that cannot say which
task it is about is refused with ``InvalidTaskSignal``, which the hook logs.

Config is not part of a signal: it is what we do with the signal, not what the
tracker said, and it travels as a separate argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.errors import InvalidInput
from memory_layer.hooks.events import TaskEvent, ToolUsed
from memory_layer.outcomes.store import now_stamp, stamp

# typing costs a few ms to import and only type checkers need it here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.hooks.events import Event

__all__ = [
    "BOUNDARY_KINDS",
    "CLAUDE",
    "KINDS",
    "STATUSES",
    "VIA_TASK_UPDATE",
    "InvalidTaskSignal",
    "TaskSignal",
    "from_hook_event",
    "from_task_file",
    "kind_for",
]

CLAUDE = "claude"
SOURCES = frozenset({CLAUDE})

# What a signal says happened. Task kinds name a task; boundary kinds name a moment of
# the session when its task files are read again (and, at Stop, the turn re-judged).
CREATED = "created"
UPDATED = "updated"
COMPLETED = "completed"
DELETED = "deleted"
SESSION_START = "session-start"
STOP = "stop"
SESSION_END = "session-end"
TASK_KINDS = frozenset({CREATED, UPDATED, COMPLETED, DELETED})
BOUNDARY_KINDS = frozenset({SESSION_START, STOP, SESSION_END})
KINDS = TASK_KINDS | BOUNDARY_KINDS

# Claude Code's task statuses (TaskUpdate's ``status``, the task files' ``status``).
STATUSES = ("pending", "in_progress", "completed", "deleted")

BOUNDARY_EVENTS = {"SessionStart": SESSION_START, "Stop": STOP, "SessionEnd": SESSION_END}
TASK_EVENTS = {"TaskCreated": CREATED, "TaskCompleted": COMPLETED}
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})
# The channel of a TaskUpdate's PostToolUse: the one task signal that never names the
# team, so outcome learning looks for the team task it may belong to.
VIA_TASK_UPDATE = "hook:TaskUpdate"
VIA_DISK = "sync:disk"


class InvalidTaskSignal(InvalidInput):
    """A task payload without the fields it needs (no task id, an unknown status, a
    field of the wrong shape); the hook logs it and goes on."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSignal:
    """One thing a tracker said about a task, or a session boundary.

    ``list_id`` is the task list the task is in, resolved at the door:
    ``CLAUDE_CODE_TASK_LIST_ID`` of the hook's own process when set (a shared list),
    else the team name, else the session id: the directory Claude Code writes the task
    files to. ``status`` is None for a TaskUpdate of details only (subject, owner).
    ``prior`` is the status a TaskUpdate changed the task from (statusChange.from).
    ``via`` is the channel it came by, the source its task event is logged under
    ("hook:TaskCreated", "hook:TaskUpdate", "sync:disk", …). ``at`` is when the hook
    saw it (the same stamp as its session events), or the task file's mtime.
    """

    source: str
    kind: str
    via: str
    at: str
    session_id: str | None = None
    project: str | None = None
    cwd: str | None = None
    list_id: str | None = None
    team_name: str | None = None
    task_id: str | None = None
    subject: str | None = None
    description: str | None = None
    status: str | None = None
    prior: str | None = None

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise InvalidTaskSignal(
                f"Unknown task source {self.source!r}; expected one of {', '.join(SOURCES)}."
            )
        if self.kind not in KINDS:
            raise InvalidTaskSignal(
                f"Unknown task signal kind {self.kind!r}; expected one of "
                f"{', '.join(sorted(KINDS))}."
            )
        if not self.at:
            raise InvalidTaskSignal("A task signal needs the time it was seen (at).")
        if self.kind in TASK_KINDS and not self.task_id:
            raise InvalidTaskSignal(f"A {self.kind} task signal without a task id.")
        if self.status is not None and self.status not in STATUSES:
            raise InvalidTaskSignal(
                f"Unknown Claude task status {self.status!r}; expected one of "
                f"{', '.join(STATUSES)}."
            )

    @property
    def is_boundary(self) -> bool:
        return self.kind in BOUNDARY_KINDS


def kind_for(status: str | None) -> str:
    """The kind of a status statement (a TaskUpdate, a task file)."""
    return status if status in (COMPLETED, DELETED) else UPDATED


def _str(value: Any) -> str | None:
    """An id or text from JSON: strings and numbers, stripped; None when empty."""
    if value is None:
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        text = str(value).strip()
        return text or None
    return None


def _mapping(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidTaskSignal(f"{name} must be a JSON object, got {type(value).__name__}.")
    return value


def from_hook_event(event: Event, project: str | None, at: str | None = None) -> TaskSignal | None:
    """The task signal in a typed hook event, or None when it says nothing about a task
    (another tool, a PostToolUseFailure, a TaskUpdate that did not happen).

    ``project`` is the one the hooks resolved for the session; ``at`` when the hook saw
    the event (now when not given). Raises ``InvalidTaskSignal`` for a task event
    that does not say which task, or with a field of the wrong shape.
    """
    session_id = _str(event.session_id)
    # Only TaskCreated / TaskCompleted name the team (agent teams).
    team_name = _str(event.team_name) if isinstance(event, TaskEvent) else None
    common: dict[str, Any] = {
        "source": CLAUDE,
        "via": f"hook:{event.name}",
        "at": stamp(at) or now_stamp(),
        "session_id": session_id,
        "project": _str(project),
        "cwd": event.directory or None,
        # The hook process's CLAUDE_CODE_TASK_LIST_ID, never the engine's environment:
        # the warm engine serves every session, and its own is whichever one started it.
        "list_id": _str(event.task_list_id) or team_name or session_id,
        "team_name": team_name,
    }
    if event.name in BOUNDARY_EVENTS:
        return TaskSignal(kind=BOUNDARY_EVENTS[event.name], **common)
    if isinstance(event, TaskEvent) and event.name in TASK_EVENTS:
        kind = TASK_EVENTS[event.name]
        task_id = _str(event.task_id)
        if not task_id:
            raise InvalidTaskSignal(f"{event.name} without a task_id; nothing to record.")
        return TaskSignal(
            kind=kind,
            task_id=task_id,
            status="completed" if kind == COMPLETED else "pending",
            subject=_str(event.task_subject),
            description=_str(event.task_description),
            **common,
        )
    if isinstance(event, ToolUsed) and event.name == "PostToolUse":
        if event.tool_name in TASK_TOOLS:
            return _from_task_tool(event, {**common, "via": f"hook:{event.tool_name}"})
    return None


def _from_task_tool(event: ToolUsed, common: dict[str, Any]) -> TaskSignal | None:
    """PostToolUse of TaskCreate ({task: {id, subject}}) or TaskUpdate ({success,
    taskId, statusChange: {from, to}})."""
    tool_input = event.tool_input
    # The input names the task and the status; a result of an unexpected shape (a
    # string from some future version) must not lose the event.
    response = event.tool_response if isinstance(event.tool_response, dict) else {}
    if event.tool_name == "TaskCreate":
        task = _mapping(response.get("task"), "tool_response.task")
        task_id = _str(task.get("id")) or _str(response.get("taskId"))
        if not task_id:
            raise InvalidTaskSignal("TaskCreate result without task.id; nothing to record.")
        return TaskSignal(
            kind=CREATED,
            task_id=task_id,
            status="pending",
            subject=_str(task.get("subject")) or _str(tool_input.get("subject")),
            description=_str(tool_input.get("description")),
            **common,
        )
    if response.get("success") is False:
        return None  # the update did not happen
    task_id = _str(tool_input.get("taskId")) or _str(response.get("taskId"))
    if not task_id:
        raise InvalidTaskSignal("TaskUpdate without taskId; nothing to record.")
    change = _mapping(response.get("statusChange"), "tool_response.statusChange")
    status = _str(change.get("to")) or _str(tool_input.get("status"))
    return TaskSignal(
        kind=kind_for(status),
        task_id=task_id,
        status=status,
        prior=_str(change.get("from")),
        subject=_str(tool_input.get("subject")),
        description=_str(tool_input.get("description")),
        **common,
    )


def from_task_file(data: Any, *, list_id: str, at: str) -> TaskSignal:
    """The signal of one task file, read at its modification time ``at``.

    The list is the directory's name; it is the session's id unless the task list is
    shared or a team's, which only our store knows (reconciliation fills that in).
    Raises ``InvalidTaskSignal`` for a file without an id or a known status.
    """
    if not isinstance(data, dict):
        raise InvalidTaskSignal("not a task object")
    task_id = _str(data.get("id"))
    status = _str(data.get("status"))
    if not task_id or status not in STATUSES:
        raise InvalidTaskSignal(f"no id or unknown status {status!r}")
    return TaskSignal(
        source=CLAUDE,
        kind=kind_for(status),
        via=VIA_DISK,
        at=at,
        session_id=list_id,
        list_id=list_id,
        task_id=task_id,
        status=status,
        subject=_str(data.get("subject")),
        description=_str(data.get("description")),
    )
