"""Backfill embeddings for memories stored while the model was unavailable."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from memory_layer.embed import to_blob
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import set_embeddings, texts_to_embed

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
    rows = texts_to_embed(db, embedder.model_id, force=force)
    done = 0
    for start in progress(range(0, len(rows), BATCH)):
        chunk = rows[start : start + BATCH]
        vectors = embedder.embed([text for _, text in chunk])
        # One transaction per batch: an interrupted backfill keeps what it embedded.
        set_embeddings(
            db,
            embedder.model_id,
            [(rowid, to_blob(vector)) for (rowid, _), vector in zip(chunk, vectors, strict=True)],
        )
        done += len(chunk)
    return done
