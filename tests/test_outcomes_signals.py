"""Task signals: each door (the hooks' typed events, the task files on disk) builds the
expected frozen TaskSignal from the real payload shapes, and refuses bad ones with
InvalidTaskSignal."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from memory_layer.errors import InvalidInput
from memory_layer.hooks.events import event_from_dict, parse_event
from memory_layer.hooks.tasks import from_hook_event
from memory_layer.outcomes.claude import STATUS_EVENTS
from memory_layer.outcomes.signals import (
    STATUSES,
    InvalidTaskSignal,
    TaskSignal,
    from_task_file,
)
from tests.conftest import FIXTURES

HOOKS = FIXTURES / "hooks"
AT = "2026-06-01T09:03:00.000000+00:00"
PROJECT = "github.com/acme/api"
# The documented payloads' common fields.
DOCS = {"session_id": "abc123", "cwd": "/Users/...", "project": PROJECT, "at": AT}


def _payload(name: str) -> dict[str, Any]:
    data = json.loads((HOOKS / name).read_text())
    data.pop("_note", None)
    return data


def _signal(payload: dict[str, Any], env: dict[str, str] | None = None) -> TaskSignal | None:
    """Through the hook's door, as the hooks do: stdin bytes → typed Event → signal."""
    event = parse_event(payload["hook_event_name"], json.dumps(payload).encode(), env or {})
    return from_hook_event(event, PROJECT, AT)


def _expected(**fields: Any) -> TaskSignal:
    return TaskSignal(source="claude", **{**DOCS, **fields})


# --- the hooks -------------------------------------------------------------------------


def test_task_created_of_a_teammate() -> None:
    # The docs' example is a teammate's: the list is the team's (~/.claude/tasks/<team>).
    assert _signal(_payload("task_created.docs.json")) == _expected(
        kind="created",
        via="hook:TaskCreated",
        list_id="session-a1b2c3d4",
        team_name="session-a1b2c3d4",
        task_id="task-001",
        subject="Implement user authentication",
        description="Add login and signup endpoints",
        status="pending",
    )


def test_task_completed() -> None:
    signal = _signal(_payload("task_completed.docs.json"))
    assert signal is not None
    assert (signal.kind, signal.status, signal.via) == (
        "completed",
        "completed",
        "hook:TaskCompleted",
    )
    assert (signal.task_id, signal.list_id) == ("task-001", "session-a1b2c3d4")


def test_post_tool_use_task_update() -> None:
    assert _signal(_payload("post_tool_use_taskupdate_completed.ASSEMBLED.json")) == _expected(
        kind="completed",
        via="hook:TaskUpdate",
        list_id="abc123",
        task_id="1",
        status="completed",
        prior="in_progress",
    )


def test_post_tool_use_task_create() -> None:
    """TaskCreate{subject, description} → {task: {id, subject}} (the Tasks reference)."""
    payload = {
        **_payload("post_tool_use_taskupdate_completed.ASSEMBLED.json"),
        "tool_name": "TaskCreate",
        "tool_input": {"subject": "Write docs", "description": "outcomes.md"},
        "tool_response": {"task": {"id": 4, "subject": "Write docs"}},
    }
    assert _signal(payload) == _expected(
        kind="created",
        via="hook:TaskCreate",
        list_id="abc123",
        task_id="4",  # a number in the JSON is still the task's id
        subject="Write docs",
        description="outcomes.md",
        status="pending",
    )


def test_a_task_update_of_details_only_has_no_status() -> None:
    payload = {
        **_payload("post_tool_use_taskupdate_completed.ASSEMBLED.json"),
        "tool_input": {"taskId": "1", "subject": "Renamed"},
        "tool_response": {"success": True, "taskId": "1", "updatedFields": ["subject"]},
    }
    signal = _signal(payload)
    assert signal is not None
    assert (signal.kind, signal.status, signal.subject) == ("updated", None, "Renamed")


@pytest.mark.parametrize(
    ("name", "hook", "kind"),
    [
        ("session_start.docs.json", "SessionStart", "session-start"),
        ("stop.docs.json", "Stop", "stop"),
        ("session_end.docs.json", "SessionEnd", "session-end"),
    ],
)
def test_session_boundaries(name: str, hook: str, kind: str) -> None:
    signal = _signal(_payload(name))
    assert signal == _expected(kind=kind, via=f"hook:{hook}", list_id="abc123")
    assert signal.is_boundary and signal.task_id is None


@pytest.mark.parametrize(
    "name",
    [
        "post_tool_use_write.docs.json",
        "post_tool_use_failure_bash.docs.json",
        "user_prompt_submit.docs.json",
        "pre_compact.docs.json",
        "subagent_stop.docs.json",
    ],
)
def test_events_about_no_task_give_no_signal(name: str) -> None:
    assert _signal(_payload(name)) is None


def test_a_failed_task_tool_call_gives_no_signal() -> None:
    payload = {
        **_payload("post_tool_use_failure_bash.docs.json"),
        "tool_name": "TaskUpdate",
        "tool_input": {"taskId": "1", "status": "completed"},
    }
    assert _signal(payload) is None  # PostToolUseFailure: the update did not happen


def test_a_task_update_that_failed_gives_no_signal() -> None:
    payload = {
        **_payload("post_tool_use_taskupdate_completed.ASSEMBLED.json"),
        "tool_response": {"success": False},
    }
    assert _signal(payload) is None


def test_the_list_is_the_hook_process_shared_list_even_through_the_engine() -> None:
    payload = _payload("task_completed.docs.json")
    raw = json.dumps(payload)
    event = parse_event("TaskCompleted", raw, {"CLAUDE_CODE_TASK_LIST_ID": "shared"})
    signal = from_hook_event(event_from_dict(event.to_dict()), PROJECT, AT)  # the socket trip
    assert signal is not None and signal.list_id == "shared"
    assert signal.team_name == "session-a1b2c3d4"  # kept: team routing reads it


def test_without_a_time_the_signal_is_stamped_now() -> None:
    event = parse_event("Stop", json.dumps(_payload("stop.docs.json")), {})
    signal = from_hook_event(event, PROJECT)
    assert signal is not None and signal.at.startswith("20") and "+00:00" in signal.at


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"hook_event_name": "TaskCompleted", "session_id": "s"}, "without a task_id"),
        ({"hook_event_name": "TaskCreated", "task_id": {"id": 1}}, "without a task_id"),
        (
            {"hook_event_name": "PostToolUse", "tool_name": "TaskCreate", "tool_response": {}},
            "without task.id",
        ),
        (
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "TaskCreate",
                "tool_response": {"task": "4"},
            },
            "tool_response.task must be a JSON object",
        ),
        (
            {"hook_event_name": "PostToolUse", "tool_name": "TaskUpdate", "tool_input": "1"},
            "without taskId",
        ),
        (
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "TaskUpdate",
                "tool_input": {"taskId": "1"},
                "tool_response": {"statusChange": ["pending", "completed"]},
            },
            "statusChange must be a JSON object",
        ),
        (
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "TaskUpdate",
                "tool_input": {"taskId": "1", "status": "archived"},
            },
            "Unknown Claude task status 'archived'",
        ),
    ],
)
def test_bad_hook_payloads_are_refused_by_name(payload: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidTaskSignal, match=message) as raised:
        _signal(payload)
    assert isinstance(raised.value, InvalidInput)  # a MemoryLayerError the hook logs


# --- the task files ---------------------------------------------------------------------


def test_task_file_on_disk() -> None:
    data = json.loads((HOOKS / "task_file_on_disk.example.json").read_text())
    assert from_task_file(data, list_id="sess-a", at=AT) == TaskSignal(
        source="claude",
        kind="updated",
        via="sync:disk",
        at=AT,
        session_id="sess-a",
        list_id="sess-a",
        task_id="88",
        subject="My Task",
        description="...",
        status="pending",
    )
    done = from_task_file({**data, "status": "completed"}, list_id="sess-a", at=AT)
    assert (done.kind, done.status) == ("completed", "completed")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"id": "1"}], "not a task object"),
        ({"subject": "x", "status": "pending"}, "no id"),
        ({"id": "1", "status": "archived"}, "unknown status 'archived'"),
        ({"id": "1"}, "unknown status None"),
    ],
)
def test_bad_task_files_are_refused_by_name(data: Any, message: str) -> None:
    with pytest.raises(InvalidTaskSignal, match=message):
        from_task_file(data, list_id="s", at=AT)


# --- the signal itself --------------------------------------------------------------------


def test_a_signal_is_immutable() -> None:
    signal = _signal(_payload("task_created.docs.json"))
    assert signal is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        signal.status = "completed"  # type: ignore[misc]
    changed = dataclasses.replace(signal, status="completed")
    assert (signal.status, changed.status) == ("pending", "completed")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"source": "jira", "kind": "created", "task_id": "1"}, "Unknown task source"),
        ({"kind": "reopened", "task_id": "1"}, "Unknown task signal kind"),
        ({"kind": "completed"}, "without a task id"),
        ({"kind": "updated", "task_id": "1", "status": "done"}, "Unknown Claude task status"),
        ({"kind": "stop", "at": ""}, "the time it was seen"),
    ],
)
def test_a_signal_cannot_be_built_inconsistent(fields: dict[str, Any], message: str) -> None:
    values = {"source": "claude", "via": "test", "at": AT, **fields}
    with pytest.raises(InvalidTaskSignal, match=message):
        TaskSignal(**values)


def test_every_status_a_signal_can_carry_maps_to_a_transition() -> None:
    assert set(STATUS_EVENTS) == set(STATUSES)


def test_the_hook_logs_a_refused_payload_and_goes_on(db: Any) -> None:
    from memory_layer.hooks.capture import task_hook
    from memory_layer.hooks.log import log_path

    event = parse_event("TaskCompleted", json.dumps({"session_id": "s1"}), {})
    task_hook(db, event, PROJECT, {}, AT)  # no exception reaches the session
    assert db.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    logged = Path(log_path()).read_text()
    assert "InvalidTaskSignal" in logged and "TaskCompleted without a task_id" in logged
