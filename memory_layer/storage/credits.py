"""What each task (or direct feedback) did to a memory's outcome score (table
``task_credits``, migration m020).

One row per (task, memory) judged, including memories shown but not acted on
(weight 0): the weight, the delta, exactly what was applied (so an undo reverses
that), the evidence (JSON) and, once undone, who reversed it and why. A unique index
keeps one live credit per (task, memory). Rows are returned as dicts, ``evidence``
decoded, the shape the outcome views and doors show. Computing a credit is
``outcomes.credit``'s job.
"""

from __future__ import annotations

import json

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.storage.conn import Conn, raw

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

CREDIT_COLUMNS = (
    "id",
    "task_id",
    "memory_id",
    "outcome",
    "weight",
    "delta",
    "applied",
    "old_score",
    "new_score",
    "success_inc",
    "failure_inc",
    "use_inc",
    "old_proven_at",
    "new_proven_at",
    "evidence",
    "source",
    "actor",
    "at",
    "reversed_at",
    "reversed_by",
    "reversal_reason",
)
# Columns a new credit may set: the rest are its id and the reversal, set on undo.
_WRITABLE = frozenset(CREDIT_COLUMNS) - {"id", "reversed_at", "reversed_by", "reversal_reason"}


def _credit(row: Sequence[Any]) -> dict[str, Any]:
    data = dict(zip(CREDIT_COLUMNS, row, strict=True))
    data["evidence"] = json.loads(data["evidence"] or "[]")
    return data


def _where(db: Conn, where: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    # ``where`` is always one of this module's literals, with ``?`` parameters only.
    rows = raw(db).execute(
        "SELECT "
        + ", ".join(CREDIT_COLUMNS)
        + " FROM task_credits WHERE "
        + where
        + " ORDER BY id",
        list(params),
    )
    return [_credit(r) for r in rows]


def get_credit(db: Conn, credit_id: int) -> dict[str, Any] | None:
    found = _where(db, "id = ?", [credit_id])
    return found[0] if found else None


def task_credits(db: Conn, task_id: str) -> list[dict[str, Any]]:
    """Every credit the task gave, reversed ones included, oldest first."""
    return _where(db, "task_id = ?", [task_id])


def live_task_credits(db: Conn, task_id: str) -> list[dict[str, Any]]:
    """The task's credits still in effect, oldest first."""
    return _where(db, "task_id = ? AND reversed_at IS NULL", [task_id])


def memory_credits(db: Conn, memory_id: str) -> list[dict[str, Any]]:
    """Every credit a memory received, reversed ones included, oldest first."""
    return _where(db, "memory_id = ?", [memory_id])


def weighted_credits(db: Conn) -> list[dict[str, Any]]:
    """Every credit with a weight above 0 (the memory was acted on), oldest first."""
    return _where(db, "weight > 0", [])


def live_direct_reports(db: Conn, memory_id: str, source: str, since: str) -> list[dict[str, Any]]:
    """Direct feedback (no task) from ``source`` on a memory at or after ``since`` that
    is still in effect, oldest first."""
    return _where(
        db,
        "memory_id = ? AND source = ? AND task_id IS NULL AND reversed_at IS NULL AND at >= ?",
        [memory_id, source, since],
    )


def credited_counts(db: Conn, task_ids: Sequence[str]) -> dict[str, int]:
    """For each task id, how many memories it credits now (weight above 0, not
    reversed); a task with none is left out."""
    if not task_ids:
        return {}
    marks = ", ".join("?" for _ in task_ids)
    rows = raw(db).execute(
        "SELECT task_id, count(*) FROM task_credits WHERE task_id IN (" + marks + ") "
        "AND reversed_at IS NULL AND weight > 0 GROUP BY task_id",
        list(task_ids),
    )
    return {str(task_id): int(count) for task_id, count in rows}


def insert_credit(db: Conn, values: dict[str, Any]) -> dict[str, Any]:
    """Store a credit (``evidence`` already JSON); returns it as stored."""
    unknown = set(values) - _WRITABLE
    if unknown:
        raise InvalidInput(f"Unknown credit field(s): {', '.join(sorted(unknown))}.")
    # Column names are checked against CREDIT_COLUMNS above, never taken from input.
    cursor = raw(db).execute(
        "INSERT INTO task_credits("
        + ", ".join(values)
        + ") VALUES ("
        + ", ".join("?" for _ in values)
        + ")",
        list(values.values()),
    )
    return _stored(db, int(cursor.lastrowid or 0))


def mark_reversed(db: Conn, credit_id: int, *, at: str, actor: str, reason: str) -> dict[str, Any]:
    """Record that a credit was undone (its effect on the memory is the caller's to
    reverse); returns it as stored."""
    raw(db).execute(
        "UPDATE task_credits SET reversed_at = ?, reversed_by = ?, reversal_reason = ? "
        "WHERE id = ?",
        [at, actor, reason, credit_id],
    )
    return _stored(db, credit_id)


def _stored(db: Conn, credit_id: int) -> dict[str, Any]:
    found = get_credit(db, credit_id)
    if found is None:  # cannot happen inside the caller's transaction; never hide it
        raise NotFound(f"Credit #{credit_id} is not stored.")
    return found


def failed_by_person(
    db: Conn, memory_ids: Sequence[str], tracker_sources: Sequence[str]
) -> set[str]:
    """Which of these memories carry a live failure credit from a person: a credit whose
    source starts with none of ``tracker_sources`` (the trackers and agents)."""
    if not memory_ids:
        return set()
    marks = ",".join("?" * len(memory_ids))
    rows = raw(db).execute(
        "SELECT memory_id, source FROM task_credits WHERE memory_id IN (" + marks + ") "
        "AND outcome = 'failure' AND weight > 0 AND reversed_at IS NULL",
        list(memory_ids),
    )
    prefixes = tuple(tracker_sources)
    return {memory_id for memory_id, source in rows if not str(source).startswith(prefixes)}
