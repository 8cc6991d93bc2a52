"""Hook events: Claude Code's stdin JSON parsed once, at the door, into frozen values.

Nothing past ``parse_event`` reads the raw payload. The payload format is
Claude Code's and changes between versions, so parsing is tolerant: a field of
the wrong type becomes its empty value, unknown fields are ignored, invalid
UTF-8 is replaced, and only input that is not a JSON object at all is refused
(``InvalidEvent``), which the hook turns into a logged no-op.

This module imports only the standard library: the hook's fast path (parse,
then ask the warm engine) must not pay for the rest of the package.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from memory_layer.frozen import Frozen, field

# typing costs a few ms to import and the hook's fast path needs it only for type
# checkers (annotations are strings here), so it is imported for them alone.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "EVENT_NAMES",
    "Compacting",
    "Event",
    "InvalidEvent",
    "PromptSubmitted",
    "SessionEnded",
    "SessionStarted",
    "Stopped",
    "TaskEvent",
    "ToolUsed",
    "event_from_dict",
    "parse_event",
]

# Text fields longer than this are cut at parse time: a multi-megabyte prompt or
# tool output must not be carried through recall, JSON and the socket.
MAX_TEXT = 200_000
# Plugin options from plugin.json's userConfig arrive as CLAUDE_PLUGIN_OPTION_<KEY>.
OPTION_PREFIX = "CLAUDE_PLUGIN_OPTION_"


class InvalidEvent(ValueError):
    """The hook's stdin is not a JSON object; the hook does nothing and exits 0."""


def _text(value: Any, limit: int = MAX_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


class Event(Frozen):
    """Fields every hook event has. ``name`` is the hook event we were started for.

    Frozen values, like a frozen dataclass, but not one (``memory_layer.frozen``):
    importing ``dataclasses`` (it imports ``inspect``) and generating methods for eight
    classes cost every hook process ~15 ms on its fast path. Fields are the annotated
    names of each class, in definition order, base class first; the class attribute is
    the default. Equal by value; unhashable, since events hold dicts.
    """

    name: str
    session_id: str = ""
    transcript_path: str = ""
    cwd: str = ""
    permission_mode: str = ""
    agent_id: str = ""
    agent_type: str = ""
    # From the environment, not stdin: the project root Claude Code was opened in,
    # and the plugin's userConfig options (CLAUDE_PLUGIN_OPTION_*), lower-cased keys.
    project_dir: str = ""
    options: dict[str, str] = field(default_factory=dict)
    # CLAUDE_CODE_TASK_LIST_ID of the hook's own process: the warm engine serves many
    # sessions and its environment is whichever session started it.
    task_list_id: str = ""

    @property
    def directory(self) -> str:
        """Where the session works: the payload's cwd, else the project root."""
        return self.cwd or self.project_dir

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (dict fields copied) with ``type``; see ``event_from_dict``."""
        data: dict[str, Any] = {}
        for key in self._fields:
            value = getattr(self, key)
            data[key] = dict(value) if isinstance(value, dict) else value
        data["type"] = type(self).__name__
        return data

    __hash__ = None  # type: ignore[assignment]  # equal by value, holds a dict: unhashable


class SessionStarted(Event):
    source: str = ""  # startup | resume | clear | compact | fork
    model: str = ""


class PromptSubmitted(Event):
    prompt: str = ""


class ToolUsed(Event):
    """PostToolUse and PostToolUseFailure."""

    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_response: Any = None
    tool_use_id: str = ""
    error: str | None = None  # set for PostToolUseFailure ("Exit code 1\n…")
    is_interrupt: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None


class Stopped(Event):
    """Stop and SubagentStop."""

    last_assistant_message: str = ""
    stop_hook_active: bool = False
    agent_transcript_path: str = ""


class Compacting(Event):
    trigger: str = ""
    custom_instructions: str = ""


class SessionEnded(Event):
    reason: str = ""


class TaskEvent(Event):
    """TaskCreated and TaskCompleted."""

    task_id: str = ""
    task_subject: str = ""
    task_description: str = ""
    team_name: str = ""  # names the task list when tasks are shared by a team


EVENT_TYPES: dict[str, type[Event]] = {
    "SessionStart": SessionStarted,
    "UserPromptSubmit": PromptSubmitted,
    "PostToolUse": ToolUsed,
    "PostToolUseFailure": ToolUsed,
    "Stop": Stopped,
    "SubagentStop": Stopped,
    "PreCompact": Compacting,
    "SessionEnd": SessionEnded,
    "TaskCreated": TaskEvent,
    "TaskCompleted": TaskEvent,
}
EVENT_NAMES = tuple(EVENT_TYPES)


def _options(env: Mapping[str, str]) -> dict[str, str]:
    return {
        key[len(OPTION_PREFIX) :].lower(): value
        for key, value in env.items()
        if key.startswith(OPTION_PREFIX)
    }


def _decode(raw: bytes | str) -> Any:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if not text.strip():
        raise InvalidEvent("stdin is empty; Claude Code sends the event as JSON on stdin")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidEvent(f"stdin is not JSON ({exc}); first bytes: {text[:80]!r}") from None


def parse_event(name: str, raw: bytes | str, env: Mapping[str, str] | None = None) -> Event:
    """Parse the hook's stdin for event ``name`` (the argument hooks.json passes).

    ``name`` wins over the payload's ``hook_event_name``: the launcher was
    registered for that event, and a mismatch is better logged than trusted.
    """
    if name not in EVENT_TYPES:
        raise InvalidEvent(f"unknown hook event {name!r}; expected one of {', '.join(EVENT_NAMES)}")
    data = _decode(raw)
    if not isinstance(data, dict):
        raise InvalidEvent(f"stdin is JSON but not an object ({type(data).__name__})")
    env = os.environ if env is None else env
    common: dict[str, Any] = {
        "name": name,
        "session_id": _text(data.get("session_id"), 200),
        "transcript_path": _text(data.get("transcript_path"), 4096),
        "cwd": _text(data.get("cwd"), 4096),
        "permission_mode": _text(data.get("permission_mode"), 100),
        "agent_id": _text(data.get("agent_id"), 200),
        "agent_type": _text(data.get("agent_type"), 200),
        "project_dir": _text(env.get("CLAUDE_PROJECT_DIR"), 4096),
        "options": _options(env),
        "task_list_id": _text(env.get("CLAUDE_CODE_TASK_LIST_ID"), 200),
    }
    kind = EVENT_TYPES[name]
    if kind is SessionStarted:
        return SessionStarted(
            **common, source=_text(data.get("source"), 50), model=_text(data.get("model"), 200)
        )
    if kind is PromptSubmitted:
        return PromptSubmitted(**common, prompt=_text(data.get("prompt")))
    if kind is ToolUsed:
        error: str | None = None
        if name == "PostToolUseFailure":
            error = _text(data.get("error")) or "failed"
        response = data.get("tool_response")
        if isinstance(response, str):
            response = response[:MAX_TEXT]
        elif not isinstance(response, Mapping):
            response = None
        return ToolUsed(
            **common,
            tool_name=_text(data.get("tool_name"), 200),
            tool_input=_mapping(data.get("tool_input")),
            tool_response=response,
            tool_use_id=_text(data.get("tool_use_id"), 200),
            error=error,
            is_interrupt=data.get("is_interrupt") is True,
        )
    if kind is Stopped:
        return Stopped(
            **common,
            last_assistant_message=_text(data.get("last_assistant_message")),
            stop_hook_active=data.get("stop_hook_active") is True,
            agent_transcript_path=_text(data.get("agent_transcript_path"), 4096),
        )
    if kind is Compacting:
        return Compacting(
            **common,
            trigger=_text(data.get("trigger"), 50),
            custom_instructions=_text(data.get("custom_instructions"), 10_000),
        )
    if kind is SessionEnded:
        return SessionEnded(**common, reason=_text(data.get("reason"), 100))
    task_id = data.get("task_id")
    return TaskEvent(
        **common,
        task_id=str(task_id)[:200] if isinstance(task_id, (str, int)) else "",
        task_subject=_text(data.get("task_subject"), 2_000),
        task_description=_text(data.get("task_description"), 20_000),
        team_name=_text(data.get("team_name"), 200),
    )


_BY_TYPE = {kind.__name__: kind for kind in EVENT_TYPES.values()}


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild an event sent over the engine socket (the inverse of ``to_dict``)."""
    kind = _BY_TYPE.get(str(data.get("type")))
    if kind is None:
        raise InvalidEvent(f"unknown event type {data.get('type')!r}")
    names = set(kind._fields)
    return kind(**{k: v for k, v in data.items() if k in names})
