"""recall: candidates from FTS5 and vectors, fused similarity, the blend, explain.

This is the only implementation of recall; the CLI, hooks, engine, dashboard and
MCP server all call ``recall``. Its vector side (what to embed, the index's nearest
memories) is ``retrieval/vector_search``, loaded only when an embedder is given;
``Scope`` and ``Term`` are defined in ``retrieval/query`` and re-exported here.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from memory_layer.errors import InvalidInput
from memory_layer.models import Memory, check_category, utcnow
from memory_layer.retrieval import threads
from memory_layer.retrieval.answerable import Evidence, gather
from memory_layer.retrieval.query import (
    Query,
    QueryTerm,
    Scope,
    Term,
    as_query,
    within_project,
)
from memory_layer.retrieval.scoring import EXPLORE_REACH, Scored, blend, clamp, fuse, rank_in_bands
from memory_layer.storage import fts
from memory_layer.storage.conn import Conn, db_path
from memory_layer.storage.records import memories_by_rowid
from memory_layer.storage.textindex import has_cjk
from memory_layer.storage.usage import times_shown_first

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.retrieval.vector_search import SHARE_MIN_SCOPE as SHARE_MIN_SCOPE
    from memory_layer.retrieval.vector_search import SHARE_SAMPLE as SHARE_SAMPLE
    from memory_layer.retrieval.vector_search import ScopeSample as ScopeSample
    from memory_layer.retrieval.vector_search import VectorEvidence as VectorEvidence
    from memory_layer.retrieval.vector_search import _sample_cache as _sample_cache
    from memory_layer.retrieval.vector_search import _scope_sample as _scope_sample
    from memory_layer.retrieval.vector_search import vector_query as vector_query

# Cosine values of MiniLM for unrelated texts sit around 0.0–0.15 and for a good
# paraphrase around 0.5–0.8; rescale so "unrelated" maps near 0 and "same meaning" near 1.
COSINE_FLOOR = 0.15
COSINE_CEIL = 0.75


# How many of the best results are looked at for a language the verifier was not
# trained on (answerable.py).
LANGUAGE_CHECK = 3


def vector_similarity(cosine: float) -> float:
    return clamp((cosine - COSINE_FLOOR) / (COSINE_CEIL - COSINE_FLOOR))


# term -> (document count when measured, document frequency). IDF moves slowly, so a
# warm process re-measures a term only after the collection grows or shrinks by 5%.
_df_cache: dict[tuple[str, str], tuple[int, int]] = {}


def _document_frequency(db: Conn, path: str, term: QueryTerm, total: int) -> int:
    key = (path, term.text)
    cached = _df_cache.get(key)
    if cached is not None and abs(cached[0] - total) <= 0.05 * max(total, 1):
        return cached[1]
    df = fts.document_frequency(db, term.phrase)
    if len(_df_cache) > 50_000:
        _df_cache.clear()
    _df_cache[key] = (total, df)
    return df


def query_term_weights(db: Conn, query: str | Query) -> list[Term]:
    """Each query term with its pattern (the stem rule, memory_layer.text) and its IDF."""
    path = db_path(db)
    total = fts.collection_size(db)
    terms: list[Term] = []
    for term in as_query(query).terms:
        df = _document_frequency(db, path, term, total)
        idf = math.log((total - df + 0.5) / (df + 0.5) + 1.0)
        share = df / total if total else 0.0
        terms.append(Term(term.text, term.pattern, idf, share, term.stem, term.phrase))
    return terms


def coverage(terms: list[Term], text: str) -> float:
    """IDF-weighted share of the query's terms present in the text, 0..1: rare terms
    (identifiers, error codes) count for more than common ones."""
    total = sum(t.idf for t in terms)
    if total <= 0:
        return 0.0
    lowered = text.lower()
    return sum(t.idf for t in terms if t.pattern.search(lowered)) / total


# Terms in more than this share of memories are left out of the MATCH when rarer terms
# exist: their IDF adds almost nothing to BM25, but OR-ing them makes FTS5 score most of
# the table (49 ms instead of a few at 100k memories). Coverage still counts them.
COMMON_TERM_SHARE = 0.05


# Above this many rows matching the OR of the chosen terms, BM25-scoring them all costs tens
# of milliseconds (25k rows: ~40 ms at 100k memories). Memories holding every term are then
# fetched first, and the OR runs only when they are too few to fill the candidate pool.
OR_ROWS_BUDGET = 5000


def keyword_candidates(
    db: Conn, query: str | Query, scope: Scope, limit: int, terms: list[Term] | None = None
) -> dict[int, float]:
    """rowid -> BM25 relevance (positive, larger is better) for the query's terms
    (``terms``: query_term_weights of the query, when the caller has them already)."""
    if terms is None:
        terms = query_term_weights(db, query)
    total = fts.collection_size(db)
    present = [t for t in terms if t.share > 0]  # a term no memory contains matches nothing
    rare = [t for t in present if t.share <= COMMON_TERM_SHARE]
    chosen = rare if rare and len(present) > len(rare) and total >= 2000 else present
    parts = [t.phrase for t in chosen]
    if not parts:
        return {}
    filters = scope.filters()
    if len(parts) > 1 and sum(t.share for t in chosen) * total > OR_ROWS_BUDGET:
        every_term = fts.bm25_matches(db, " AND ".join(parts), limit, **filters)
        if len(every_term) >= limit:
            return every_term
    return fts.bm25_matches(db, " OR ".join(parts), limit, **filters)


def _searchable(memory: Memory) -> str:
    """The text keyword evidence is judged on: as indexed (textindex.fts_document)."""
    parts = (memory.extra.get("subject"), memory.extra.get("fact_key"), memory.text)
    return " ".join(str(p) for p in parts if p)


def recall(
    db: Conn,
    query: str | Query,
    *,
    scope: Scope,
    config: dict[str, Any],
    limit: int = 8,
    embedder: Any = None,
    now: datetime | None = None,
    visible: Callable[[Memory], bool] | None = None,
    min_answer: float | None = None,
) -> list[Scored]:
    """Rank memories in ``scope`` for ``query``. ``embedder=None`` means keyword-only.

    A string is parsed here (retrieval/query.parse_query); a caller that needs the
    parsed query too (the hook's relevance floor) parses it once and passes the Query.
    Nothing is returned when the verifier (retrieval/answerable.py) gives the store
    less than ``min_answer`` (default ``retrieval.min_answer``) probability of
    answering; each result's explain carries that probability as ``answer``.
    """
    threshold = float(config["retrieval"]["min_answer"] if min_answer is None else min_answer)
    ranked, evidence = rank_with_evidence(
        db, query, scope=scope, config=config, limit=limit, embedder=embedder, now=now,
        visible=visible,
    )
    # Nothing matches: the verifier's decision on the evidence, never the blended score.
    answer = evidence.probability()
    if answer < threshold:
        return []
    for item in ranked[:limit]:
        item.explain["answer"] = round(answer, 4)
    return ranked[:limit]


def rank_with_evidence(
    db: Conn,
    query: str | Query,
    *,
    scope: Scope,
    config: dict[str, Any],
    limit: int = 8,
    embedder: Any = None,
    now: datetime | None = None,
    visible: Callable[[Memory], bool] | None = None,
) -> tuple[list[Scored], Evidence]:
    """Every candidate ranked, and the evidence the verifier judges (answerable.py)."""
    query = within_project(as_query(query), scope.single_project())
    _check_request(query, limit, scope)
    now = now or utcnow()
    settings = config["retrieval"]
    pool = max(int(settings["candidates"]), limit * 3)
    terms, keyword = _keyword_evidence(db, query, scope, pool)
    vectors = None  # keyword-only
    if embedder is not None:
        from memory_layer.retrieval.vector_search import vector_evidence

        vectors = vector_evidence(db, query, terms, scope, pool, embedder, settings, keyword)
    scored = _score_candidates(
        db, query, terms, keyword, vectors, scope=scope, config=config, now=now,
        visible=visible, limit=limit,
    )
    outcomes = config.get("outcomes") or {}
    explore = float(outcomes.get("explore", 0.0))
    ranked = _rank_strong_first(
        scored,
        float(settings["relative_floor"]),
        float(settings["relevance_band"]),
        Exploration(
            explore,
            _shown_first(db, scored) if explore > 0 else {},
            float(outcomes.get("floor", -0.5)),
        ),
    )
    # A reply never comes before the turn it answers (it got its relevance from it).
    ranked = threads.after_predecessors(ranked)
    spread = vectors.scope if vectors is not None else None
    weights = [(t.idf, t.share) for t in terms]
    # The verifier was trained on English: a CJK query, or CJK memories at the top
    # (an English question about Chinese notes), is judged on plain evidence instead.
    learned = not has_cjk(query.text) and not any(
        has_cjk(item.memory.text) for item in ranked[:LANGUAGE_CHECK]
    )
    return ranked, gather(ranked, weights, spread, fts.collection_size(db), learned)


def _check_request(query: Query, limit: int, scope: Scope) -> None:
    if not query.text:
        raise InvalidInput("The query is empty. Give some words to search for.")
    if limit < 1:
        raise InvalidInput("--limit must be at least 1.")
    if scope.category:
        check_category(scope.category)


def _keyword_evidence(
    db: Conn, query: Query, scope: Scope, pool: int
) -> tuple[list[Term], dict[int, float]]:
    """The query's weighted terms and its BM25 candidates (rowid -> relevance)."""
    try:
        terms = query_term_weights(db, query)
        return terms, keyword_candidates(db, query, scope, pool, terms)
    except sqlite3.OperationalError as exc:  # FTS5 refusing the MATCH expression
        raise InvalidInput(f"Cannot search for {query.text!r}: {exc}") from None


def _score_candidates(
    db: Conn,
    query: Query,
    terms: list[Term],
    keyword: dict[int, float],
    vectors: VectorEvidence | None,
    *,
    scope: Scope,
    config: dict[str, Any],
    now: datetime,
    visible: Callable[[Memory], bool] | None,
    limit: int,
) -> list[Scored]:
    """Every candidate in scope and visible, with its fused similarity (a turn of a
    conversation may inherit part of its predecessor's: retrieval/threads.py) blended
    with the memory's own signals (scoring.blend) and an explain dict of the evidence."""
    settings = config["retrieval"]
    cosines = vectors.cosines if vectors is not None else {}
    rowids = list(dict.fromkeys([*keyword, *cosines]))
    memories = memories_by_rowid(db, rowids)
    best_bm25 = max(keyword.values(), default=0.0)
    covered = {
        rowid: coverage(terms, _searchable(memories[rowid]))
        for rowid in keyword
        if rowid in memories and best_bm25 > 0
    }

    def judge(rowids: Iterable[int]) -> None:
        for rowid in rowids:
            memory = memories[rowid]
            if scope.admits(memory) and (visible is None or visible(memory)):
                found[rowid] = _similarity(
                    rowid, memory, query, keyword, best_bm25, covered, vectors, settings
                )

    found: dict[int, tuple[float, dict[str, Any]]] = {}
    judge(list(memories))
    share = float(settings.get("thread_share", 0.0))
    own = {r: sim for r, (sim, _) in found.items()}
    if share > 0:
        # Only a turn that can lend a successor a place among the ``limit`` best has its
        # next turn fetched: within a relevance band of the limit-th similarity, or within
        # exploration's reach of it (an untried reply may be put first from that far).
        best = sorted(own.values(), reverse=True)
        band = float(settings["relevance_band"])
        explores = float((config.get("outcomes") or {}).get("explore", 0.0)) > 0
        reach = max(band, EXPLORE_REACH) if explores else band
        bar = (best[limit - 1] if len(best) >= limit else 0.0) - reach
        lenders = [r for r, sim in own.items() if share * sim >= bar]
        more = threads.add_successors(db, memories, lenders)
        if more and vectors is not None and vectors.index is not None:
            vectors.cosines.update(vectors.index.cosine(vectors.query_vector, more))
        judge(more)
        own.update({r: found[r][0] for r in more if r in found})
    lent = threads.inherit(memories, own, share)
    min_similarity = float(settings["min_similarity"])
    scored: list[Scored] = []
    for rowid, (similarity, explain) in found.items():
        if rowid in lent:
            similarity = lent[rowid].similarity
            explain["thread"] = lent[rowid].explain()
        if similarity < min_similarity:
            continue
        scored.append(
            blend(
                memories[rowid],
                similarity,
                config=config,
                now=now,
                boosts_for_query=query.boosts,
                explain=explain,
            )
        )
    return scored


def _similarity(
    rowid: int,
    memory: Memory,
    query: Query,
    keyword: dict[int, float],
    best_bm25: float,
    covered: dict[int, float],
    vectors: VectorEvidence | None,
    settings: dict[str, Any],
) -> tuple[float, dict[str, Any]]:
    """One candidate's fused similarity and the explain dict of its evidence."""
    cosines = vectors.cosines if vectors is not None else {}
    # BM25 relative to the best hit says which memory matches best; coverage says
    # whether the match is strong at all. Without it, the top keyword hit of a
    # paraphrase sharing one word would score 1.0 and drown the vector evidence.
    kw = cov = 0.0
    if rowid in covered:
        cov = covered[rowid]
        kw = (keyword[rowid] / best_bm25) * cov
    # Memories written while keyword-only have no vector yet: judge them on keywords.
    has_vector = (
        vectors is not None and rowid in cosines and memory.embedding_model == vectors.model_id
    )
    vec = vector_similarity(cosines[rowid]) if has_vector else None
    # Next to vector evidence, partial keyword matches count quadratically less
    # (measured: linear let one shared word outrank better paraphrase hits).
    keyword_evidence = kw * cov if vec is not None else kw
    similarity = fuse(
        keyword_evidence,
        vec,
        float(settings["keyword_weight"]),
        float(settings["vector_weight"]),
    )
    explain = {
        "keyword": round(kw, 6),
        "coverage": round(cov, 6),
        "bm25": round(keyword.get(rowid, 0.0), 6),
        "vector": None if vec is None else round(vec, 6),
        "cosine": None if not has_vector else round(cosines[rowid], 6),
        "mode": "keyword-only" if vectors is None else "hybrid",
        "vector_query_left_out": vectors.left_out if vectors is not None else [],
        # One copy per recall: explain dicts go back to callers, the Query may be reused.
        "intents": dict(query.intents),
    }
    return similarity, explain


def _shown_first(db: Conn, scored: list[Scored]) -> dict[str, int]:
    """How often the candidates that have a record were shown first (exploration only
    weighs those against an untried rival; with no record in sight it never runs)."""
    if not any(s.memory.success_count or s.memory.failure_count for s in scored):
        return {}
    return times_shown_first(db, [s.memory.id for s in scored])


@dataclass(frozen=True)
class Exploration:
    """What exploration among rivals needs (``scoring.rank_in_bands``)."""

    weight: float = 0.0
    shown_first: dict[str, int] = field(default_factory=dict)
    floor: float = -0.5


def _rank_strong_first(
    scored: list[Scored],
    relative_floor: float,
    band: float,
    explore: Exploration | None = None,
) -> list[Scored]:
    """Ranked in relevance bands (``scoring.rank_in_bands``), memories below
    ``relative_floor`` of the best similarity after the others.

    Outcome, recency, frequency and confidence weigh 0.65 together, so without this a
    proven memory that merely shares a stem with the query outranks the one that answers
    it."""
    best_similarity = max((s.scores["similarity"] for s in scored), default=0.0)
    floor = relative_floor * best_similarity
    strong = [s for s in scored if s.scores["similarity"] >= floor]
    weak = [s for s in scored if s.scores["similarity"] < floor]
    for item in weak:
        item.explain["below_relative_floor"] = round(floor, 6)
    how = explore or Exploration()
    return [
        *rank_in_bands(strong, band, how.weight, how.shown_first, how.floor),
        *rank_in_bands(weak, band, how.weight, how.shown_first, how.floor),
    ]


# The vector side's names, for callers that import them from here. Looked up on first
# use (PEP 562), so that importing this module never loads the vector side: the hooks
# recall keyword-only, and this module is on their path.
_VECTOR_SIDE = frozenset(
    {
        "SHARE_MIN_SCOPE",
        "SHARE_SAMPLE",
        "ScopeSample",
        "VectorEvidence",
        "_sample_cache",
        "_scope_sample",
        "vector_query",
    }
)


def __getattr__(name: str) -> object:
    if name in _VECTOR_SIDE:
        from memory_layer.retrieval import vector_search

        return getattr(vector_search, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
