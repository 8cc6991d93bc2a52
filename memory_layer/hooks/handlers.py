"""One handler per hook event, shared by the hook process and the warm engine.

``handle(event, conn, config, embedder=…)`` returns what the hook prints. The
hook process calls it keyword-only (``embedder=None``) when the engine does not
answer; the engine calls it with the warm model. Same code, same rows.

Query events (SessionStart, UserPromptSubmit) are split into ``prepare`` and a
``Reply.commit`` so the engine can drop an answer the hook stopped waiting for
(the hook then answers, and records, by itself).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import datetime

from memory_layer import api
from memory_layer.errors import DatabaseError
from memory_layer.frozen import Frozen
from memory_layer.hooks.events import (
    Compacting,
    Event,
    PromptSubmitted,
    SessionEnded,
    SessionStarted,
    Stopped,
    TaskEvent,
    ToolUsed,
)
from memory_layer.hooks.log import log
from memory_layer.hooks.where import fast_project, skip_reason
from memory_layer.models import iso, utcnow

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

QUERY_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
# How long a query event's bookkeeping write (the session row, the prompt, what was
# shown) waits for another process's write lock before it is skipped: the answer is
# read in WAL mode, which never waits, and must not wait for its own bookkeeping.
BOOKKEEPING_WAIT_MS = 100
# A store that can be read but not written (a full disk, a read-only file) still answers.
_UNWRITABLE_WORDS = ("disk is full", "readonly", "read-only")


# Plain classes and ``Frozen``, not dataclasses: a hook process without the engine
# imports this module on every tool call, and ``dataclasses`` (with ``inspect``) costs
# it several milliseconds (benchmarks/RESULTS.md, "Hooks latency").
class Bookkeeping:
    """The writes that record a turn, as opposed to the answer: each waits at most
    ``BOOKKEEPING_WAIT_MS`` for a lock, and once one found the store locked the rest of
    the turn's are skipped without waiting (the other writer still holds it)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.skipped: list[str] = []

    def write(self, what: str, fn: Callable[[], object]) -> None:
        if self.skipped:
            self.skipped.append(what)
            return
        try:
            with api.brief_wait(self.conn, BOOKKEEPING_WAIT_MS):
                fn()
        except (sqlite3.OperationalError, DatabaseError) as exc:
            if api.is_locked(exc):
                why = "another process holds the store's write lock"
            elif any(word in str(exc) for word in _UNWRITABLE_WORDS):
                why = "the store cannot be written (disk full or read-only)"
            else:
                raise
            self.skipped.append(what)
            log(f"{what} skipped: {why} ({exc})")


def _nothing() -> None:
    return None


class Reply:
    """What a handler produced: stdout text and the writes still to make."""

    def __init__(self, output: str = "", commit: Callable[[], None] = _nothing) -> None:
        self.output = output
        self.commit = commit


def context_output(event_name: str, text: str) -> str:
    """The JSON form Claude Code reads as additionalContext (≤ 10,000 characters)."""
    if not text:
        return ""
    from memory_layer.hooks.inject import MAX_OUTPUT_CHARS

    if len(text) > MAX_OUTPUT_CHARS:
        text = text[: MAX_OUTPUT_CHARS - 1] + "…"
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}},
        ensure_ascii=False,
    )


def project_of(conn: sqlite3.Connection, event: Event) -> str:
    """The session's project, reusing the session row when the cwd has not changed."""
    if event.session_id:
        session = api.get_session(conn, event.session_id)
        if session is not None and session.project and session.cwd == event.directory:
            return session.project
    return fast_project(event.directory)


def _inject_limit(event: Event, config: dict[str, Any]) -> int:
    """hooks.inject_limit, unless the plugin's userConfig option overrides it."""
    option = event.options.get("inject_limit", "").strip()
    if option:
        try:
            return max(0, int(float(option)))
        except ValueError:
            log(f"CLAUDE_PLUGIN_OPTION_INJECT_LIMIT={option!r} is not a number; ignored")
    return int(config["hooks"]["inject_limit"])


def _capture_on(event: Event, config: dict[str, Any]) -> dict[str, Any]:
    """The config, with hooks.capture turned off when the plugin option says so."""
    option = event.options.get("capture", "").strip().lower()
    if option in ("false", "0", "no", "off") and config["hooks"]["capture"]:
        config = {**config, "hooks": {**config["hooks"], "capture": False}}
    return config


class Turn(Frozen):
    """What every handler works with: the store, the session's project, the config (with
    the plugin's options applied), the embedder (None: keyword-only) and the time."""

    conn: sqlite3.Connection
    project: str
    config: dict[str, Any]
    embedder: Any
    now: datetime
    books: Bookkeeping


def prepare(
    event: Event,
    conn: sqlite3.Connection,
    config: dict[str, Any],
    *,
    embedder: Any = None,
    now: datetime | None = None,
) -> Reply:
    """Handle ``event``; writes of query events wait in ``Reply.commit``."""
    now = now or utcnow()
    project = project_of(conn, event)
    if skip_reason(event, project, config):
        return Reply()
    config = _capture_on(event, config)
    books = Bookkeeping(conn)
    if event.session_id and not isinstance(event, SessionEnded):
        if event.name in QUERY_EVENTS:
            books.write("the session row", lambda: _touch(conn, event, project, iso(now)))
        else:
            _touch(conn, event, project, iso(now))
    turn = Turn(conn, project, config, embedder, now, books)
    for kind, handler in _HANDLERS:
        if isinstance(event, kind):
            return handler(event, turn)
    return Reply()


def _touch(conn: sqlite3.Connection, event: Event, project: str, at: str) -> None:
    api.touch_session(
        conn,
        event.session_id,
        project=project,
        cwd=event.directory,
        transcript_path=event.transcript_path,
        now=at,
    )


def _on_session_start(event: SessionStarted, turn: Turn) -> Reply:
    from memory_layer.hooks.inject import plan_session_start

    # The agent's context starts empty at startup, /clear and compaction; on resume it
    # still holds what was injected before, so those stay "already shown".
    if event.source != "resume":
        turn.books.write(
            "the context reset",
            lambda: api.reset_context(turn.conn, event.session_id, iso(turn.now)),
        )
    shown = api.shown_in_context(turn.conn, event.session_id)
    plan = plan_session_start(turn.conn, turn.project, turn.config, shown=shown, now=turn.now)
    return _reply(turn, event, plan)


def _on_prompt(event: PromptSubmitted, turn: Turn) -> Reply:
    from memory_layer.hooks.inject import plan_prompt, prompt_query

    shown = api.shown_in_context(turn.conn, event.session_id)
    plan = plan_prompt(
        turn.conn,
        prompt_query(event.prompt, turn.config),
        turn.project,
        turn.config,
        shown=shown,
        embedder=turn.embedder,
        now=turn.now,
        limit=_inject_limit(event, turn.config),
    )

    def record_prompt() -> None:
        at = iso(turn.now)
        api.record_event(
            turn.conn, event.session_id, turn.project, "prompt", text=event.prompt, at=at
        )

    return _reply(turn, event, plan, also=record_prompt)


def _on_tool(event: ToolUsed, turn: Turn) -> Reply:
    from memory_layer.hooks.capture import on_tool

    on_tool(turn.conn, event, turn.project, turn.config, embedder=turn.embedder, now=turn.now)
    return Reply()


def _on_compact(event: Compacting, turn: Turn) -> Reply:
    from memory_layer.hooks.capture import extract_transcript

    extract_transcript(
        turn.conn,
        event.transcript_path,
        session_id=event.session_id,
        project=turn.project,
        source="hook:PreCompact",
        config=turn.config,
        embedder=turn.embedder,
        now=turn.now,
        main=True,
    )
    return Reply()


def _on_session_end(event: SessionEnded, turn: Turn) -> Reply:
    # 1.5 s for every SessionEnd hook together: note the work, do none of it here.
    if event.session_id:
        _touch(turn.conn, event, turn.project, iso(turn.now))
        api.end_session(turn.conn, event.session_id, event.reason, iso(turn.now))
    return Reply()


def _on_task(event: TaskEvent, turn: Turn) -> Reply:
    from memory_layer.hooks.capture import task_hook

    task_hook(turn.conn, event, turn.project, turn.config, iso(turn.now))
    return Reply()


def deferred(
    event: Event,
    conn: sqlite3.Connection,
    config: dict[str, Any],
    *,
    embedder: Any = None,
    now: datetime | None = None,
    llm: bool = False,
) -> None:
    """SessionStart's slow part, done after the answer: finish sessions that ended
    with work pending, and let outcome learning reconcile this session's tasks.
    ``llm``: also the optional LLM pass (the engine only: a hook must not wait for it)."""
    from memory_layer.hooks.capture import process_pending, task_hook

    process_pending(conn, config, embedder=embedder, now=now or utcnow(), llm=llm)
    api.team_sync_soon()  # detached: team memory is pulled without the hook waiting
    project = project_of(conn, event)
    if skip_reason(event, project, config) is None:
        task_hook(conn, event, project, config)


def _reply(
    turn: Turn,
    event: Event,
    plan: Any,
    also: Callable[[], None] | None = None,
) -> Reply:
    from memory_layer.hooks.inject import commit

    def record() -> None:
        if also is not None:
            also()
        commit(turn.conn, plan, session_id=event.session_id, project=turn.project, now=turn.now)

    return Reply(context_output(event.name, plan.text), lambda: turn.books.write("the turn", record))


def _on_stop(event: Stopped, turn: Turn) -> Reply:
    from memory_layer.hooks.capture import extract_transcript

    at = iso(turn.now)
    subagent = event.name == "SubagentStop"
    if event.last_assistant_message and event.session_id:
        # Fresher than the transcript (which lags); outcome learning reads it as
        # evidence that a surfaced memory was cited.
        api.record_event(
            turn.conn,
            event.session_id,
            turn.project,
            "assistant",
            tool=(event.agent_type or None) if subagent else None,
            text=event.last_assistant_message,
            at=at,
        )
    path = event.agent_transcript_path if subagent else event.transcript_path
    if not subagent:
        from memory_layer.hooks.capture import task_hook

        task_hook(turn.conn, event, turn.project, turn.config, at)
    extract_transcript(
        turn.conn,
        path,
        session_id=event.session_id,
        project=turn.project,
        source=f"hook:{event.name}",
        config=turn.config,
        embedder=turn.embedder,
        now=turn.now,
        main=not subagent,
        subagent=subagent,
    )
    if not subagent:
        api.team_sync_soon()  # at most every 5 minutes, detached
    return Reply()


# Which handler answers which event (checked in order; the first match handles it).
_HANDLERS: tuple[tuple[type, Callable[..., Reply]], ...] = (
    (SessionStarted, _on_session_start),
    (PromptSubmitted, _on_prompt),
    (ToolUsed, _on_tool),
    (Stopped, _on_stop),
    (Compacting, _on_compact),
    (SessionEnded, _on_session_end),
    (TaskEvent, _on_task),
)


def handle(
    event: Event,
    conn: sqlite3.Connection,
    config: dict[str, Any],
    *,
    embedder: Any = None,
    now: datetime | None = None,
) -> str:
    """Handle ``event`` completely; returns what the hook prints."""
    reply = prepare(event, conn, config, embedder=embedder, now=now)
    reply.commit()
    return reply.output


def handle_captured(
    event: Event,
    conn: sqlite3.Connection,
    config: dict[str, Any],
    *,
    embedder: Any = None,
    now: datetime | None = None,
) -> None:
    """Handle a capture event (``now``: when it was acknowledged). A tool or task event
    is all or nothing: one interrupted (the engine killed, the store locked halfway) is
    handled again whole from the journal, never on top of half its writes. Transcript
    events commit as they read, and their offsets make a second run go on, not repeat."""
    if isinstance(event, ToolUsed | TaskEvent):
        with api.transaction(conn):
            handle(event, conn, config, embedder=embedder, now=now)
    else:
        handle(event, conn, config, embedder=embedder, now=now)
