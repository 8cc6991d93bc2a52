"""Proposed changes to existing records, waiting for review (table ``proposals``,
migrations m030 and m080).

A proposal holds the new text, other proposed fields (JSON ``changes``), who proposed
it and why, and the text it was made against (``base_text``: accepting it later must
not undo a newer edit). A unique index keeps one open proposal per (memory, text).
Deciding one, and logging it, is ``trust.review``'s job. Rows are returned as dicts,
``changes`` decoded, the shape the inbox and the doors show.
"""

from __future__ import annotations

import json

from memory_layer.errors import NotFound
from memory_layer.storage.conn import Conn, id_matches, raw, source_match

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_NAMES = (
    "id",
    "memory_id",
    "text",
    "changes",
    "source",
    "reason",
    "created_at",
    "status",
    "decided_by",
    "decided_at",
    "decision_reason",
    "base_text",
)
_SELECT = "SELECT " + ", ".join(_NAMES) + " FROM proposals"
# Open proposals are matched with the literal 'open' (not a bound value) so that SQLite
# can use the partial unique index on them (uq_proposals_open).


def _proposal(row: Sequence[Any]) -> dict[str, Any]:
    data = dict(zip(_NAMES, row, strict=True))
    data["changes"] = json.loads(data["changes"]) if data["changes"] else {}
    return data


def open_proposal_count(db: Conn, source: str, *, prefix: bool = False) -> int:
    """Open proposals by ``source``, or (``prefix``) by every source starting with it."""
    where, args = source_match(source, prefix=prefix)
    row = (
        raw(db)
        .execute("SELECT count(*) FROM proposals WHERE status = 'open' AND " + where, args)
        .fetchone()
    )
    return int(row[0])


def get_proposal(db: Conn, proposal_id: str) -> dict[str, Any] | None:
    row = raw(db).execute(_SELECT + " WHERE id = ?", [proposal_id]).fetchone()
    return _proposal(row) if row else None


def open_proposal_for(db: Conn, memory_id: str, text: str) -> dict[str, Any] | None:
    """The open proposal of exactly this text for this memory, if there is one."""
    row = (
        raw(db)
        .execute(
            _SELECT + " WHERE memory_id = ? AND text = ? AND status = 'open'", [memory_id, text]
        )
        .fetchone()
    )
    return _proposal(row) if row else None


def open_proposals(db: Conn, memory_id: str | None = None) -> list[dict[str, Any]]:
    """Open proposals (for one memory, when given), oldest first."""
    sql = _SELECT + " WHERE status = 'open'"
    args: list[Any] = []
    if memory_id is not None:
        sql += " AND memory_id = ?"
        args.append(memory_id)
    rows = raw(db).execute(sql + " ORDER BY created_at, id", args).fetchall()
    return [_proposal(r) for r in rows]


def insert_proposal(
    db: Conn,
    proposal_id: str,
    memory_id: str,
    text: str,
    *,
    changes: dict[str, Any],
    source: str,
    reason: str | None,
    created_at: str,
    base_text: str,
) -> dict[str, Any]:
    """Store an open proposal; returns it as stored."""
    raw(db).execute(
        "INSERT INTO proposals(id, memory_id, text, changes, source, reason, created_at, "
        "base_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            proposal_id,
            memory_id,
            text,
            json.dumps(changes, sort_keys=True),
            source,
            reason,
            created_at,
            base_text,
        ],
    )
    stored = get_proposal(db, proposal_id)
    if stored is None:  # cannot happen inside the caller's transaction; never hide it
        raise NotFound(f"Proposal {proposal_id} vanished as it was stored.")
    return stored


def mark_decided(
    db: Conn, proposal_id: str, status: str, *, actor: str, at: str, reason: str | None
) -> None:
    """Record the decision (``status`` accepted, revised or rejected) on a proposal."""
    raw(db).execute(
        "UPDATE proposals SET status = ?, decided_by = ?, decided_at = ?, decision_reason = ? "
        "WHERE id = ?",
        [status, actor, at, reason, proposal_id],
    )


def ids_matching(db: Conn, item_id: str, prefix_limit: int) -> list[str]:
    """``[item_id]`` when a proposal has exactly that id, else up to ``prefix_limit`` ids
    of proposals starting with it."""
    return id_matches(db, "proposals", item_id, prefix_limit)
