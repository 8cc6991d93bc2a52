"""The hooks' task events as outcome-learning signals, built once at the hook door.

TaskCreated / TaskCompleted, the PostToolUse of the TaskCreate / TaskUpdate tools and
the session boundaries (SessionStart, Stop, SessionEnd) become one frozen
``TaskSignal`` (``memory_layer.outcomes.signals``); past this module nothing reads the
hook payload.
"""

from __future__ import annotations

from memory_layer.hooks.events import TaskEvent, ToolUsed
from memory_layer.models import now_stamp, stamp
from memory_layer.outcomes.signals import (
    BOUNDARY_EVENTS,
    CLAUDE,
    COMPLETED,
    CREATED,
    TASK_EVENTS,
    TASK_TOOLS,
    InvalidTaskSignal,
    TaskSignal,
    kind_for,
    mapping_of,
    text_of,
)

# typing costs a few ms to import and only type checkers need it here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.hooks.events import Event


def from_hook_event(event: Event, project: str | None, at: str | None = None) -> TaskSignal | None:
    """The task signal in a typed hook event, or None when it says nothing about a task
    (another tool, a PostToolUseFailure, a TaskUpdate that did not happen).

    ``project`` is the one the hooks resolved for the session; ``at`` when the hook saw
    the event (now when not given). Raises ``InvalidTaskSignal`` for a task event
    that does not say which task, or with a field of the wrong shape.
    """
    session_id = text_of(event.session_id)
    # Only TaskCreated / TaskCompleted name the team (agent teams).
    team_name = text_of(event.team_name) if isinstance(event, TaskEvent) else None
    common: dict[str, Any] = {
        "source": CLAUDE,
        "via": f"hook:{event.name}",
        "at": stamp(at) or now_stamp(),
        "session_id": session_id,
        "project": text_of(project),
        "cwd": event.directory or None,
        # The hook process's CLAUDE_CODE_TASK_LIST_ID, never the engine's environment:
        # the warm engine serves every session, and its own is whichever one started it.
        "list_id": text_of(event.task_list_id) or team_name or session_id,
        "team_name": team_name,
    }
    if event.name in BOUNDARY_EVENTS:
        return TaskSignal(kind=BOUNDARY_EVENTS[event.name], **common)
    if isinstance(event, TaskEvent) and event.name in TASK_EVENTS:
        kind = TASK_EVENTS[event.name]
        task_id = text_of(event.task_id)
        if not task_id:
            raise InvalidTaskSignal(f"{event.name} without a task_id; nothing to record.")
        return TaskSignal(
            kind=kind,
            task_id=task_id,
            status="completed" if kind == COMPLETED else "pending",
            subject=text_of(event.task_subject),
            description=text_of(event.task_description),
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
        task = mapping_of(response.get("task"), "tool_response.task")
        task_id = text_of(task.get("id")) or text_of(response.get("taskId"))
        if not task_id:
            raise InvalidTaskSignal("TaskCreate result without task.id; nothing to record.")
        return TaskSignal(
            kind=CREATED,
            task_id=task_id,
            status="pending",
            subject=text_of(task.get("subject")) or text_of(tool_input.get("subject")),
            description=text_of(tool_input.get("description")),
            **common,
        )
    if response.get("success") is False:
        return None  # the update did not happen
    task_id = text_of(tool_input.get("taskId")) or text_of(response.get("taskId"))
    if not task_id:
        raise InvalidTaskSignal("TaskUpdate without taskId; nothing to record.")
    change = mapping_of(response.get("statusChange"), "tool_response.statusChange")
    status = text_of(change.get("to")) or text_of(tool_input.get("status"))
    return TaskSignal(
        kind=kind_for(status),
        task_id=task_id,
        status=status,
        prior=text_of(change.get("from")),
        subject=text_of(tool_input.get("subject")),
        description=text_of(tool_input.get("description")),
        **common,
    )
