"""Capture wiring: tool events and transcripts in, memories out through ``remember``.

The rules live in ``memory_layer.capture`` (pure functions); this module feeds
them what the hooks saw and stores what they propose. ``remember`` cleans the
text, de-duplicates and reinforces, so a lesson seen again strengthens the old
memory instead of adding a copy. Each transcript line and each tool event is
looked at once (offsets, and "new since the previous event"), so one sighting
never reinforces a memory twice.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime

from memory_layer import api
from memory_layer.api import Candidate
from memory_layer.hooks.events import SessionEnded, ToolUsed
from memory_layer.hooks.log import log
from memory_layer.models import iso

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
TASK_TOOLS = frozenset({"TaskCreate", "TaskUpdate"})


def store_candidates(
    conn: sqlite3.Connection,
    candidates: list[Candidate],
    *,
    project: str,
    source: str,
    config: dict[str, Any],
    embedder: Any,
    now: datetime,
) -> list[str]:
    """``remember`` each confident candidate; returns the ids created or reinforced.

    Through the one write path: the trust policy decides whether captured memories
    wait for review, and an active capture is stamped like any other trusted write.
    No fallback: if the policy cannot say (a broken trust setting), nothing is stored
    (logged, the hook exits 0) rather than storing records active that should wait."""
    from memory_layer.errors import MemoryLayerError

    ids: list[str] = []
    for cand in confident(candidates, config):
        try:
            result = api.remember(
                conn,
                cand.text,
                config=config,
                category=cand.category,
                project=project,
                source=source,
                confidence=cand.confidence,
                embedder=embedder,
                now=now,
                origin=cand.origin or None,
            )
        except MemoryLayerError as exc:  # one bad candidate must not lose the others
            log(f"{source}: candidate not stored ({exc}): {cand.text[:120]!r}")
            continue
        if cand.replaces and result.created:
            # A changed rule ("Vitest instead of Jest") retires the one it replaces.
            api.supersede_mentions(conn, result.memory, cand.replaces, actor=source)
        ids.append(result.memory.id)
    return ids


def confident(candidates: list[Candidate], config: dict[str, Any]) -> list[Candidate]:
    """The candidates confident enough to store (hooks.min_capture_confidence)."""
    floor = float(config["hooks"]["min_capture_confidence"])
    return [cand for cand in candidates if cand.confidence >= floor]


def transcript_candidates(
    entries: list[Any],
    *,
    subagent: bool = False,
    tools: bool = False,
    cwd: str = "",
    tool_text: Any = None,
    embedder: Any = None,
) -> list[Candidate]:
    """What capture proposes from transcript entries: the prose extractors, and with
    ``tools`` the tool-event signals too (fail -> fix, commands), which a live session
    gets from PostToolUse instead. The one place a transcript becomes candidates: the
    Stop/PreCompact/SessionEnd hooks and `memory-layer backfill` both come here.
    ``tool_text`` (``api.transcript_tool_text``): the tool text earlier batches of the
    transcript showed, extended with this batch's. ``embedder``: the loaded model, whose
    vectors let the learned classifier (``capture.learned``) drop weak rule candidates and
    admit sentences the rules miss; None (keyword-only, a hook without the engine) or a
    model it was not trained for leaves the rules alone."""
    from memory_layer.api import capture_judge, extract_from_entries

    judge = capture_judge(embedder) if embedder is not None else None
    found = list(extract_from_entries(_own_entries(entries, subagent), tool_text, judge))
    if tools:
        from memory_layer.api import events_from_entries, signal_candidates

        found += signal_candidates(events_from_entries(entries), cwd)
    return found


def classifier_embedder(config: dict[str, Any], embedder: Any) -> Any:
    """The embedder the learned classifier may use: None (the rules alone) unless
    ``hooks.capture_classifier`` is on, since it embeds up to hundreds of sentences per
    Stop."""
    return embedder if config["hooks"].get("capture_classifier") else None


def _own_entries(entries: list[Any], subagent: bool) -> list[Any]:
    if not subagent:
        return entries
    from dataclasses import replace  # transcripts only: PostToolUse never needs it

    # A subagent's transcript is all sidechain, and its "user" turns are the main
    # agent's instructions, not the user's: keep only the subagent's own findings.
    # Tool results stay: relay detection must see what a tool returned to the
    # subagent, or a fetched page it repeats would pass as its own words.
    return [
        replace(e, is_sidechain=False) for e in entries if e.role == "assistant" or e.is_tool_result
    ]


def _tool_fields(event: ToolUsed) -> dict[str, Any]:
    """The session-event row for a tool call, via capture.signals' own reduction."""
    from memory_layer.api import event_from_hook

    tool = event_from_hook(
        event.tool_name, event.tool_input, event.tool_response, error=event.error
    )
    failed = not tool.ok or event.is_interrupt
    # The failure text the signals read is error + output (an interrupted command
    # has no error, only output), so both are kept together.
    error = "\n".join(part for part in (tool.error, tool.output) if part) if failed else ""
    return {
        "tool": event.tool_name,
        "command": tool.command,
        "ok": not failed,
        "error": error,
        "file_path": tool.file_path,
        "text": edit_text(event.tool_input) if event.tool_name in EDIT_TOOLS else "",
    }


def edit_text(tool_input: dict[str, Any]) -> str:
    """The text an edit wrote (Edit new_string, Write content, MultiEdit's new strings).

    Outcome learning reads it as evidence that a surfaced fix was applied; activity
    cleans and bounds it like every session-event text.
    """

    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    parts = [text(tool_input.get("new_string")), text(tool_input.get("content"))]
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        parts += [text(e.get("new_string")) for e in edits if isinstance(e, dict)]
    parts.append(text(tool_input.get("new_source")))  # NotebookEdit
    return "\n".join(p for p in parts if p)


def on_tool(
    conn: sqlite3.Connection,
    event: ToolUsed,
    project: str,
    config: dict[str, Any],
    *,
    embedder: Any,
    now: datetime,
) -> list[str]:
    """PostToolUse / PostToolUseFailure: log the call, then store new signals."""
    from memory_layer.api import ToolEvent, command_candidates, signal_candidates

    fields = _tool_fields(event)
    at = iso(now)
    event_id = api.record_event(
        conn,
        event.session_id,
        project,
        "tool",
        tool=fields["tool"],
        command=fields["command"] or None,
        ok=fields["ok"],
        error=fields["error"] or None,
        file_path=fields["file_path"] or None,
        text=fields["text"] or None,
        at=at,
    )
    stored: list[str] = []
    if event.tool_name in TASK_TOOLS:
        task_hook(conn, event, project, config, at)
    if not config["hooks"]["capture"] or event.tool_name not in SHELL_TOOLS | EDIT_TOOLS:
        return stored
    # The stored rows, not the raw payload: exactly what later calls will see.
    rows = api.recent_tool_events(conn, event.session_id, before_id=event_id + 1)
    window = [ToolEvent.from_dict(row) for row in rows]
    cwd = event.directory
    # Only stories closed by this event; a command already proposed earlier in the
    # window is not proposed again (every green test run would reinforce it).
    seen = {c.text for c in command_candidates(window[:-1])}
    new = [
        c for c in signal_candidates(window, cwd, new_from=len(window) - 1) if c.text not in seen
    ]
    if new:
        stored = store_candidates(
            conn,
            new,
            project=project,
            source=f"hook:{event.name}",
            config=config,
            embedder=embedder,
            now=now,
        )
    return stored


def task_hook(
    conn: sqlite3.Connection,
    event: Any,
    project: str,
    config: dict[str, Any],
    at: str | None = None,
) -> None:
    """Hand what a hook event says about tasks to outcome learning, as a task signal
    built once from the typed event (``at``: when the hook saw it, the same stamp as its
    session events).

    Besides task events proper, SessionStart, Stop and (deferred) SessionEnd go
    there too: outcome learning reconciles the session's task files from disk,
    catching task changes whose hooks were missed.
    """
    try:
        from memory_layer.api import on_task_signal
        from memory_layer.hooks.tasks import from_hook_event

        signal = from_hook_event(event, project, at)
        if signal is not None:
            on_task_signal(conn, signal, config)
    except Exception as exc:  # outcome learning failing must not fail capture
        log(f"outcome learning failed for {event.name}", exc=exc)


def extract_transcript(
    conn: sqlite3.Connection,
    path: str,
    *,
    session_id: str,
    project: str,
    source: str,
    config: dict[str, Any],
    embedder: Any,
    now: datetime,
    main: bool,
    subagent: bool = False,
) -> list[str]:
    """Run the prose extractors over what the transcript gained since last time."""
    from memory_layer.api import read_new_entries

    if not path:
        return []
    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        log(f"{source}: transcript {path} does not exist; nothing extracted")
        return []
    offset = api.transcript_offset(conn, path)
    entries, new_offset = read_new_entries(
        path, offset, max_bytes=int(config["hooks"]["transcript_max_bytes"])
    )
    stored: list[str] = []
    tool_text = None
    if entries:
        # Relay detection sees what earlier batches (turns, max_bytes splits) returned.
        tool_text = api.transcript_tool_text(conn, path)
    if tool_text is not None and not config["hooks"]["capture"]:
        # Capture off still follows the session's tool text (hashes only), so turning
        # it back on mid-session does not trust a relay of what was read meanwhile.
        api.observe_tool_text(_own_entries(entries, subagent), tool_text)
    elif tool_text is not None:
        stored = store_candidates(
            conn,
            transcript_candidates(
                entries,
                subagent=subagent,
                tool_text=tool_text,
                embedder=classifier_embedder(config, embedder),
            ),
            project=project,
            source=source,
            config=config,
            embedder=embedder,
            now=now,
        )
    if new_offset != offset:
        api.set_transcript_offset(
            conn, path, session_id, new_offset, main=main, tool_text=tool_text
        )
    return stored


def llm_extract_session(
    conn: sqlite3.Connection,
    path: str,
    *,
    session_id: str,
    project: str,
    config: dict[str, Any],
    embedder: Any,
    now: datetime,
    cwd: str = "",
) -> list[str]:
    """The optional LLM pass over what this transcript gained since its last LLM pass."""
    from memory_layer.api import read_new_entries
    from memory_layer.hooks import llm

    path = os.path.expanduser(path)
    if not os.path.isfile(path):
        return []
    key = f"llm:{path}"  # an offset of its own: the rule extractors read on every Stop
    offset = api.transcript_offset(conn, key)
    entries, new_offset = read_new_entries(
        path, offset, max_bytes=int(config["hooks"]["transcript_max_bytes"])
    )
    found = llm.extract(conn, entries, session_id=session_id, config=config, cwd=cwd)
    stored = store_candidates(
        conn,
        found,
        project=project,
        source="hook:llm",
        config=config,
        embedder=embedder,
        now=now,
    )
    if new_offset != offset:
        api.set_transcript_offset(conn, key, session_id, new_offset, main=False)
    return stored


def _unread(conn: sqlite3.Connection, path: str, before: int) -> bool:
    """Whether this run advanced through the transcript and left some of it unread (a
    run that could not advance, e.g. on a half-written last line, is done for now)."""
    after = api.transcript_offset(conn, path)
    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    return before < after < size


def process_pending(
    conn: sqlite3.Connection,
    config: dict[str, Any],
    *,
    embedder: Any,
    now: datetime,
    llm: bool = False,
) -> int:
    """Finish what SessionEnd left: extract the rest of each ended session's transcript
    (and, when ``llm`` and hooks.llm.enabled, send its prose to the LLM once)."""
    from memory_layer.hooks.where import skip_reason

    done = 0
    for session in api.pending_sessions(conn):
        ended = SessionEnded(
            name="SessionEnd", session_id=session.session_id, cwd=session.cwd or ""
        )
        more = False
        try:
            # Opted out since it ended (ignore file, config): leave it alone.
            if session.project and not skip_reason(ended, session.project, config):
                if session.transcript_path:
                    path = os.path.expanduser(session.transcript_path)
                    before = api.transcript_offset(conn, path)
                    extract_transcript(
                        conn,
                        session.transcript_path,
                        session_id=session.session_id,
                        project=session.project,
                        source="hook:SessionEnd",
                        config=config,
                        embedder=embedder,
                        now=now,
                        main=True,
                    )
                    more = _unread(conn, path, before)
                if more:
                    # A run reads at most transcript_max_bytes: the session stays pending
                    # and the next run goes on, so a long transcript's end is not lost.
                    continue
                task_hook(conn, ended, session.project, config)
                if llm and config["hooks"]["llm"]["enabled"] and session.transcript_path:
                    llm_extract_session(
                        conn,
                        session.transcript_path,
                        session_id=session.session_id,
                        project=session.project,
                        config=config,
                        embedder=embedder,
                        now=now,
                        cwd=session.cwd or "",
                    )
        except Exception as exc:  # one bad transcript must not block the queue forever
            log(f"pending extraction failed for session {session.session_id}", exc=exc)
        api.clear_pending(conn, session.session_id)
        done += 1
    return done
