"""Conflicts between values of one structured fact (table ``conflicts``, migration m030).

One row per conflict: the fact (project, subject, key), when it opened, and how it
was resolved. The candidate values are memories pointing at it (``conflict_id``,
in ``storage.records``). A unique index allows one open conflict per fact. Choosing
between candidates and logging it is ``trust.facts``'s job.

On the hook path (captures may open a conflict): nothing heavy is imported here.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.storage.conn import Conn, id_matches, raw


@dataclass(frozen=True)
class Conflict:
    id: str
    project: str | None
    subject: str
    fact_key: str
    opened_at: str
    resolved_at: str | None

    @property
    def is_open(self) -> bool:
        return self.resolved_at is None


_COLUMNS = "id, project, subject, fact_key, opened_at, resolved_at"
# One fact: the project (NULL for global, which the unique index reads as ''), the
# subject case-insensitively, and the key.
_SAME_FACT = (
    "coalesce(project, '') = coalesce(?, '') AND subject = ? COLLATE NOCASE AND fact_key = ?"
)


def get_conflict(db: Conn, conflict_id: str) -> Conflict | None:
    row = (
        raw(db).execute(f"SELECT {_COLUMNS} FROM conflicts WHERE id = ?", [conflict_id]).fetchone()
    )
    return Conflict(*row) if row else None


def open_conflict_id(db: Conn, project: str | None, subject: str, key: str) -> str | None:
    """The id of the fact's open conflict, if it has one."""
    row = (
        raw(db)
        .execute(
            f"SELECT id FROM conflicts WHERE {_SAME_FACT} AND resolved_at IS NULL",
            [project, subject, key],
        )
        .fetchone()
    )
    return str(row[0]) if row else None


def insert_conflict(
    db: Conn, conflict_id: str, project: str | None, subject: str, key: str, *, opened_at: str
) -> None:
    raw(db).execute(
        "INSERT INTO conflicts(id, project, subject, fact_key, opened_at) VALUES (?, ?, ?, ?, ?)",
        [conflict_id, project, subject, key, opened_at],
    )


def open_conflicts(db: Conn) -> list[Conflict]:
    """Every unresolved conflict, oldest first."""
    rows = raw(db).execute(
        f"SELECT {_COLUMNS} FROM conflicts WHERE resolved_at IS NULL ORDER BY opened_at, id"
    )
    return [Conflict(*row) for row in rows]


def mark_resolved(
    db: Conn, conflict_id: str, *, at: str, actor: str, chosen_id: str | None, reason: str | None
) -> None:
    raw(db).execute(
        "UPDATE conflicts SET resolved_at = ?, resolved_by = ?, chosen_id = ?, reason = ? "
        "WHERE id = ?",
        [at, actor, chosen_id, reason, conflict_id],
    )


def resolve_open_for_fact(
    db: Conn,
    project: str | None,
    subject: str,
    key: str,
    *,
    at: str,
    actor: str,
    chosen_id: str,
    reason: str | None,
) -> int:
    """Close the fact's open conflict in favour of ``chosen_id``; how many were closed."""
    cursor = raw(db).execute(
        "UPDATE conflicts SET resolved_at = ?, resolved_by = ?, chosen_id = ?, reason = ? "
        f"WHERE {_SAME_FACT} AND resolved_at IS NULL",
        [at, actor, chosen_id, reason, project, subject, key],
    )
    return cursor.rowcount


def ids_matching(db: Conn, item_id: str, prefix_limit: int) -> list[str]:
    """``[item_id]`` when a conflict has exactly that id, else up to ``prefix_limit`` ids
    of conflicts starting with it."""
    return id_matches(db, "conflicts", item_id, prefix_limit)
