"""Backfill embeddings for memories stored while the model was unavailable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from memory_layer.embed import to_blob
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.records import transaction

BATCH = 64


def backfill(
    db: Conn,
    embedder: Any,
    *,
    force: bool = False,
    progress: Callable[[Iterable[Any]], Iterator[Any]] = iter,
) -> int:
    """Embed memories lacking a vector from this model. Vectors are derived data, so
    this writes no operations-log rows (the text did not change)."""
    conn = raw(db)
    if force:
        rows = conn.execute("SELECT rowid, text FROM memories ORDER BY rowid").fetchall()
    else:
        rows = conn.execute(
            "SELECT rowid, text FROM memories WHERE embedding IS NULL "
            "OR embedding_model IS NOT ? ORDER BY rowid",
            [embedder.model_id],
        ).fetchall()
    done = 0
    for start in progress(range(0, len(rows), BATCH)):
        chunk = rows[start : start + BATCH]
        vectors = embedder.embed([text for _, text in chunk])
        with transaction(conn):
            for (rowid, _), vector in zip(chunk, vectors, strict=True):
                conn.execute(
                    "UPDATE memories SET embedding = ?, embedding_model = ? WHERE rowid = ?",
                    [to_blob(vector), embedder.model_id, rowid],
                )
        done += len(chunk)
    return done
