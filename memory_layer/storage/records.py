"""Memory rows (tables ``memories`` and its FTS index ``memories_fts``) and the
queries over them.

Every write goes through this module so that each change leaves one operation
row (who, what, old value, new value, when, context; ``storage.operations``) in
the same transaction. Audit, history, undo and replay all read that one log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import Memory, iso, memory_from_row, utcnow
from memory_layer.storage.conn import Conn, id_matches, raw, source_match

# The operations log has its own module; these names are imported from here by the
# doors (and were defined here before the split), so they stay importable here.
from memory_layer.storage.operations import Operation as Operation
from memory_layer.storage.operations import history as history
from memory_layer.storage.operations import operations as operations
from memory_layer.storage.operations import recent_operations as recent_operations
from memory_layer.storage.operations import record_op
from memory_layer.storage.textindex import fts_document, normalise_for_hash
from memory_layer.storage.transaction import transaction as transaction

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


# Shorter prefixes match too many ids to be worth guessing at (and read like typos).
MIN_ID_PREFIX = 4


def get_memory(db: Conn, memory_id: str) -> Memory:
    """A memory by full id, or by a unique prefix of at least MIN_ID_PREFIX characters."""
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
    if row is None and len(memory_id) >= MIN_ID_PREFIX:
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
    if row is None and len(memory_id) < MIN_ID_PREFIX:
        raise NotFound(
            f"No memory with id '{memory_id}': an id prefix needs at least {MIN_ID_PREFIX} "
            "characters. `memory-layer list` shows ids."
        )
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


def _in_chunks(db: Conn, column: str, values: Sequence[Any]) -> list[Memory]:
    """The memories whose ``column`` (a fixed literal of this module) is one of ``values``."""
    found: list[Memory] = []
    for start in range(0, len(values), IN_CHUNK):
        chunk = list(values[start : start + IN_CHUNK])
        marks = ", ".join("?" for _ in chunk)
        found += memories_where(db, f"{column} IN ({marks})", chunk, order_by="1")
    return found


def memories_by_rowid(db: Conn, rowids: Sequence[int]) -> dict[int, Memory]:
    return {m.rowid: m for m in _in_chunks(db, "memories.rowid", list(rowids))}


def memories_by_id(db: Conn, memory_ids: Sequence[str]) -> dict[str, Memory]:
    """The memories with these full ids (missing ones are left out)."""
    return {m.id: m for m in _in_chunks(db, "memories.id", list(dict.fromkeys(memory_ids)))}


def find_by_hash(db: Conn, text: str, project: str | None) -> Memory | None:
    found = memories_where(
        db,
        "content_hash = ? AND project IS ? AND status != 'purged'",
        [normalise_for_hash(text), project],
        limit=1,
    )
    return found[0] if found else None


def total_memories(db: Conn) -> int:
    """Every row, whatever its status (purged rows are deleted, not counted)."""
    return int(raw(db).execute("SELECT count(*) FROM memories").fetchone()[0])


def unembedded_count(db: Conn) -> int:
    """Memories stored keyword-only, waiting for a vector (`memory-layer index`)."""
    return int(
        raw(db).execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone()[0]
    )


def other_model_count(db: Conn, model_id: str) -> int:
    """Memories whose vector another model made (before a switch of embedding.model):
    recall leaves those vectors out until `memory-layer index` re-embeds them."""
    row = raw(db).execute(
        "SELECT count(*) FROM memories WHERE embedding IS NOT NULL AND embedding_model IS NOT ?",
        [model_id],
    ).fetchone()
    return int(row[0])


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


# --- Lookups the use cases name ------------------------------------------------------


def memory_exists(db: Conn, memory_id: str) -> bool:
    """Whether a memory has exactly this id (no prefix matching)."""
    row = raw(db).execute("SELECT 1 FROM memories WHERE id = ?", [memory_id]).fetchone()
    return row is not None


def stored_text(db: Conn, memory_id: str) -> str | None:
    """The text of the memory with exactly this id, or None."""
    row = raw(db).execute("SELECT text FROM memories WHERE id = ?", [memory_id]).fetchone()
    return row[0] if row else None


def text_stored(db: Conn, text: str, project: str | None) -> bool:
    """Whether the scope already holds this text (as normalised for duplicates), whatever
    its status."""
    row = (
        raw(db)
        .execute(
            "SELECT 1 FROM memories WHERE content_hash = ? AND project IS ?",
            [normalise_for_hash(text), project],
        )
        .fetchone()
    )
    return row is not None


def with_same_text(
    db: Conn,
    text: str,
    project: str | None,
    statuses: Sequence[str],
    *,
    with_global: bool = False,
    limit: int | None = None,
) -> list[Memory]:
    """Memories of ``project`` (and global ones, ``with_global``) in ``statuses`` whose text
    is this one as normalised for duplicates, oldest first."""
    marks = ", ".join("?" for _ in statuses)
    scope = "(project IS ? OR project IS NULL)" if with_global else "project IS ?"
    return memories_where(
        db,
        f"content_hash = ? AND {scope} AND status IN ({marks})",
        [normalise_for_hash(text), project, *statuses],
        order_by="memories.rowid",
        limit=limit,
    )


def active_in_project(db: Conn, project: str | None) -> list[Memory]:
    """The active records of one scope (``None``: global ones), oldest first."""
    return memories_where(
        db, "project IS ? AND status = 'active'", [project], order_by="memories.rowid"
    )


def pending_count(db: Conn, source: str, *, prefix: bool = False) -> int:
    """Pending records written by ``source``, or (``prefix``) by every source starting
    with it (``mcp:``: every agent)."""
    where, args = source_match(source, prefix=prefix)
    row = (
        raw(db)
        .execute("SELECT count(*) FROM memories WHERE status = 'pending' AND " + where, args)
        .fetchone()
    )
    return int(row[0])


def with_status(db: Conn, statuses: Sequence[str]) -> list[Memory]:
    """Every memory in one of ``statuses``, oldest first."""
    marks = ", ".join("?" for _ in statuses)
    return memories_where(db, f"status IN ({marks})", list(statuses), order_by="memories.rowid")


def fact_values(
    db: Conn, project: str | None, subject: str, key: str, statuses: Sequence[str]
) -> list[Memory]:
    """The values recorded for one structured fact (subject case-insensitive) in
    ``project``, in ``statuses``, oldest first."""
    marks = ", ".join("?" for _ in statuses)
    return memories_where(
        db,
        f"subject = ? COLLATE NOCASE AND fact_key = ? AND project IS ? AND status IN ({marks})",
        [subject, key, project, *statuses],
        order_by="memories.rowid",
    )


def in_conflict(db: Conn, conflict_id: str, status: str) -> list[Memory]:
    """The memories of one conflict that are in ``status``, oldest first."""
    return memories_where(
        db, "conflict_id = ? AND status = ?", [conflict_id, status], order_by="memories.rowid"
    )


def unstamped_active(db: Conn) -> list[tuple[str, str, str, str]]:
    """(id, text, category, source) of active memories without a checksum, oldest first."""
    rows = raw(db).execute(
        "SELECT id, text, category, source FROM memories "
        "WHERE checksum IS NULL AND status = 'active' ORDER BY rowid"
    )
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def created_times(db: Conn) -> list[str]:
    """When each memory was created, as stored."""
    return [r[0] for r in raw(db).execute("SELECT created_at FROM memories")]


def ids_matching(db: Conn, item_id: str, prefix_limit: int) -> list[str]:
    """``[item_id]`` when a memory has exactly that id, else up to ``prefix_limit`` ids
    of memories starting with it."""
    return id_matches(db, "memories", item_id, prefix_limit)


# --- Vectors: derived data, written without operation rows ----------------------------


def texts_to_embed(db: Conn, model_id: str, *, force: bool = False) -> list[tuple[int, str]]:
    """(rowid, text) of the memories lacking a vector from ``model_id`` (every memory
    when ``force``), in rowid order."""
    if force:
        rows = raw(db).execute("SELECT rowid, text FROM memories ORDER BY rowid")
    else:
        rows = raw(db).execute(
            "SELECT rowid, text FROM memories WHERE embedding IS NULL "
            "OR embedding_model IS NOT ? ORDER BY rowid",
            [model_id],
        )
    return [(int(r[0]), r[1]) for r in rows]


def set_embeddings(db: Conn, model_id: str, vectors: Sequence[tuple[int, bytes]]) -> None:
    """Store each (rowid, vector BLOB) from ``model_id``, in one transaction. The text did
    not change, so no operation row is written."""
    with transaction(db) as conn:
        conn.executemany(
            "UPDATE memories SET embedding = ?, embedding_model = ? WHERE rowid = ?",
            [(blob, model_id, rowid) for rowid, blob in vectors],
        )


def team_count(db: Conn, server: str) -> int:
    """Local rows mirrored from the team server at ``server``."""
    row = raw(db).execute("SELECT count(*) FROM memories WHERE team_server = ?", [server])
    return int(row.fetchone()[0])


# --- Conversation order (migration m100) ----------------------------------------------


def successor_rowids(db: Conn, places: Sequence[tuple[str, str, int]]) -> list[int]:
    """Rowids of the memories right after each (project, thread, position): at
    position + 1 of the same thread of the same project ('' for a global memory). One
    indexed join (idx_memories_thread_place, migration m101) per chunk."""
    found: list[int] = []
    wanted = list(dict.fromkeys(places))
    step = IN_CHUNK // 3  # three bound parameters per place
    for start in range(0, len(wanted), step):
        chunk = wanted[start : start + step]
        values = ", ".join("(?, ?, ?)" for _ in chunk)
        args = [v for project, thread, position in chunk for v in (project, thread, position + 1)]
        rows = raw(db).execute(
            f"WITH wanted(project, thread, position) AS (VALUES {values}) "
            "SELECT memories.rowid FROM wanted JOIN memories "
            "ON coalesce(memories.project, '') = wanted.project "
            "AND memories.thread = wanted.thread AND memories.position = wanted.position",
            args,
        )
        found += [int(r[0]) for r in rows]
    return found


def thread_end(db: Conn, project: str | None, thread: str) -> int | None:
    """The last position taken in ``thread`` of ``project`` (None: global memories), or
    None for a thread with no memory yet."""
    row = raw(db).execute(
        "SELECT max(position) FROM memories WHERE coalesce(project, '') = ? AND thread = ?",
        [project or "", thread],
    ).fetchone()
    return None if row[0] is None else int(row[0])


def at_place(db: Conn, project: str | None, thread: str, position: int) -> Memory | None:
    """The memory (any status) at ``position`` of ``thread`` of ``project``, if one is."""
    found = memories_where(
        db,
        "coalesce(project, '') = ? AND thread = ? AND position = ?",
        [project or "", thread, position],
        limit=1,
    )
    return found[0] if found else None
