"""Task signals: what Claude Code said about a task, parsed once at the door.

Claude Code tells us about its tasks three ways: the TaskCreated / TaskCompleted
hooks, the PostToolUse of its TaskCreate / TaskUpdate tools, and the task files it
keeps in ``~/.claude/tasks/<list>/<id>.json``. Session boundaries (SessionStart,
Stop, SessionEnd) are when outcome learning goes and reads those files. Each of them
becomes one frozen ``TaskSignal``: the hook door builds it from its typed event
(``hooks.tasks.from_hook_event``), reconciliation from a task file
(``from_task_file``, here); ``outcomes.claude`` reads signals and nothing else. A payload that cannot say which
task it is about is refused with ``InvalidTaskSignal``, which the hook logs.

Config is not part of a signal: it is what we do with the signal, not what the
tracker said, and it travels as a separate argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.errors import InvalidInput

# typing costs a few ms to import and only type checkers need it here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "BOUNDARY_KINDS",
    "CLAUDE",
    "KINDS",
    "STATUSES",
    "VIA_TASK_UPDATE",
    "InvalidTaskSignal",
    "TaskSignal",
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


def text_of(value: Any) -> str | None:
    """An id or text from JSON: strings and numbers, stripped; None when empty."""
    if value is None:
        return None
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        text = str(value).strip()
        return text or None
    return None


def mapping_of(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidTaskSignal(f"{name} must be a JSON object, got {type(value).__name__}.")
    return value


def from_task_file(data: Any, *, list_id: str, at: str) -> TaskSignal:
    """The signal of one task file, read at its modification time ``at``.

    The list is the directory's name; it is the session's id unless the task list is
    shared or a team's, which only our store knows (reconciliation fills that in).
    Raises ``InvalidTaskSignal`` for a file without an id or a known status.
    """
    if not isinstance(data, dict):
        raise InvalidTaskSignal("not a task object")
    task_id = text_of(data.get("id"))
    status = text_of(data.get("status"))
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
        subject=text_of(data.get("subject")),
        description=text_of(data.get("description")),
    )
