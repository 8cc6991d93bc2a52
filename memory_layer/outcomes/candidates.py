"""Which memories a closed task credits, and the weight each one's evidence earns.

Separate from ``outcomes.credit`` (which applies the weights to scores and undoes
them exactly) because it is the judgement alone: which memories were *surfaced*
for the task inside its work window (``window``), whether a session not tied to
the task worked on it at all, and how strongly each memory was *acted on*
(evidence.py). It reads the store and writes nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from memory_layer.errors import NotFound
from memory_layer.models import Memory, iso, parse_time
from memory_layer.outcomes.evidence import (
    MIN_EVIDENCE,
    Distinction,
    distinction,
    match_event,
    rarity_in,
    signature,
    terms_of,
)
from memory_layer.outcomes.rules import Settings
from memory_layer.outcomes.store import task_sessions
from memory_layer.storage import fts, textindex
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import get_memory
from memory_layer.storage.sessions import (
    has_work_events,
    last_prompt_at,
    prompt_texts,
    work_events,
)
from memory_layer.storage.tasks import Task, started_spans
from memory_layer.storage.usage import (
    FirstSurfacing,
    first_surfacings_in_project,
    first_surfacings_in_sessions,
)

MAX_EVIDENCE = 6


@dataclass
class Candidate:
    memory_id: str
    weight: float = 0.0
    evidence: list[dict[str, Any]] = field(default_factory=list)


def _shift(stamp: str, seconds: float) -> str:
    return iso(parse_time(stamp) + timedelta(seconds=seconds))


def window(db: Conn, task: Task, rules: Settings, end: str) -> tuple[str, str]:
    """(start, end) of the work on a task: evidence of use must fall inside it.

    Claude tasks start when they went in_progress: agents create several tasks up
    front and work through them in one turn, so the turn's start would hand one
    task's work to all of them. A Claude task never started begins with the turn that
    created it (the last prompt at or before it opened; else ``lead_seconds`` before).
    Other tasks start when work started, else when opened but at most
    ``fallback_window_hours`` before the close.
    """
    if task.source == "claude" and not task.started_at:
        turn = last_prompt_at(db, task.session_id, task.opened_at) if task.session_id else None
        start = turn or _shift(task.opened_at, -rules.lead_seconds)
        return start, end
    if task.started_at:
        return task.started_at, end
    fallback = _shift(end, -rules.fallback_window_hours * 3600)
    # A task first heard of at its close (opened_at == end) gets the fallback window.
    start = max(task.opened_at, fallback) if task.opened_at < end else fallback
    return start, end


def _surfacings(
    db: Conn, task: Task, start: str, end: str, rules: Settings
) -> list[FirstSurfacing]:
    """The first surfacing of each candidate per session, earliest first."""
    found = first_surfacings_in_sessions(db, task_sessions(db, task), end)
    if task.source != "claude" and task.project:
        # No session ties a Beads issue to the work: the project's surfacings while it
        # was open are candidates; evidence of use decides how much each one gets.
        found += first_surfacings_in_project(
            db, task.project, _shift(start, -rules.lead_seconds), end
        )
    return list(dict.fromkeys(found))


def _session_events(db: Conn, session_id: str, start: str, end: str) -> list[dict[str, Any]]:
    """The session's tool and assistant events, as the dicts ``evidence`` matches."""
    return [
        {
            "at": e.at,
            "kind": e.kind,
            "tool": e.tool,
            "command": e.command,
            "ok": e.ok,
            "file_path": e.file_path,
            "text": e.text,
        }
        for e in work_events(db, session_id, start, end)
    ]


def candidates(
    db: Conn,
    task: Task,
    rules: Settings,
    *,
    end: str,
    evidence_end: str | None = None,
    closer: str | None = None,
) -> list[Candidate]:
    """Memories surfaced for the task by ``end``, weighed by evidence of use up to
    ``evidence_end`` (default ``end``; later for the turn's closing message).

    ``closer`` is the session that closed the task (None for a person's verdict): only
    a memory that session itself was shown may get the ``unobserved_weight`` guess."""
    start, end = window(db, task, rules, end)
    until = max(end, evidence_end or end)
    shown: list[tuple[FirstSurfacing, Memory]] = []
    for surfacing in _surfacings(db, task, start, end, rules):
        try:
            shown.append((surfacing, get_memory(db, surfacing.memory_id)))
        except NotFound:
            continue  # purged since it was shown
    sigs = {memory.id: signature(memory.id, memory.text) for _, memory in shown}
    rarity = _store_rarity(db)
    tied = set(task_sessions(db, task)) | ({closer} if closer else set())
    found: dict[str, Candidate] = {}
    events_cache: dict[str | None, list[dict[str, Any]]] = {}
    observed: dict[str | None, bool] = {}
    problems: dict[str | None, str] = {}
    unrelated: dict[str | None, bool] = {}
    for surfacing, memory in shown:
        session_id, surfaced_at = surfacing.session_id, surfacing.at
        cand = found.setdefault(memory.id, Candidate(memory.id))
        cand.evidence.append(
            {"kind": "surfaced", "how": surfacing.kind, "at": surfaced_at, "session_id": session_id}
        )
        if session_id not in tied:
            if session_id not in unrelated:
                unrelated[session_id] = not _works_on(db, task, session_id, start, until, rarity)
            if unrelated[session_id]:
                cand.evidence.append(_OTHER_WORK | {"session_id": session_id})
                continue
        if session_id not in events_cache:
            events_cache[session_id] = (
                _unclaimed(db, task, _session_events(db, session_id, start, until))
                if session_id
                else []
            )
            # Only a session with no tool or assistant event at all (an MCP-only agent)
            # earns the unobserved guess.
            observed[session_id] = bool(session_id) and has_work_events(db, session_id, until)
            problems[session_id] = _problem(db, task, session_id, start, until)
        events = [e for e in events_cache[session_id] if e["at"] >= surfaced_at and _counts(e, end)]
        dist = distinction(
            sigs[memory.id], sigs.values(), rarity=rarity, problem=problems[session_id]
        )
        may_guess = session_id is not None and session_id == closer
        weight, proof = _judge(dist, events, rules, session_id, observed[session_id], may_guess)
        cand.evidence.extend(proof)
        cand.weight = max(cand.weight, weight)
    for cand in found.values():
        cand.evidence = cand.evidence[:MAX_EVIDENCE]
    return list(found.values())


# A session found only through the project's surfacings (a Beads issue has no session of
# its own) whose work never names the issue: its commands are evidence of its own task.
MIN_ID = 4
_OTHER_WORK = {
    "kind": "elsewhere",
    "detail": "another session's work, which never names the issue or what it is about: "
    "no credit",
}


def _works_on(
    db: Conn,
    task: Task,
    session_id: str | None,
    start: str,
    end: str,
    rarity: Callable[[str], float],
) -> bool:
    """Whether a session not tied to the task worked on it: its prompts, commands or
    messages name the task's id, or words of its subject and description that weigh
    at least ``MIN_EVIDENCE`` (the bar a memory's own evidence has to clear). A task
    known by its id alone (a synced close whose issue was not exported) cannot be
    compared with anything: evidence of use decides, as for the task's own sessions."""
    about = f"{task.subject or ''}\n{task.description or ''}"
    if not about.strip():
        return True
    if not session_id:
        return False
    said = prompt_texts(db, session_id, start, end)
    for e in work_events(db, session_id, start, end):
        said.extend(part for part in (e.command, e.text, e.file_path) if part)
    blob = "\n".join(said)
    # Short ids ("1", a Claude list's) would match anything; Beads ids look like "bd-a1b2".
    if len(task.external_id) >= MIN_ID and task.external_id.lower() in blob.lower():
        return True
    # The close reason is the closer's account of the fix: words of it count too.
    shared = terms_of(f"{about}\n{task.reason or ''}") & terms_of(blob)
    return sum(rarity(term) for term in shared) >= MIN_EVIDENCE


def _store_rarity(db: Conn) -> Callable[[str], float]:
    """How rare a term is across the whole store (evidence.rarity_in over FTS5)."""

    def frequency(term: str) -> int:
        try:
            return fts.document_frequency(db, textindex.fts_phrase(term))
        except sqlite3.OperationalError:  # a token FTS5 cannot take as a phrase
            return 1

    return rarity_in(fts.collection_size(db), frequency)


def _problem(db: Conn, task: Task, session_id: str | None, start: str, end: str) -> str:
    """The problem as stated: the task's subject and description and the session's
    prompts of the turn the work began in. Repeating it is not acting on a fix."""
    parts = [task.subject or "", task.description or ""]
    if session_id:
        turn = last_prompt_at(db, session_id, start) or start
        parts.extend(prompt_texts(db, session_id, turn, end))
    return "\n".join(parts)


def _unclaimed(db: Conn, task: Task, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop, for a Claude task that never went in_progress, the events that happened
    while another task of its session was in progress: that work was the other task's.

    Agents create several tasks in one turn and work through them; a task that never
    started (deleted as housekeeping, or closed untouched) would otherwise be judged on
    its siblings' commands. Work done while no task was in progress still counts for it,
    so a task created, tried and deleted without a status update remains a failure."""
    if task.source != "claude" or task.started_at or not task.session_id:
        return events
    busy = started_spans(db, "claude", task.session_id, task.id)
    return [e for e in events if not any(lo <= e["at"] <= hi for lo, hi in busy)]


def _counts(event: dict[str, Any], end: str) -> bool:
    # After the close only the closing message counts (it arrives with Stop): the
    # turn's later commands and edits are the next task's work, not this one's.
    return event["at"] <= end or event["kind"] == "assistant"


def _judge(
    dist: Distinction,
    events: list[dict[str, Any]],
    rules: Settings,
    session_id: str | None,
    observed: bool,
    may_guess: bool,
) -> tuple[float, list[dict[str, Any]]]:
    proof: list[dict[str, Any]] = []
    for event in events:
        hit = match_event(dist, event)
        if hit:
            kind, why = hit
            proof.append({"kind": kind, "at": event["at"], "session_id": session_id, "detail": why})
            if len(proof) >= 3:
                break
    if proof:
        return 1.0, proof
    if observed:
        return rules.shown_weight, [
            {"kind": "shown", "session_id": session_id, "detail": "surfaced, not acted on"}
        ]
    if not may_guess:
        # Shown to an agent that did not close the task (an MCP search elsewhere in the
        # project before a bd close): with no events either way, nothing ties it to it.
        return 0.0, [
            {
                "kind": "elsewhere",
                "session_id": session_id,
                "detail": "surfaced to another agent than the one that closed the task, "
                "no evidence of use: no credit",
            }
        ]
    return rules.unobserved_weight, [
        {
            "kind": "unobserved",
            "session_id": session_id,
            "detail": "no events to judge by; the session that was shown it closed the task",
        }
    ]
