"""Read-side views shared by the CLI and the dashboard: filtered lists, details, stats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.models import Memory, check_category
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.records import Operation, get_memory, history, memories_where

SORTS = {
    "newest": "memories.created_at DESC, memories.id",
    "oldest": "memories.created_at ASC, memories.id",
    "updated": "memories.updated_at DESC, memories.id",
    "outcome": "memories.outcome_score DESC, memories.id",
    "uses": "memories.use_count DESC, memories.id",
}


@dataclass(frozen=True)
class Filters:
    project: str | None = None  # 'global' selects global memories
    category: str | None = None
    status: str | None = None
    source: str | None = None
    tag: str | None = None
    min_outcome: float | None = None
    max_outcome: float | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if self.project == "global":
            clauses.append("memories.project IS NULL")
        elif self.project:
            clauses.append("memories.project = ?")
            args.append(self.project)
        if self.category:
            clauses.append("memories.category = ?")
            args.append(check_category(self.category))
        if self.status:
            clauses.append("memories.status = ?")
            args.append(self.status)
        if self.source:
            clauses.append("memories.source = ?")
            args.append(self.source)
        if self.tag:
            clauses.append("EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value = ?)")
            args.append(self.tag)
        if self.min_outcome is not None:
            clauses.append("memories.outcome_score >= ?")
            args.append(self.min_outcome)
        if self.max_outcome is not None:
            clauses.append("memories.outcome_score <= ?")
            args.append(self.max_outcome)
        return (" AND ".join(clauses) or "1"), args


def list_memories(
    db: Conn, filters: Filters, *, limit: int = 50, offset: int = 0, sort: str = "newest"
) -> list[Memory]:
    # SQLite reads LIMIT -1 as "no limit": a negative page size must not list everything.
    if limit < 1 or offset < 0:
        raise InvalidInput(f"limit must be at least 1 and offset at least 0 (got {limit}, {offset}).")
    where, args = filters.where()
    return memories_where(
        db, where, args, order_by=SORTS.get(sort, SORTS["newest"]), limit=limit, offset=offset
    )


def count_memories(db: Conn, filters: Filters) -> int:
    where, args = filters.where()
    return int(raw(db).execute("SELECT count(*) FROM memories WHERE " + where, args).fetchone()[0])


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
    return info


def stats(db: Conn) -> dict[str, Any]:
    conn = raw(db)

    def grouped(column: str) -> dict[str, int]:
        # Column names are fixed literals below, never user input.
        rows = conn.execute(
            "SELECT coalesce(" + column + ", 'global'), count(*) FROM memories GROUP BY 1 "
            "ORDER BY 2 DESC, 1"
        ).fetchall()
        return {str(k): int(v) for k, v in rows}

    total = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    embedded = int(
        conn.execute("SELECT count(*) FROM memories WHERE embedding IS NOT NULL").fetchone()[0]
    )
    return {
        "total": total,
        "embedded": embedded,
        "missing_vectors": total - embedded,
        "by_category": grouped("category"),
        "by_status": grouped("status"),
        "by_project": grouped("project"),
        "by_source": grouped("source"),
        "operations": int(conn.execute("SELECT count(*) FROM operations").fetchone()[0]),
        "outcomes": _outcome_counts(db),
    }


def _outcome_counts(db: Conn) -> dict[str, int]:
    """What outcome learning has done: judged, proven and sinking memories (by the
    same rules as outcomes.rules.is_proven / is_sinking) and the tasks closed."""
    from memory_layer.outcomes.rules import settings

    rules = settings(None)
    conn = raw(db)
    judged, proven, sinking = conn.execute(
        "SELECT count(*) FILTER (WHERE success_count + failure_count > 0), "
        "count(*) FILTER (WHERE success_count >= ? AND outcome_score >= ? "
        "AND success_count >= 2 * failure_count), "
        "count(*) FILTER (WHERE outcome_score <= ?) FROM memories WHERE status = 'active'",
        [rules.proven_min_successes, rules.proven_min_score, rules.floor],
    ).fetchone()
    tasks = dict(
        conn.execute(
            "SELECT outcome, count(*) FROM tasks WHERE outcome IS NOT NULL GROUP BY outcome"
        ).fetchall()
    )
    return {
        "judged": int(judged),
        "proven": int(proven),
        "sinking": int(sinking),
        "tasks_succeeded": int(tasks.get("success", 0)),
        "tasks_failed": int(tasks.get("failure", 0)),
    }
