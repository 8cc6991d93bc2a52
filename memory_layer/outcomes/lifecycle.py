"""Task transitions (open, start, close, reopen) and manual outcomes.

Every tracker adapter (claude.py, beads.py) and every door (CLI, MCP, dashboard) ends
here, so the rules hold the same everywhere:

- a close credits the task's memories once; the same close again changes nothing;
- a close with the other outcome, or a correction, first undoes the earlier credit;
- a reopen undoes the credit; a task still in progress is left open;
- a transition older than the last one applied (a replay) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.outcomes.credit import (
    apply_credit,
    count_credited,
    credit_task,
    rejudge_task,
    reverse_credit,
    reverse_task,
    summarize,
)
from memory_layer.outcomes.rules import FAILURE, SUCCESS, settings
from memory_layer.outcomes.store import (
    get_task_by_ref,
    insert_task,
    now_stamp,
    resolve_task,
    update_task,
)
from memory_layer.storage.conn import Conn
from memory_layer.storage.credits import get_credit
from memory_layer.storage.records import get_memory, transaction
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
        if task.is_open:
            update_task(db, task.id, {"status": status, "state_at": at})
            return unchanged("already open")
        undone = reverse_task(
            db, task, actor=actor, reason=f"task {task.id} reopened", source=source
        )
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

    if event != CLOSE or outcome not in {SUCCESS, FAILURE}:
        raise InvalidInput(f"Unknown task event {event!r} (outcome {outcome!r}).")
    if task.outcome == outcome:
        return unchanged(f"already closed as {outcome}")
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


# --- manual outcomes: CLI, /outcome, MCP report_outcome, dashboard ------------------


def record_outcome(
    db: Conn,
    task_id: str,
    success: bool,
    *,
    source: str,
    actor: str,
    reason: str | None = None,
    config: dict[str, Any] | None = None,
    project: str | None = None,
) -> OutcomeResult:
    """Declare a task's outcome. Closes it and credits its memories; on a task already
    closed the other way this is a correction (exact undo, then redo)."""
    outcome = outcome_name(success)
    with transaction(db):
        task = resolve_task(db, task_id, project=project)
        return transition(
            db,
            task,
            CLOSE,
            at=max(now_stamp(), task.state_at),
            status=task.status if not task.is_open else "closed",
            source=source,
            actor=actor,
            config=config,
            outcome=outcome,
            reason=reason or f"marked {outcome} by {actor}",
            correction=True,
        )


def correct_outcome(
    db: Conn,
    task_id: str,
    success: bool,
    *,
    actor: str,
    source: str = "manual",
    config: dict[str, Any] | None = None,
) -> OutcomeResult:
    """Undo the task's credit exactly, then credit it again with the given outcome."""
    outcome = outcome_name(success)
    with transaction(db):
        task = get_task_by_ref(db, task_id)
        undone = reverse_task(
            db, task, actor=actor, reason=f"outcome of task {task.id} corrected", source=source
        )
        at = max(now_stamp(), task.state_at)
        task = update_task(
            db,
            task.id,
            {
                "outcome": outcome,
                "closed_at": task.closed_at or at,
                "state_at": at,
                "reason": f"corrected to {outcome} by {actor}",
                "status": task.status if task.closed_at else "closed",
            },
        )
        credits = credit_task(
            db,
            task,
            outcome,
            rules=settings(config),
            source=source,
            actor=actor,
            at=task.closed_at or at,
        )
        log_event(
            db,
            task.id,
            at=at,
            source=source,
            event=CLOSE,
            status=task.status,
            session_id=None,
            applied=True,
            note=f"corrected to {outcome} by {actor}",
        )
    return OutcomeResult(
        task.id,
        outcome,
        "corrected",
        f"task {task.id} corrected to {outcome}: " + summarize(credits),
        credits=credits,
        reversed=undone,
    )


def undo_outcome(db: Conn, task_id: str, *, actor: str, source: str = "manual") -> OutcomeResult:
    """Reverse every credit of a task exactly and leave it without an outcome."""
    with transaction(db):
        task = get_task_by_ref(db, task_id)
        if task.is_open:
            return OutcomeResult(task.id, None, "unchanged", f"task {task.id} has no outcome")
        undone = reverse_task(
            db, task, actor=actor, reason=f"outcome of task {task.id} undone", source=source
        )
        at = max(now_stamp(), task.state_at)
        update_task(
            db,
            task.id,
            {
                "outcome": None,
                "state_at": at,
                "status": "undone",
                "reason": f"outcome undone by {actor}",
            },
        )
        log_event(
            db,
            task.id,
            at=at,
            source=source,
            event="undo",
            status="undone",
            session_id=None,
            applied=True,
            note=f"undone by {actor}",
        )
    return OutcomeResult(
        task.id,
        None,
        "undone",
        f"task {task.id}: reversed {count_credited(undone)} credit(s)",
        reversed=undone,
    )


def memory_feedback(
    db: Conn,
    memory_id: str,
    success: bool,
    *,
    actor: str,
    source: str,
    reason: str | None = None,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Direct feedback on one memory: the full delta, no task involved."""
    evidence = [{"kind": "manual", "detail": reason or f"reported by {actor} via {source}"}]
    with transaction(db):
        memory = get_memory(db, memory_id)
        return apply_credit(
            db,
            memory.id,
            task_id=None,
            outcome=outcome_name(success),
            weight=1.0,
            evidence=evidence,
            rules=settings(config),
            source=source,
            actor=actor,
            at=now_stamp(),
        )


def undo_credit(db: Conn, credit_id: int, *, actor: str, source: str = "manual") -> dict[str, Any]:
    """Reverse one credit (e.g. a mistaken `outcome --memory`)."""
    with transaction(db):
        found = get_credit(db, credit_id)
        if found is None:
            raise InvalidInput(f"No credit #{credit_id}. `memory-layer show ID` lists credits.")
        if found["reversed_at"]:
            return found
        return reverse_credit(db, found, actor=actor, reason="credit undone", source=source)


def restore_sinking(
    db: Conn, memory_id: str, *, actor: str, config: dict[str, Any] | None = None
) -> Any:
    """Lift a sinking memory back to a neutral score (0) so it is injected again.
    The operations log keeps the old score; its counts stay as they were."""
    from memory_layer.outcomes.rules import is_sinking
    from memory_layer.storage.records import update_memory

    with transaction(db):
        memory = get_memory(db, memory_id)
        if not is_sinking(memory, config):
            raise InvalidInput(
                f"Memory {memory.id} is not sinking (score {memory.outcome_score:+.2f}, "
                f"floor {settings(config).floor:+.2f}); nothing to restore."
            )
        return update_memory(
            db,
            memory.id,
            {"outcome_score": 0.0},
            actor=actor,
            action="outcome_restore",
            context={"source": "manual", "reason": "restored from sinking to a neutral score"},
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
