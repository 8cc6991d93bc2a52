"""Listing memories and counting them: the filters and sort orders the CLI and the
dashboard offer, one page of matches, and the counts ``memory-layer stats`` shows.

Read-only queries on ``memories``; every write, and the row shape a listing returns,
is ``storage.records``'s (this module pages through ``records.memories_where``). Kept
apart so that module stays about rows and their writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.errors import InvalidInput
from memory_layer.models import Memory, check_category, check_status
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.records import memories_where

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def outcome_marks(
    db: Conn, *, proven_min_successes: int, proven_min_score: float, floor: float
) -> tuple[int, int, int]:
    """(judged, proven, sinking) among active memories, by the thresholds given (the
    rules of ``outcomes.rules.is_proven`` / ``is_sinking``, which storage cannot import)."""
    judged, proven, sinking = (
        raw(db)
        .execute(
            "SELECT count(*) FILTER (WHERE success_count + failure_count > 0), "
            "count(*) FILTER (WHERE success_count >= ? AND outcome_score >= ? "
            "AND success_count >= 2 * failure_count), "
            "count(*) FILTER (WHERE outcome_score <= ?) FROM memories WHERE status = 'active'",
            [proven_min_successes, proven_min_score, floor],
        )
        .fetchone()
    )
    return int(judged), int(proven), int(sinking)


# Columns a count may be grouped by: the literals interpolated below.
_GROUPABLE = ("category", "status", "project", "source")


def counts_by(db: Conn, column: str) -> dict[str, int]:
    """How many memories hold each value of ``column``, most first (no project counts
    as 'global')."""
    if column not in _GROUPABLE:
        raise InvalidInput(f"Cannot count memories by {column!r}; one of {', '.join(_GROUPABLE)}.")
    rows = (
        raw(db)
        .execute(
            "SELECT coalesce(" + column + ", 'global'), count(*) FROM memories GROUP BY 1 "
            "ORDER BY 2 DESC, 1"
        )
        .fetchall()
    )
    return {str(k): int(v) for k, v in rows}


# --- Listing: the filters and orders the CLI and the dashboard offer ----------------

# Sort names people choose, with the ORDER BY each one means.
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

    def __post_init__(self) -> None:
        # An unknown status or category would match nothing, and an empty list reads as
        # "no such memories": refuse it where the filters are made (CLI, dashboard).
        if self.status:
            object.__setattr__(self, "status", check_status(self.status))
        if self.category:
            object.__setattr__(self, "category", check_category(self.category))


def _filter_where(filters: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if filters.project == "global":
        clauses.append("memories.project IS NULL")
    elif filters.project:
        clauses.append("memories.project = ?")
        args.append(filters.project)
    for column, value in (
        ("category", filters.category),
        ("status", filters.status),
        ("source", filters.source),
    ):
        if value:
            clauses.append(f"memories.{column} = ?")
            args.append(value)
    if filters.tag:
        clauses.append("EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value = ?)")
        args.append(filters.tag)
    if filters.min_outcome is not None:
        clauses.append("memories.outcome_score >= ?")
        args.append(filters.min_outcome)
    if filters.max_outcome is not None:
        clauses.append("memories.outcome_score <= ?")
        args.append(filters.max_outcome)
    return (" AND ".join(clauses) or "1"), args


def list_memories(
    db: Conn, filters: Filters, *, limit: int = 50, offset: int = 0, sort: str = "newest"
) -> list[Memory]:
    """One page of the memories matching ``filters``, in the ``sort`` order (an unknown
    sort name lists newest first)."""
    # SQLite reads LIMIT -1 as "no limit": a negative page size must not list everything.
    if limit < 1 or offset < 0:
        raise InvalidInput(
            f"limit must be at least 1 and offset at least 0 (got {limit}, {offset})."
        )
    where, args = _filter_where(filters)
    return memories_where(
        db, where, args, order_by=SORTS.get(sort, SORTS["newest"]), limit=limit, offset=offset
    )


def count_memories(db: Conn, filters: Filters) -> int:
    where, args = _filter_where(filters)
    return int(raw(db).execute("SELECT count(*) FROM memories WHERE " + where, args).fetchone()[0])


# What SessionStart considers: the freshest memories and the best-scored ones, this many
# of each (its quality blend then orders them all; the pool stays small at any size).
SESSION_START_POOL = 300
_SESSION_START_ORDERS = (
    "max(coalesce(proven_at, ''), created_at) DESC",
    "outcome_score DESC, use_count DESC",
)


def session_start_pool(db: Conn, project: str, statuses: tuple[str, ...]) -> list[Memory]:
    """Candidates for the SessionStart block: in ``statuses``, of ``project`` or global,
    the freshest and the best-scored (each at most ``SESSION_START_POOL``), once each."""
    marks = ", ".join("?" for _ in statuses)
    where = f"status IN ({marks}) AND (project = ? OR project IS NULL)"
    pool: dict[str, Memory] = {}
    for order in _SESSION_START_ORDERS:
        for memory in memories_where(
            db, where, [*statuses, project], order_by=order, limit=SESSION_START_POOL
        ):
            pool.setdefault(memory.id, memory)
    return list(pool.values())
