"""Helpers shared by the outcome tests: surfacings and session events as the hooks
write them (tables from migration m010), without going through a hook, and task
signals built from hook payloads by the hooks' own doors."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from memory_layer.hooks.events import parse_event
from memory_layer.hooks.tasks import from_hook_event
from memory_layer.memories import remember
from memory_layer.models import iso
from memory_layer.outcomes.signals import TaskSignal

PROJECT = "github.com/acme/api"
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


def at(minutes: float) -> str:
    return iso(T0 + timedelta(minutes=minutes))


def add_memory(db: Any, cfg: dict[str, Any], text: str, **kwargs: Any) -> str:
    kwargs.setdefault("project", PROJECT)
    kwargs.setdefault("category", "troubleshooting")
    return remember(db, text, config=cfg, dedupe=False, **kwargs).memory.id


def surface(
    db: Any,
    memory_id: str,
    session: str,
    minute: float,
    *,
    kind: str = "injected",
    project: str = PROJECT,
) -> None:
    db.execute(
        "INSERT INTO usage(memory_id, session_id, project, kind, at, query, rank, score) "
        "VALUES (?, ?, ?, ?, ?, 'q', 1, 0.5)",
        [memory_id, session, project, kind, at(minute)],
    )


def event(
    db: Any,
    session: str,
    minute: float,
    kind: str = "tool",
    *,
    tool: str | None = None,
    command: str | None = None,
    file_path: str | None = None,
    text: str | None = None,
    ok: bool = True,
    project: str = PROJECT,
) -> None:
    db.execute(
        "INSERT INTO session_events(session_id, project, at, kind, tool, command, ok, "
        "file_path, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [session, project, at(minute), kind, tool, command, int(ok), file_path, text],
    )


def session(db: Any, session_id: str, minute: float = 0, project: str = PROJECT) -> None:
    db.execute(
        "INSERT INTO sessions(session_id, project, cwd, started_at) VALUES (?, ?, ?, ?)",
        [session_id, project, "/repo", at(minute)],
    )


def hook_signal(
    payload: dict[str, Any],
    *,
    at: str,
    project: str = PROJECT,
    env: Mapping[str, str] | None = None,
) -> TaskSignal | None:
    """What the hooks hand outcome learning for this stdin payload: parsed by the
    hook's own door (``parse_event``, which reads CLAUDE_CODE_TASK_LIST_ID from ``env``,
    by default this process's environment), then into a task signal."""
    event = parse_event(payload["hook_event_name"], json.dumps(payload), env)
    return from_hook_event(event, project, at)


def claude_event(name: str, session_id: str, minute: float, **fields: Any) -> Any:
    """The task signal of hook ``name`` at ``minute`` (``at=`` overrides the time);
    ``task_list_id=`` is the hook process's CLAUDE_CODE_TASK_LIST_ID."""
    when = fields.pop("at", None) or at(minute)
    env = None
    if "task_list_id" in fields:
        env = {"CLAUDE_CODE_TASK_LIST_ID": fields.pop("task_list_id")}
    payload = {"hook_event_name": name, "session_id": session_id, "cwd": "/repo", **fields}
    return hook_signal(payload, at=when, env=env)


def claude_tool(
    session_id: str,
    minute: float,
    tool: str,
    tool_input: dict[str, Any],
    response: Any,
    **fields: Any,
) -> Any:
    """A PostToolUse of TaskCreate or TaskUpdate, as the hooks hand it over."""
    return claude_event(
        "PostToolUse",
        session_id,
        minute,
        tool_name=tool,
        tool_input=tool_input,
        tool_response=response,
        **fields,
    )


def task_update(session_id: str, task: str, minute: float, status: str, **change: str) -> Any:
    """A TaskUpdate of ``status``; ``change`` (e.g. from_="pending") adds statusChange."""
    response: dict[str, Any] = {"success": True, "taskId": task}
    if change:
        response["statusChange"] = {"from": change["from_"], "to": status}
    return claude_tool(
        session_id, minute, "TaskUpdate", {"taskId": task, "status": status}, response
    )


def task_create(session_id: str, task: str, minute: float, **fields: Any) -> Any:
    subject = f"Task {task}"
    return claude_tool(
        session_id,
        minute,
        "TaskCreate",
        {"subject": subject},
        {"task": {"id": task, "subject": subject}},
        **fields,
    )
