"""Read-side views shared by the CLI and the dashboard: filtered lists, details, stats."""

from __future__ import annotations

from typing import Any

from memory_layer.storage.conn import Conn
from memory_layer.storage.memory_lists import (
    SORTS,
    Filters,
    count_memories,
    counts_by,
    list_memories,
    outcome_marks,
)
from memory_layer.storage.operations import Operation, count_operations, history
from memory_layer.storage.records import get_memory, total_memories, unembedded_count
from memory_layer.storage.tasks import outcome_counts

# The doors list and count through these names (and offer SORTS' keys as sort choices);
# the queries themselves are storage's.
__all__ = [
    "SORTS",
    "Filters",
    "count_memories",
    "details",
    "list_memories",
    "stats",
    "summarise",
]


def summarise(op: Operation) -> str:
    """One line saying what an operation changed."""
    if op.action == "create":
        return "created"
    if op.action == "purge":
        return "deleted for good"
    old, new = op.old_value or {}, op.new_value or {}
    if isinstance(old, dict) and isinstance(new, dict) and (old or new):
        parts = [f"{k}: {old.get(k)!r} → {new.get(k)!r}" for k in sorted(set(old) | set(new))]
        text = "; ".join(parts)
    else:
        text = f"{old!r} → {new!r}"
    reason = op.context.get("reason") if op.context else None
    return text + (f" ({reason})" if reason else "")


def details(db: Conn, memory_id: str) -> dict[str, Any]:
    """Everything about one memory: the record plus its operations history."""
    memory = get_memory(db, memory_id)
    info = memory.to_dict()
    ops = history(db, memory.id)
    info["history"] = [{**op.to_dict(), "summary": summarise(op)} for op in ops]
    info["notes"] = []
    # Outcome learning: proven/sinking marks and "credited by task X: +0.20" lines.
    from memory_layer.outcomes.views import credit_notes

    info["notes"].extend(credit_notes(db, memory))
    # Trust: whether agents receive it and why not, approval, open proposals.
    from memory_layer.trust.views import trust_notes

    info["notes"].extend(trust_notes(db, memory))
    # import-instructions: the file and section the memory came from.
    from memory_layer.storage.instructions import item_for_memory

    item = item_for_memory(db, memory.id)
    if item is not None:
        info["imported_from"] = {"path": item.path, "section": item.section}
        where = f", section {item.section!r}" if item.section else ""
        info["notes"].append(f"imported from {item.path}{where} (import-instructions)")
    return info


def stats(db: Conn) -> dict[str, Any]:
    total = total_memories(db)
    missing = unembedded_count(db)
    return {
        "total": total,
        "embedded": total - missing,
        "missing_vectors": missing,
        "by_category": counts_by(db, "category"),
        "by_status": counts_by(db, "status"),
        "by_project": counts_by(db, "project"),
        "by_source": counts_by(db, "source"),
        "operations": count_operations(db),
        "outcomes": _outcome_counts(db),
    }


def _outcome_counts(db: Conn) -> dict[str, int]:
    """What outcome learning has done: judged, proven and sinking memories (by the
    same rules as outcomes.rules.is_proven / is_sinking) and the tasks closed."""
    from memory_layer.outcomes.rules import settings

    rules = settings(None)
    judged, proven, sinking = outcome_marks(
        db,
        proven_min_successes=rules.proven_min_successes,
        proven_min_score=rules.proven_min_score,
        floor=rules.floor,
    )
    tasks = outcome_counts(db)
    return {
        "judged": judged,
        "proven": proven,
        "sinking": sinking,
        "tasks_succeeded": int(tasks.get("success", 0)),
        "tasks_failed": int(tasks.get("failure", 0)),
    }
