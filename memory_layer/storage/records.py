"""Memory rows, counts over them, and the operations log.

Every write goes through this module so that each change leaves one operation
row (who, what, old value, new value, when, context). Audit, history, undo and
replay all read that one log.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import Memory, iso, memory_from_row, utcnow
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.textindex import fts_document, normalise_for_hash

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Selecting the embedding BLOB for every listed row would cost ~1.5 KB each for nothing.
# Keyed by connection and schema version, so a migration in this process is seen at once.
_SCHEMA_CACHE: dict[tuple[int, int], tuple[list[str], str]] = {}


def _schema(db: Conn) -> tuple[list[str], str]:
    conn = raw(db)
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    key = (id(conn), int(version))
    if key not in _SCHEMA_CACHE:
        names = [r[1] for r in conn.execute("PRAGMA table_info(memories)") if r[1] != "embedding"]
        # Column names come from the schema, never from user input.
        select = ", ".join(f"memories.[{n}]" for n in names)
        _SCHEMA_CACHE[key] = (["rowid", *names], select)
    return _SCHEMA_CACHE[key]


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


_savepoints = 0


@contextmanager
def transaction(db: Conn) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE (or a savepoint when nested): take the write lock up front so
    read-then-write sequences never interleave with another process's writes."""
    global _savepoints
    conn = raw(db)
    if conn.in_transaction:
        _savepoints += 1
        name = f"ml_sp_{_savepoints}"
        conn.execute("SAVEPOINT " + name)
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO SAVEPOINT " + name)
                conn.execute("RELEASE SAVEPOINT " + name)
            raise
        else:
            conn.execute("RELEASE SAVEPOINT " + name)
        return
    _locking(conn, "BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        _locking(conn, "COMMIT")


def _locking(conn: sqlite3.Connection, statement: str) -> None:
    """Run a statement that waits for the write lock; a lock still held by another
    process after the busy timeout becomes the store's named error, saying what to do."""
    try:
        conn.execute(statement)
    except sqlite3.OperationalError as exc:
        from memory_layer.storage.db import explain_error, is_locked

        if not is_locked(exc):
            raise

        path = conn.execute("PRAGMA database_list").fetchone()[2]
        if conn.in_transaction:  # a COMMIT that could not finish: nothing half-written
            conn.execute("ROLLBACK")
        raise explain_error(exc, path) from None


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


def _public(values: dict[str, Any]) -> dict[str, Any]:
    """What the log keeps of a row: everything but the vector."""
    out = {k: v for k, v in values.items() if k not in {"embedding", "content_hash"}}
    if isinstance(out.get("tags"), str):
        out["tags"] = json.loads(out["tags"])
    return out


def insert_memory(
    db: Conn,
    values: dict[str, Any],
    *,
    actor: str,
    context: dict[str, Any] | None = None,
) -> Memory:
    row = dict(values)
    row["tags"] = json.dumps(list(row.get("tags") or []), ensure_ascii=False)
    row["content_hash"] = normalise_for_hash(row["text"])
    columns = list(row)
    placeholders = ", ".join("?" for _ in columns)
    with transaction(db):
        cursor = raw(db).execute(
            "INSERT INTO memories(" + ", ".join(f"[{c}]" for c in columns) + ") "
            "VALUES (" + placeholders + ")",
            [row[c] for c in columns],
        )
        rowid = cursor.lastrowid
        raw(db).execute(
            "INSERT INTO memories_fts(rowid, body) VALUES (?, ?)",
            [rowid, fts_document(row["text"], row.get("subject"), row.get("fact_key"))],
        )
        record_op(
            db,
            actor=actor,
            action="create",
            memory_id=row["id"],
            new=_public(row),
            context=context,
        )
    return get_memory(db, row["id"])


def _assert_known_columns(db: Conn, changes: dict[str, Any]) -> None:
    known = {r[1] for r in raw(db).execute("PRAGMA table_info(memories)")}
    unknown = set(changes) - known
    if unknown:
        raise InvalidInput(f"Unknown memory field(s): {', '.join(sorted(unknown))}.")


def update_memory(
    db: Conn,
    memory_id: str,
    changes: dict[str, Any],
    *,
    actor: str,
    action: str = "update",
    context: dict[str, Any] | None = None,
    log_fields: Sequence[str] | None = None,
) -> Memory:
    """Apply ``changes`` to one memory and log old/new values of what actually changed."""
    _assert_known_columns(db, changes)
    with transaction(db):
        current = get_memory(db, memory_id)
        values = (
            raw(db)
            .execute(
                "SELECT " + ", ".join(f"[{c}]" for c in changes) + " FROM memories WHERE id = ?",
                [current.id],
            )
            .fetchone()
        )
        old = dict(zip(changes, values, strict=True))
        new = dict(changes)
        if "tags" in new and not isinstance(new["tags"], str):
            new["tags"] = json.dumps(list(new["tags"]), ensure_ascii=False)
        if "text" in new:
            new["content_hash"] = normalise_for_hash(new["text"])
        changed = {k: v for k, v in new.items() if k == "content_hash" or old.get(k) != v}
        if not any(k != "content_hash" for k in changed):
            return current
        if "updated_at" not in changed:
            changed["updated_at"] = iso(utcnow())
        raw(db).execute(
            "UPDATE memories SET " + ", ".join(f"[{c}] = ?" for c in changed) + " WHERE id = ?",
            [*changed.values(), current.id],
        )
        if changed.keys() & {"text", "subject", "fact_key"}:
            body = fts_document(
                changed.get("text", current.text),
                changed.get("subject", current.extra.get("subject")),
                changed.get("fact_key", current.extra.get("fact_key")),
            )
            raw(db).execute(
                "UPDATE memories_fts SET body = ? WHERE rowid = ?", [body, current.rowid]
            )
        logged = [k for k in changed if k not in {"updated_at", "content_hash", "embedding"}]
        if log_fields is not None:
            logged = [k for k in logged if k in log_fields]
        if logged or "embedding" in changed:
            record_op(
                db,
                actor=actor,
                action=action,
                memory_id=current.id,
                old=_public({k: old.get(k) for k in logged}),
                new=_public({k: changed[k] for k in logged}),
                context=context,
            )
    return get_memory(db, current.id)


def delete_memory(
    db: Conn, memory_id: str, *, actor: str, context: dict[str, Any] | None = None
) -> Memory:
    with transaction(db):
        current = get_memory(db, memory_id)
        raw(db).execute("DELETE FROM memories_fts WHERE rowid = ?", [current.rowid])
        raw(db).execute("DELETE FROM memories WHERE id = ?", [current.id])
        record_op(
            db,
            actor=actor,
            action="purge",
            memory_id=current.id,
            old=current.to_dict(),
            context=context,
        )
    return current


def get_memory(db: Conn, memory_id: str) -> Memory:
    """A memory by full id, or by a unique prefix of at least 4 characters."""
    memory_id = (memory_id or "").strip()
    if not memory_id:
        raise InvalidInput("A memory id is required. `memory-layer list` shows ids.")
    names, cols = _schema(db)
    row = (
        raw(db)
        .execute(
            "SELECT memories.rowid AS rowid, " + cols + " FROM memories WHERE id = ?", [memory_id]
        )
        .fetchone()
    )
    if row is None and len(memory_id) >= 4:
        rows = (
            raw(db)
            .execute(
                "SELECT memories.rowid AS rowid, " + cols + " FROM memories "
                "WHERE id >= ? AND id < ? LIMIT 2",
                [memory_id, memory_id + "\U0010ffff"],
            )
            .fetchall()
        )
        if len(rows) > 1:
            raise NotFound(f"Id prefix '{memory_id}' is ambiguous; type more characters.")
        row = rows[0] if rows else None
    if row is None:
        raise NotFound(f"No memory with id '{memory_id}'. `memory-layer list` shows ids.")
    return _to_memory(names, row)


def _to_memory(names: list[str], row: Sequence[Any]) -> Memory:
    return memory_from_row(dict(zip(names, row, strict=True)))


def memories_where(
    db: Conn,
    where: str = "1",
    params: Sequence[Any] = (),
    *,
    order_by: str = "memories.created_at DESC, memories.id",
    limit: int | None = None,
    offset: int = 0,
) -> list[Memory]:
    """Rows matching a WHERE clause written by the caller with ``?`` parameters only."""
    names, cols = _schema(db)
    sql = "SELECT memories.rowid AS rowid, " + cols + " FROM memories WHERE " + where
    sql += " ORDER BY " + order_by
    args = list(params)
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        args += [limit, offset]
    return [_to_memory(names, row) for row in raw(db).execute(sql, args).fetchall()]


# Well under SQLite's limit on bound parameters (999 in older builds).
IN_CHUNK = 500


def memories_by_rowid(db: Conn, rowids: Sequence[int]) -> dict[int, Memory]:
    out: dict[int, Memory] = {}
    ids = list(rowids)
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        marks = ", ".join("?" for _ in chunk)
        for memory in memories_where(db, f"memories.rowid IN ({marks})", chunk, order_by="1"):
            out[memory.rowid] = memory
    return out


def memories_by_id(db: Conn, memory_ids: Sequence[str]) -> dict[str, Memory]:
    """The memories with these full ids (missing ones are left out)."""
    out: dict[str, Memory] = {}
    ids = list(dict.fromkeys(memory_ids))
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        marks = ", ".join("?" for _ in chunk)
        for memory in memories_where(db, f"memories.id IN ({marks})", chunk, order_by="1"):
            out[memory.id] = memory
    return out


def find_by_hash(db: Conn, text: str, project: str | None) -> Memory | None:
    found = memories_where(
        db,
        "content_hash = ? AND project IS ? AND status != 'purged'",
        [normalise_for_hash(text), project],
        limit=1,
    )
    return found[0] if found else None


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


def total_memories(db: Conn) -> int:
    """Every row, whatever its status (purged rows are deleted, not counted)."""
    return int(raw(db).execute("SELECT count(*) FROM memories").fetchone()[0])


def unembedded_count(db: Conn) -> int:
    """Memories stored keyword-only, waiting for a vector (`memory-layer index`)."""
    return int(
        raw(db).execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone()[0]
    )


def has_unembedded(db: Conn) -> bool:
    """Whether any memory lacks a vector: instant, the partial index holds only those."""
    row = raw(db).execute("SELECT 1 FROM memories WHERE embedding IS NULL LIMIT 1").fetchone()
    return row is not None


def judged_outcome_scores(db: Conn) -> list[float]:
    """Scores of active memories some outcome has judged. Never-judged ones sit at 0.0,
    which would fill a histogram's "+0.0 to +0.2" bar with memories no outcome touched."""
    rows = (
        raw(db)
        .execute(
            "SELECT outcome_score FROM memories WHERE status = 'active' "
            "AND success_count + failure_count > 0"
        )
        .fetchall()
    )
    return [float(r[0]) for r in rows]


def all_memories(db: Conn) -> list[Memory]:
    """Every record, in insertion order (the Markdown mirror writes them all out)."""
    return memories_where(db, "1", order_by="memories.rowid")
