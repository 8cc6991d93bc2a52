"""The stored vectors as the in-memory vector index (``retrieval.vectors``) loads them,
and the ``memory_changes`` log it follows to stay current.

Read-only: ``storage.records`` writes the vectors (``set_embeddings``), and triggers on
``memories`` (migration m050) write the change log, one row per insert, delete or
change of a row's vector, status or project, trimmed to the last 20,000. Rows come back
as tuples; turning BLOBs into arrays is the index's work (numpy stays out of storage).
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_layer.storage.conn import Conn, raw

# (rowid, embedding BLOB or None, embedding model or None, project or None, 1 when
# active else 0): SQLite's own tuples, handed on without a copy (a full load is 100k).
VectorRow = tuple[int, bytes | None, str | None, str | None, int]

_ROW_SQL = (
    "SELECT rowid, embedding, embedding_model, project, status = 'active' AS active FROM memories"
)
# Well under SQLite's limit on bound parameters (999 in older builds).
_IN_CHUNK = 500


def vector_rows(db: Conn, model_id: str) -> list[VectorRow]:
    """Every memory holding a vector of ``model_id``, by rowid."""
    sql = _ROW_SQL + " WHERE embedding IS NOT NULL AND embedding_model = ? ORDER BY rowid"
    return raw(db).execute(sql, [model_id]).fetchall()


def vector_rows_by_rowid(db: Conn, rowids: Sequence[int]) -> dict[int, VectorRow]:
    """The rows of these memories, with or without a vector (a missing rowid: deleted)."""
    found: dict[int, VectorRow] = {}
    for start in range(0, len(rowids), _IN_CHUNK):
        chunk = list(rowids[start : start + _IN_CHUNK])
        marks = ", ".join("?" for _ in chunk)
        for row in raw(db).execute(_ROW_SQL + " WHERE rowid IN (" + marks + ")", chunk):
            found[row[0]] = row
    return found


def stored_vector_bytes(db: Conn, model_id: str) -> int:
    """The size of one stored vector of ``model_id`` in bytes, 0 when none is stored."""
    row = (
        raw(db)
        .execute(
            "SELECT length(embedding) FROM memories WHERE embedding_model = ? "
            "AND embedding IS NOT NULL LIMIT 1",
            [model_id],
        )
        .fetchone()
    )
    return int(row[0]) if row else 0


def last_change(db: Conn) -> int:
    """The id of the newest change-log row, 0 when the log is empty."""
    return int(raw(db).execute("SELECT coalesce(max(id), 0) FROM memory_changes").fetchone()[0])


def changes_since(db: Conn, after: int, limit: int) -> tuple[int | None, list[tuple[int, int]]]:
    """(the oldest id the log still holds, None when empty; up to ``limit`` (memory
    rowid, change id) rows after change ``after``, oldest first). An oldest id beyond
    ``after + 1`` means the log was trimmed past rows the caller has not seen."""
    conn = raw(db)
    oldest = conn.execute("SELECT min(id) FROM memory_changes").fetchone()[0]
    changed = conn.execute(
        "SELECT DISTINCT memory_rowid, id FROM memory_changes WHERE id > ? ORDER BY id LIMIT ?",
        [after, limit],
    ).fetchall()
    return oldest, changed
