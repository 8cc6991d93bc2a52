"""Read-side views of outcomes for the CLI, the dashboard and `memory-layer show`."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from memory_layer.models import Memory, parse_time, utcnow
from memory_layer.outcomes.rules import Settings, is_proven, is_sinking, settings
from memory_layer.outcomes.store import get_task_by_ref
from memory_layer.storage import credits as credit_rows
from memory_layer.storage import tasks
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import created_times, get_memory


def list_tasks(db: Conn, limit: int = 50, offset: int = 0) -> list[dict[str, Any]]:
    """Tasks, most recently changed first, with how many memories each credited."""
    page = tasks.list_tasks(db, limit=limit, offset=offset)
    counts = credit_rows.credited_counts(db, [t.id for t in page])
    return [{**t.to_dict(), "credits": counts.get(t.id, 0)} for t in page]


def task_detail(db: Conn, task_id: str) -> dict[str, Any]:
    """One task with its events and every memory it judged: delta, weight, evidence."""
    task = get_task_by_ref(db, task_id)
    info = task.to_dict()
    credits = credit_rows.task_credits(db, task.id)
    for credit in credits:
        try:
            credit["memory_text"] = get_memory(db, credit["memory_id"]).text
        except Exception:  # purged since: the credit row is still history
            credit["memory_text"] = None
    info["credits"] = credits
    info["events"] = tasks.task_events(db, task.id)
    return info


def memory_outcomes(db: Conn, memory_id: str) -> list[dict[str, Any]]:
    """The credit history of one memory, oldest first: task, delta, when, evidence."""
    memory = get_memory(db, memory_id)
    rows = credit_rows.memory_credits(db, memory.id)
    subjects: dict[str, tuple[str | None, str | None]] = {}
    for row in rows:
        if row["task_id"] and row["task_id"] not in subjects:
            found = tasks.find_task(db, row["task_id"])
            subjects[row["task_id"]] = (found.subject, found.source) if found else (None, None)
        subject, tracker = subjects.get(row["task_id"], (None, None))
        row["task_subject"] = subject
        row["task_source"] = tracker
        row["credited"] = row["weight"] > 0
    return rows


def credit_notes(db: Conn, memory: Memory, config: dict[str, Any] | None = None) -> list[str]:
    """Lines for `memory-layer show`: proven/sinking marks and each credit received."""
    notes: list[str] = []
    rules = settings(config)
    if is_sinking(memory, config):
        notes.append(
            f"sinking: outcome {memory.outcome_score:+.2f} ≤ floor {rules.floor:+.2f}; withheld "
            f"from automatic injection (`memory-layer outcome --memory {memory.id} --restore`)"
        )
    if is_proven(memory, config):
        notes.append(
            f"proven: {memory.success_count} credited successes, {memory.failure_count} failures"
        )
    for row in memory_outcomes(db, memory.id):
        if not row["credited"]:
            continue
        who = f"task {row['task_id']}" if row["task_id"] else f"feedback ({row['source']})"
        why = next(
            (e.get("detail") for e in row["evidence"] if e.get("kind") not in {"surfaced"}),
            None,
        )
        line = f"credited by {who}: {row['applied']:+.2f} ({row['outcome']}"
        line += f", {why})" if why else ")"
        if row["reversed_at"]:
            line += f" — reversed: {row['reversal_reason']}"
        notes.append(line)
    return notes


def _proven_from(success: int, failure: int, score: float, rules: Settings) -> bool:
    return (
        success >= rules.proven_min_successes
        and score >= rules.proven_min_score
        and success >= 2 * failure
    )


def learning_series(
    db: Conn, days: int = 30, *, config: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Per day (oldest first): tasks closed as successes and failures, and the share of
    memories that were proven at the end of that day.

    The proven share is rebuilt from the credit log (credits in effect at the day's
    end), among memories that existed then; score changes made outside outcome
    learning are not replayed.
    """
    rules = settings(config)
    today = utcnow().date()
    first = today - timedelta(days=max(1, days) - 1)
    closed: dict[str, dict[str, int]] = defaultdict(lambda: {"success": 0, "failure": 0})
    for closed_at, outcome in tasks.closed_since(db, first.isoformat()):
        closed[parse_time(closed_at).date().isoformat()][outcome] += 1
    credits = credit_rows.weighted_credits(db)
    created = sorted(parse_time(stamp).date() for stamp in created_times(db))
    series = []
    for offset in range(max(1, days)):
        day = first + timedelta(days=offset)
        end = day.isoformat() + "T23:59:59.999999+00:00"
        state: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0.0])
        for c in credits:
            if c["at"] <= end and (c["reversed_at"] is None or c["reversed_at"] > end):
                entry = state[c["memory_id"]]
                entry[0] += c["success_inc"]
                entry[1] += c["failure_inc"]
                entry[2] += c["applied"]
        existing = sum(1 for d in created if d <= day)
        proven = sum(1 for s, f, score in state.values() if _proven_from(s, f, score, rules))
        key = day.isoformat()
        series.append(
            {
                "day": key,
                "successes": closed[key]["success"],
                "failures": closed[key]["failure"],
                "memories": existing,
                "proven": proven,
                "proven_share": round(proven / existing, 4) if existing else 0.0,
            }
        )
    return series
