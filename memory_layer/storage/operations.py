"""The operations log (table ``operations``): who changed what, old and new value, when.

``records`` writes a row here for every change to a memory, in the same transaction;
audit, history, undo and replay all read this one log. Values are JSON.

On the hook path: nothing heavy is imported here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from memory_layer.models import iso, utcnow
from memory_layer.storage.conn import Conn, raw

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


@dataclass(frozen=True)
class Operation:
    id: int
    at: str
    actor: str
    action: str
    memory_id: str | None
    old_value: Any
    new_value: Any
    context: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "actor": self.actor,
            "action": self.action,
            "memory_id": self.memory_id,
            "old_value": self.old_value,
            "new_value": self.new_value,
            "context": self.context,
        }


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def record_op(
    db: Conn,
    *,
    actor: str,
    action: str,
    memory_id: str | None,
    old: Any = None,
    new: Any = None,
    context: dict[str, Any] | None = None,
    at: str | None = None,
) -> int:
    cursor = raw(db).execute(
        "INSERT INTO operations(at, actor, action, memory_id, old_value, new_value, context) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [at or iso(utcnow()), actor, action, memory_id, _dump(old), _dump(new), _dump(context)],
    )
    return int(cursor.lastrowid or 0)


def _to_operation(row: Sequence[Any]) -> Operation:
    op_id, at, actor, action, memory_id, old, new, context = row
    return Operation(
        id=op_id,
        at=at,
        actor=actor,
        action=action,
        memory_id=memory_id,
        old_value=json.loads(old) if old else None,
        new_value=json.loads(new) if new else None,
        context=json.loads(context) if context else {},
    )


_OP_COLUMNS = "id, at, actor, action, memory_id, old_value, new_value, context"


def history(db: Conn, memory_id: str) -> list[Operation]:
    rows = (
        raw(db)
        .execute(
            "SELECT " + _OP_COLUMNS + " FROM operations WHERE memory_id = ? ORDER BY id",
            [memory_id],
        )
        .fetchall()
    )
    return [_to_operation(r) for r in rows]


def operations(
    db: Conn, *, since: str | None = None, after_id: int = 0, limit: int | None = None
) -> list[Operation]:
    sql = "SELECT " + _OP_COLUMNS + " FROM operations WHERE id > ?"
    args: list[Any] = [after_id]
    if since:
        sql += " AND at >= ?"
        args.append(since)
    sql += " ORDER BY id"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [_to_operation(r) for r in raw(db).execute(sql, args).fetchall()]


def recent_operations(db: Conn, limit: int) -> list[Operation]:
    """The last ``limit`` operations, newest first."""
    newest = raw(db).execute("SELECT coalesce(max(id), 0) FROM operations").fetchone()[0]
    ops = operations(db, after_id=max(0, int(newest) - limit), limit=limit)
    return list(reversed(ops))


def count_operations(db: Conn) -> int:
    return int(raw(db).execute("SELECT count(*) FROM operations").fetchone()[0])


def last_context(db: Conn, memory_id: str, action: str) -> dict[str, Any] | None:
    """The context of the memory's latest operation of kind ``action`` (None when it has
    none, or that operation carried no context)."""
    row = (
        raw(db)
        .execute(
            "SELECT context FROM operations WHERE memory_id = ? AND action = ? "
            "ORDER BY id DESC LIMIT 1",
            [memory_id, action],
        )
        .fetchone()
    )
    if not row or not row[0]:
        return None
    return json.loads(row[0])
