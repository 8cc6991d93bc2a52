"""recall: candidates from FTS5 and vectors, fused similarity, the blend, explain.

This is the only implementation of recall; the CLI, hooks, engine, dashboard and
MCP server all call ``recall``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.models import Memory, check_category, utcnow
from memory_layer.retrieval.intent import boosted_categories, detect_intents
from memory_layer.retrieval.scoring import Scored, blend, clamp, fuse, rank
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.records import memories_by_rowid
from memory_layer.storage.textindex import fts_query

# Cosine values of MiniLM for unrelated texts sit around 0.0–0.15 and for a good
# paraphrase around 0.5–0.8; rescale so "unrelated" maps near 0 and "same meaning" near 1.
COSINE_FLOOR = 0.15
COSINE_CEIL = 0.75


@dataclass(frozen=True)
class Scope:
    """Which memories a recall may return. ``projects=None`` means every project."""

    projects: tuple[str | None, ...] | None
    statuses: tuple[str, ...] = ("active",)
    category: str | None = None
    # Scenes (deploy, server_ops, coding...) the client declared: recall covers them plus
    # memories without a scene. None = no scene filter.
    scenes: tuple[str, ...] | None = None

    @classmethod
    def for_project(
        cls, project: str | None, *, include_global: bool = True, category: str | None = None
    ) -> Scope:
        projects: tuple[str | None, ...] = (project,) if project else ()
        if include_global:
            projects += (None,)
        return cls(projects=projects, category=category)


def vector_similarity(cosine: float) -> float:
    return clamp((cosine - COSINE_FLOOR) / (COSINE_CEIL - COSINE_FLOOR))


def _scope_sql(scope: Scope) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    args: list[Any] = []
    if scope.statuses:
        clauses.append("m.status IN (" + ", ".join("?" for _ in scope.statuses) + ")")
        args.extend(scope.statuses)
    if scope.projects is not None:
        named = [p for p in scope.projects if p is not None]
        parts = []
        if named:
            parts.append("m.project IN (" + ", ".join("?" for _ in named) + ")")
            args.extend(named)
        if None in scope.projects:
            parts.append("m.project IS NULL")
        clauses.append("(" + (" OR ".join(parts) or "0") + ")")
    if scope.category:
        clauses.append("m.category = ?")
        args.append(scope.category)
    if scope.scenes is not None:
        marks = ", ".join("?" for _ in scope.scenes)
        clauses.append("(m.scene IS NULL" + (f" OR m.scene IN ({marks})" if marks else "") + ")")
        args.extend(scope.scenes)
    return (" AND ".join(clauses) or "1"), args


def keyword_candidates(db: Conn, query: str, scope: Scope, limit: int) -> dict[int, float]:
    """rowid -> BM25 relevance (positive, larger is better) for the query's terms."""
    match = fts_query(query)
    if match is None:
        return {}
    where, args = _scope_sql(scope)
    rows = (
        raw(db)
        .execute(
            "SELECT f.rowid, -bm25(memories_fts) AS score FROM memories_fts f "
            "JOIN memories m ON m.rowid = f.rowid "
            "WHERE memories_fts MATCH ? AND " + where + " ORDER BY bm25(memories_fts) LIMIT ?",
            [match, *args, limit],
        )
        .fetchall()
    )
    return {int(rowid): float(score) for rowid, score in rows}


def recall(
    db: Conn,
    query: str,
    *,
    scope: Scope,
    config: dict[str, Any],
    limit: int = 8,
    embedder: Any = None,
    now: datetime | None = None,
    visible: Callable[[Memory], bool] | None = None,
) -> list[Scored]:
    """Rank memories in ``scope`` for ``query``. ``embedder=None`` means keyword-only."""
    query = (query or "").strip()
    if not query:
        raise InvalidInput("The query is empty. Give some words to search for.")
    if limit < 1:
        raise InvalidInput("--limit must be at least 1.")
    if scope.category:
        check_category(scope.category)
    now = now or utcnow()
    settings = config["retrieval"]
    pool = max(int(settings["candidates"]), limit * 3)

    try:
        keyword = keyword_candidates(db, query, scope, pool)
    except sqlite3.OperationalError as exc:
        raise InvalidInput(f"Cannot search for {query!r}: {exc}") from None
    best_bm25 = max(keyword.values(), default=0.0)

    cosines: dict[int, float] = {}
    model_id = None
    if embedder is not None:
        from memory_layer.retrieval.vectors import vector_index

        index = vector_index(db, embedder.model_id)
        model_id = embedder.model_id
        qvec = embedder.embed([query])[0]
        projects = list(scope.projects) if scope.projects is not None else None
        cosines = dict(
            index.search(
                qvec, projects=projects, limit=pool, active_only=scope.statuses == ("active",)
            )
        )
        missing = [r for r in keyword if r not in cosines]
        cosines.update(index.cosine(qvec, missing))

    rowids = list(dict.fromkeys([*keyword, *cosines]))
    memories = memories_by_rowid(db, rowids)
    intents = detect_intents(query)
    boosts = boosted_categories(intents)
    vector_weight = float(settings["vector_weight"])
    min_similarity = float(settings["min_similarity"])
    scored: list[Scored] = []
    for rowid in rowids:
        memory = memories.get(rowid)
        if memory is None or memory.status not in scope.statuses:
            continue
        if scope.category and memory.category != scope.category:
            continue
        if scope.scenes is not None and memory.extra.get("scene") not in (None, *scope.scenes):
            continue
        if visible is not None and not visible(memory):
            continue
        kw = keyword.get(rowid, 0.0) / best_bm25 if best_bm25 > 0 else 0.0
        # Memories written while keyword-only have no vector yet: judge them on keywords.
        has_vector = rowid in cosines and memory.embedding_model == model_id
        vec = vector_similarity(cosines[rowid]) if has_vector else None
        similarity = fuse(kw, vec, vector_weight) if embedder is not None else kw
        if similarity < min_similarity:
            continue
        explain = {
            "keyword": round(kw, 6),
            "bm25": round(keyword.get(rowid, 0.0), 6),
            "vector": None if vec is None else round(vec, 6),
            "cosine": None if not has_vector else round(cosines[rowid], 6),
            "mode": "hybrid" if embedder is not None else "keyword-only",
            "intents": intents,
        }
        scored.append(
            blend(
                memory, similarity, config=config, now=now, boosts_for_query=boosts, explain=explain
            )
        )
    return rank(scored)[:limit]
