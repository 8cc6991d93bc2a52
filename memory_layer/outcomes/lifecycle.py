"""Task transitions (open, start, close, reopen); manual outcomes (``outcomes.manual``)
go through them too.

Every tracker adapter (claude.py, beads.py) and every door (CLI, MCP, dashboard) ends
here, so the rules hold the same everywhere:

- a close credits the task's memories once; the same close again changes nothing;
- a close with the other outcome, or a correction, first undoes the earlier credit;
- a reopen undoes the credit; a task still in progress is left open;
- a transition older than the last one applied (a replay) changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.outcomes.credit import (
    count_credited,
    credit_task,
    rejudge_task,
    reverse_task,
    summarize,
)
from memory_layer.outcomes.rules import FAILURE, SUCCESS, Settings, settings
from memory_layer.outcomes.store import (
    get_task_by_ref,
    insert_task,
    now_stamp,
    update_task,
)
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import transaction
from memory_layer.storage.sessions import last_prompt_at
from memory_layer.storage.tasks import Task, closed_in_session, find_task, log_event, seen_event

OPEN, START, CLOSE, REOPEN = "open", "start", "close", "reopen"


@dataclass(frozen=True)
class OutcomeResult:
    """What one event or manual outcome did."""

    task_id: str | None
    outcome: str | None
    # opened | started | updated | credited | corrected | reopened | rejudged | undone |
    # unchanged
    action: str
    message: str
    credits: list[dict[str, Any]] = field(default_factory=list)
    reversed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.action != "unchanged"

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "outcome": self.outcome,
            "action": self.action,
            "changed": self.changed,
            "message": self.message,
            "credits": self.credits,
            "reversed": self.reversed,
        }


def outcome_name(success: bool) -> str:
    return SUCCESS if success else FAILURE


def _cleaned(text: str | None) -> str | None:
    if not text:
        return text
    from memory_layer.capture.privacy import clean

    return clean(text)


def ensure_task(
    db: Conn,
    *,
    task_id: str,
    source: str,
    external_id: str,
    at: str,
    status: str,
    list_id: str | None = None,
    project: str | None = None,
    session_id: str | None = None,
    subject: str | None = None,
    description: str | None = None,
    started_at: str | None = None,
    opened_at: str | None = None,
) -> tuple[Task, bool]:
    """The task, created if new; details missing so far are filled in. (task, created)"""
    # Titles and descriptions come from agents and trackers: cleaned like every stored
    # text (a token or ?api-key= pasted into a task subject never reaches the table).
    subject, description = _cleaned(subject), _cleaned(description)
    task = find_task(db, task_id)
    if task is None:
        return (
            insert_task(
                db,
                {
                    "id": task_id,
                    "source": source,
                    "external_id": external_id,
                    "list_id": list_id,
                    "project": project,
                    "session_id": session_id,
                    "subject": subject,
                    "description": description,
                    "status": status,
                    "opened_at": opened_at or at,
                    "started_at": started_at,
                    "state_at": at,
                    "updated_at": now_stamp(),
                },
            ),
            True,
        )
    fill = {
        name: value
        for name, value in (
            ("project", project),
            ("session_id", session_id),
            ("subject", subject),
            ("description", description),
            ("started_at", started_at),
        )
        if value and not getattr(task, name)
    }
    if subject and task.subject and subject != task.subject:
        fill["subject"] = subject  # renamed by TaskUpdate
    return (update_task(db, task.id, fill) if fill else task), False


def transition(
    db: Conn,
    task: Task,
    event: str,
    *,
    at: str,
    status: str,
    source: str,
    actor: str,
    config: dict[str, Any] | None = None,
    outcome: str | None = None,
    reason: str | None = None,
    session_id: str | None = None,
    event_key: str | None = None,
    created: bool = False,
    correction: bool = False,
) -> OutcomeResult:
    """Apply one tracker event to a task inside the caller's transaction.

    ``correction``: a verdict on a close that already happened (manual outcome, a
    reviewer's label). It keeps the task's original close time, so the same window
    of work is judged again, instead of closing the task anew at ``at``.
    """
    rules = settings(config)
    reason = _cleaned(reason)

    def record(applied: bool, note: str | None = None) -> None:
        # Reads ``event`` at call time: an OPEN/START on a closed task becomes REOPEN.
        log_event(
            db,
            task.id,
            at=at,
            source=source,
            event=event,
            status=status,
            session_id=session_id,
            applied=applied,
            note=note,
            event_key=event_key,
        )

    def unchanged(note: str) -> OutcomeResult:
        record(False, note)
        return OutcomeResult(task.id, task.outcome, "unchanged", note)

    if seen_event(db, event_key):
        return OutcomeResult(task.id, task.outcome, "unchanged", "event already applied")
    if not created and at < task.state_at:
        return unchanged(f"stale: older than the last change ({task.state_at})")

    if event in {OPEN, START}:
        if not task.is_open:
            # A closed Claude task set back to pending/in_progress is a reopen.
            event = REOPEN
        else:
            changes: dict[str, Any] = {"status": status, "state_at": at}
            if event == START and not task.started_at:
                changes["started_at"] = at
            update_task(db, task.id, changes)
            record(True)
            verb = "opened" if created else "started" if event == START else "updated"
            return OutcomeResult(task.id, None, verb, f"task {task.id} {verb} ({status})")

    if event == REOPEN:
        return _reopen(
            db, task, status=status, at=at, source=source, actor=actor, record=record,
            unchanged=unchanged,
        )
    if event != CLOSE or outcome not in {SUCCESS, FAILURE}:
        raise InvalidInput(f"Unknown task event {event!r} (outcome {outcome!r}).")
    if task.outcome == outcome:
        return unchanged(f"already closed as {outcome}")
    return _close(
        db, task, outcome, status=status, at=at, source=source, actor=actor, rules=rules,
        reason=reason, session_id=session_id, correction=correction, record=record,
    )


def _reopen(
    db: Conn,
    task: Task,
    *,
    status: str,
    at: str,
    source: str,
    actor: str,
    record: Callable[..., None],
    unchanged: Callable[[str], OutcomeResult],
) -> OutcomeResult:
    """``transition``'s REOPEN: a closed task's credits reversed exactly, its close
    cleared."""
    if task.is_open:
        update_task(db, task.id, {"status": status, "state_at": at})
        return unchanged("already open")
    undone = reverse_task(db, task, actor=actor, reason=f"task {task.id} reopened", source=source)
    update_task(
        db,
        task.id,
        {"status": status, "outcome": None, "closed_at": None, "reason": None, "state_at": at},
    )
    record(True)
    return OutcomeResult(
        task.id,
        None,
        "reopened",
        f"task {task.id} reopened: reversed {count_credited(undone)} credit(s)",
        reversed=undone,
    )


def _close(
    db: Conn,
    task: Task,
    outcome: str,
    *,
    status: str,
    at: str,
    source: str,
    actor: str,
    rules: Settings,
    reason: str | None,
    session_id: str | None,
    correction: bool,
    record: Callable[..., None],
) -> OutcomeResult:
    """``transition``'s CLOSE with a new outcome: an earlier outcome's credits reversed,
    then the task's candidates credited for this one (at the original close time when
    this is a ``correction``)."""
    undone: list[dict[str, Any]] = []
    if task.outcome is not None:
        undone = reverse_task(
            db, task, actor=actor, reason=f"task {task.id} re-closed as {outcome}", source=source
        )
    closed_at = task.closed_at if correction and task.closed_at else at
    task = update_task(
        db,
        task.id,
        {
            "status": status,
            "outcome": outcome,
            "reason": reason,
            "closed_at": closed_at,
            "state_at": at,
        },
    )
    credits = credit_task(
        db,
        task,
        outcome,
        rules=rules,
        source=source,
        actor=actor,
        at=closed_at,
        closer=session_id,
    )
    record(True, reason)
    action = "corrected" if undone else "credited"
    return OutcomeResult(
        task.id,
        outcome,
        action,
        f"task {task.id} closed as {outcome}: {summarize(credits)}",
        credits=credits,
        reversed=undone,
    )


def rejudge_turn(
    db: Conn,
    session_id: str,
    *,
    at: str,
    source: str,
    config: dict[str, Any] | None = None,
) -> list[OutcomeResult]:
    """At the end of a turn (Stop), judge again the tasks that closed during it.

    Claude Code hands over the assistant's closing message with the Stop hook, usually
    after the task was marked completed; a memory that message cites was used for the
    task, so evidence counts up to the end of the turn in which the task closed.
    """
    rules = settings(config)
    results: list[OutcomeResult] = []
    with transaction(db):
        turn_start = last_prompt_at(db, session_id, at)
        if turn_start is None:
            return results
        for task_id in closed_in_session(db, session_id, turn_start, at):
            task = get_task_by_ref(db, task_id)
            applied, undone = rejudge_task(
                db,
                task,
                rules=rules,
                evidence_end=at,
                source=source,
                actor=f"claude:{session_id}",
                closer=session_id,
            )
            if applied:
                results.append(
                    OutcomeResult(
                        task.id,
                        task.outcome,
                        "rejudged",
                        f"task {task.id} re-judged at the end of its turn: {summarize(applied)}",
                        credits=applied,
                        reversed=undone,
                    )
                )
    return results
