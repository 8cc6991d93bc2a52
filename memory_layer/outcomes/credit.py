"""Which memories a closed task credits, by how much, and the exact undo.

Candidates are memories *surfaced* (a usage row: injected, recalled, MCP search) in
the task's sessions before it closed, or — for trackers without sessions, like
Beads — anywhere in the task's project while it was open. Each candidate's weight
comes from evidence that it was *acted on* during the task (evidence.py):

- acted on (command run, fix applied in an edit, cited by the assistant): 1.0
- surfaced, the session left events, none points at it: ``outcomes.shown_weight`` (0)
- surfaced, the session left no tool or assistant events: ``outcomes.unobserved_weight``

The memory's score moves by weight × delta (+0.2 success, −0.3 failure), clamped to
−1..1. What was applied is stored per (task, memory), so an undo reverses exactly it.

Choosing the candidates and weighing their evidence is ``outcomes.candidates``; this
module applies the weights, records them and undoes them.
"""

from __future__ import annotations

import json
from typing import Any

from memory_layer.errors import NotFound
from memory_layer.models import now_stamp
from memory_layer.outcomes.rules import FAILURE, SUCCESS, Settings
from memory_layer.retrieval.scoring import clamp
from memory_layer.storage.conn import Conn
from memory_layer.storage.credits import insert_credit, live_task_credits, mark_reversed
from memory_layer.storage.records import get_memory, update_memory
from memory_layer.storage.tasks import Task


def describe_change(credit: dict[str, Any]) -> str:
    """ "+0.20 (0.10 → 0.30)": what a credit applied and the score it moved, old → new
    (the applied part alone equals the new score on a memory's first credit)."""
    return f"{credit['applied']:+.2f} ({credit['old_score']:+.2f} → {credit['new_score']:+.2f})"


def count_credited(credits: list[dict[str, Any]]) -> int:
    return sum(1 for c in credits if c["weight"] > 0)


def summarize(credits: list[dict[str, Any]]) -> str:
    """One line on what a close did to its candidates, for messages."""
    used = [c for c in credits if c["weight"] > 0]
    shown = len(credits) - len(used)
    if not credits:
        return "no memories were surfaced while it was open"
    parts = [f"{c['memory_id']} {describe_change(c)}" for c in used]
    text = "; ".join(parts) if parts else "none was acted on"
    return text + (f" ({shown} shown but not acted on: no credit)" if shown else "")


def apply_credit(
    db: Conn,
    memory_id: str,
    *,
    task_id: str | None,
    outcome: str,
    weight: float,
    evidence: list[dict[str, Any]],
    rules: Settings,
    source: str,
    actor: str,
    at: str,
) -> dict[str, Any]:
    """Move one memory's score by weight × delta and record exactly what changed."""
    memory = get_memory(db, memory_id)
    base = rules.success_delta if outcome == SUCCESS else rules.failure_delta
    delta = round(base * weight, 6)
    old_score = memory.outcome_score
    credited = weight > 0
    new_score = round(clamp(old_score + delta, -1.0, 1.0), 6) if credited else old_score
    success_inc = int(credited and outcome == SUCCESS)
    failure_inc = int(credited and outcome == FAILURE)
    # Frequency should reward memories that helped; a failed use is already counted
    # in failure_count, and counting it as a use would offset most of the penalty.
    use_inc = success_inc
    new_proven = memory.proven_at
    if success_inc and (memory.proven_at is None or memory.proven_at < at):
        new_proven = at  # recency runs from the last time it was proven useful
    if credited:
        label = f"task {task_id}" if task_id else f"feedback from {source}"
        update_memory(
            db,
            memory.id,
            {
                "outcome_score": new_score,
                "success_count": memory.success_count + success_inc,
                "failure_count": memory.failure_count + failure_inc,
                "use_count": memory.use_count + use_inc,
                "proven_at": new_proven,
            },
            actor=actor,
            action="outcome",
            context={
                "task": task_id,
                "source": source,
                "outcome": outcome,
                "weight": weight,
                "delta": delta,
                "reason": f"{outcome} credited by {label}: {delta:+.2f} × weight {weight:g}",
            },
        )
    values = {
        "task_id": task_id,
        "memory_id": memory.id,
        "outcome": outcome,
        "weight": weight,
        "delta": delta,
        "applied": round(new_score - old_score, 6),
        "old_score": old_score,
        "new_score": new_score,
        "success_inc": success_inc,
        "failure_inc": failure_inc,
        "use_inc": use_inc,
        "old_proven_at": memory.proven_at,
        "new_proven_at": new_proven,
        "evidence": json.dumps(evidence, ensure_ascii=False),
        "source": source,
        "actor": actor,
        "at": at,
    }
    return insert_credit(db, values)


def reverse_credit(
    db: Conn, credit: dict[str, Any], *, actor: str, reason: str, source: str
) -> dict[str, Any]:
    """Undo exactly what one credit applied: its score change, counts and proven_at.

    Credits applied later stay in place, so undoing an old credit does not erase what
    happened since; the score is clamped again afterwards.
    """
    at = now_stamp()
    if credit["applied"] or credit["success_inc"] or credit["failure_inc"] or credit["use_inc"]:
        try:
            memory = get_memory(db, credit["memory_id"])
        except NotFound:
            memory = None
        if memory is not None:
            changes: dict[str, Any] = {
                "outcome_score": round(clamp(memory.outcome_score - credit["applied"], -1, 1), 6),
                "success_count": max(0, memory.success_count - credit["success_inc"]),
                "failure_count": max(0, memory.failure_count - credit["failure_inc"]),
                "use_count": max(0, memory.use_count - credit["use_inc"]),
            }
            if memory.proven_at == credit["new_proven_at"]:
                changes["proven_at"] = credit["old_proven_at"]
            update_memory(
                db,
                memory.id,
                changes,
                actor=actor,
                action="outcome_undo",
                context={
                    "task": credit["task_id"],
                    "source": source,
                    "credit": credit["id"],
                    "reason": f"{reason}: reversed {credit['applied']:+.2f}",
                },
            )
    return mark_reversed(db, credit["id"], at=at, actor=actor, reason=reason)


def credit_task(
    db: Conn,
    task: Task,
    outcome: str,
    *,
    rules: Settings,
    source: str,
    actor: str,
    at: str,
    closer: str | None = None,
) -> list[dict[str, Any]]:
    """Credit every candidate of a task that closed with ``outcome`` (once per memory);
    ``closer``: the session that closed it (see ``candidates``)."""
    # Imported here: hooks load this module for task bookkeeping on every SessionStart,
    # and judge evidence only when a task actually closes.
    from memory_layer.outcomes.candidates import candidates

    live = {c["memory_id"] for c in live_task_credits(db, task.id)}
    out = []
    for cand in candidates(db, task, rules, end=at, closer=closer):
        if cand.memory_id in live:
            continue
        out.append(
            apply_credit(
                db,
                cand.memory_id,
                task_id=task.id,
                outcome=outcome,
                weight=cand.weight,
                evidence=cand.evidence,
                rules=rules,
                source=source,
                actor=actor,
                at=at,
            )
        )
    return out


def rejudge_task(
    db: Conn,
    task: Task,
    *,
    rules: Settings,
    evidence_end: str,
    source: str,
    actor: str,
    closer: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Judge a closed task's memories again with evidence up to ``evidence_end``.

    Weights only go up (except a weight guessed for want of events, which the events
    now replace): the earlier credit is reversed exactly and the new one applied.
    Returns (new credits, reversed credits).
    """
    if task.outcome is None or task.closed_at is None:
        return [], []
    from memory_layer.outcomes.candidates import candidates

    live = {c["memory_id"]: c for c in live_task_credits(db, task.id)}
    applied: list[dict[str, Any]] = []
    undone: list[dict[str, Any]] = []
    for cand in candidates(
        db, task, rules, end=task.closed_at, evidence_end=evidence_end, closer=closer
    ):
        old = live.get(cand.memory_id)
        if old is not None and cand.weight == old["weight"]:
            continue
        # A guess made for want of events gives way to what the events now show;
        # otherwise weights only go up.
        guessed = old is not None and any(e.get("kind") == "unobserved" for e in old["evidence"])
        if old is not None and cand.weight < old["weight"] and not guessed:
            continue
        if old is not None:
            undone.append(
                reverse_credit(
                    db,
                    old,
                    actor=actor,
                    source=source,
                    reason="re-judged with the closing turn's events",
                )
            )
        applied.append(
            apply_credit(
                db,
                cand.memory_id,
                task_id=task.id,
                outcome=task.outcome,
                weight=cand.weight,
                evidence=cand.evidence,
                rules=rules,
                source=source,
                actor=actor,
                at=task.closed_at,
            )
        )
    return applied, undone


def reverse_task(
    db: Conn, task: Task, *, actor: str, reason: str, source: str
) -> list[dict[str, Any]]:
    # Newest first, so stacked clamps unwind in the order they were applied.
    return [
        reverse_credit(db, credit, actor=actor, reason=reason, source=source)
        for credit in reversed(live_task_credits(db, task.id))
    ]
