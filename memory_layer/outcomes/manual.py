"""Manual outcomes: what a person (CLI, /outcome, the dashboard) or an agent's report
(MCP report_outcome) says about a task or a memory.

Separate from ``outcomes.lifecycle`` because trackers never come here: these are the
verdicts, corrections and undos a door asks for. Each one goes through the same
``lifecycle.transition`` (or credit's exact undo) a tracker event does, so the rules
hold the same everywhere.
"""

from __future__ import annotations

from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.outcomes.credit import (
    apply_credit,
    count_credited,
    credit_task,
    reverse_credit,
    reverse_task,
    summarize,
)
from memory_layer.outcomes.lifecycle import (
    CLOSE,
    OutcomeResult,
    outcome_name,
    transition,
)
from memory_layer.outcomes.rules import settings
from memory_layer.outcomes.store import (
    get_task_by_ref,
    now_stamp,
    resolve_task,
    update_task,
)
from memory_layer.storage.conn import Conn
from memory_layer.storage.credits import get_credit
from memory_layer.storage.records import get_memory, transaction
from memory_layer.storage.tasks import log_event


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
