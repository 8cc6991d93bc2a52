"""recall: candidates from FTS5 and vectors, fused similarity, the blend, explain.

This is the only implementation of recall; the CLI, hooks, engine, dashboard and
MCP server all call ``recall``.
"""

from __future__ import annotations

import bisect
import math
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memory_layer.errors import InvalidInput
from memory_layer.models import Memory, check_category, utcnow
from memory_layer.retrieval.query import Query, QueryTerm, as_query
from memory_layer.retrieval.scoring import Scored, blend, clamp, fuse, rank
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.records import memories_by_rowid
from memory_layer.text import STEM_WORDS

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


@dataclass(frozen=True)
class Term:
    """A query term (retrieval/query.QueryTerm) with what the database says about it,
    computed once per recall. Flat rather than wrapping the QueryTerm: ``coverage``
    reads ``pattern`` and ``idf`` for every term of every candidate."""

    text: str
    pattern: re.Pattern[str]
    idf: float
    share: float  # fraction of memories containing the term
    stem: str  # what ``pattern`` looks for at the start of a word
    phrase: str  # the FTS5 phrase matching the term


# term -> (document count when measured, document frequency). IDF moves slowly, so a
# warm process re-measures a term only after the collection grows or shrinks by 5%.
_df_cache: dict[tuple[str, str], tuple[int, int]] = {}


def _document_frequency(
    conn: sqlite3.Connection, path: str, term: QueryTerm, total: int
) -> int:
    key = (path, term.text)
    cached = _df_cache.get(key)
    if cached is not None and abs(cached[0] - total) <= 0.05 * max(total, 1):
        return cached[1]
    df = int(
        conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", [term.phrase]
        ).fetchone()[0]
    )
    if len(_df_cache) > 50_000:
        _df_cache.clear()
    _df_cache[key] = (total, df)
    return df


def _db_path(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA database_list").fetchone()[2])


def query_term_weights(db: Conn, query: str | Query) -> list[Term]:
    """Each query term with its pattern (the stem rule, memory_layer.text) and its IDF."""
    conn = raw(db)
    path = _db_path(conn)
    total = _collection_size(conn)
    terms: list[Term] = []
    for term in as_query(query).terms:
        df = _document_frequency(conn, path, term, total)
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


def _collection_size(db: Conn) -> int:
    return int(raw(db).execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0)


# How many of the searched memories are read to measure which query words are common
# among them, and the fewest for which such a share means anything.
SHARE_SAMPLE = 500
SHARE_MIN_SCOPE = 50


@dataclass(frozen=True)
class ScopeSample:
    """The words of up to SHARE_SAMPLE memories, sorted, each with the memories using it."""

    size: int
    words: tuple[str, ...]
    holders: tuple[frozenset[int], ...]

    def count(self, stem: str) -> int:
        """How many memories have a word starting with ``stem`` (as Term.pattern finds)."""
        found: set[int] = set()
        i = bisect.bisect_left(self.words, stem)
        while i < len(self.words) and self.words[i].startswith(stem):
            found |= self.holders[i]
            i += 1
        return len(found)


_sample_cache: dict[tuple[str, str], tuple[int, ScopeSample]] = {}


def _scope_sample(conn: sqlite3.Connection, scope: Scope) -> ScopeSample:
    """Up to SHARE_SAMPLE memories in scope: all of them in a small scope, else a fixed
    pseudo-random spread (hash of the rowid), so the same data always gives the same
    sample. A warm process reuses it until the collection grows or shrinks by 5%."""
    key = (_db_path(conn), repr(scope))
    total = _collection_size(conn)
    cached = _sample_cache.get(key)
    if cached is not None and abs(cached[0] - total) <= 0.05 * max(total, 1):
        return cached[1]
    where, args = _scope_sql(scope)
    rows = conn.execute(
        "SELECT text FROM memories WHERE rowid IN (SELECT m.rowid FROM memories m WHERE "
        + where
        + " ORDER BY (m.rowid * 2654435761) % 4294967296 LIMIT ?)",
        [*args, SHARE_SAMPLE],
    ).fetchall()
    holders: dict[str, set[int]] = {}
    for i, (text,) in enumerate(rows):
        for word in set(STEM_WORDS.findall(str(text).lower())):
            holders.setdefault(word, set()).add(i)
    words = sorted(holders)
    sample = ScopeSample(len(rows), tuple(words), tuple(frozenset(holders[w]) for w in words))
    if len(_sample_cache) > 256:
        _sample_cache.clear()
    _sample_cache[key] = (total, sample)
    return sample


def vector_query(
    db: Conn, query: str | Query, terms: list[Term], scope: Scope, common_share: float
) -> tuple[str, list[str]]:
    """The text to embed for ``query``, and the words left out of it.

    Words found in more than ``common_share`` of the searched memories say little about
    which memory is meant, but they dominate a small embedding model's vector: in a
    conversation store, a question naming a speaker ("What did Caroline paint?") ranked
    every turn of that speaker above the one turn about painting. Leaving such words out
    of the embedded text (keyword search still uses them) lifted LoCoMo R@10 from 0.545
    to 0.67 with no change on coding paraphrases (benchmarks/RESULTS.md). When every word
    is common, the query is embedded whole.
    """
    query = as_query(query)
    words = [t for t in terms if t.text.isascii()]
    if common_share >= 1.0 or not words:
        return query.text, []
    sample = _scope_sample(raw(db), scope)
    if sample.size < SHARE_MIN_SCOPE:
        return query.text, []
    limit = common_share * sample.size
    common = {t.text.lower() for t in words if sample.count(t.stem) > limit}
    if not common or len(common) == len(terms):
        return query.text, []
    return query.without(common), sorted(common)


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
    total = _collection_size(db)
    present = [t for t in terms if t.share > 0]  # a term no memory contains matches nothing
    rare = [t for t in present if t.share <= COMMON_TERM_SHARE]
    chosen = rare if rare and len(present) > len(rare) and total >= 2000 else present
    parts = [t.phrase for t in chosen]
    if not parts:
        return {}
    where, args = _scope_sql(scope)

    def search(match: str) -> dict[int, float]:
        rows = (
            raw(db)
            .execute(
                "SELECT f.rowid, -bm25(memories_fts) AS score FROM memories_fts f "
                "JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND "
                + where
                + " ORDER BY bm25(memories_fts) LIMIT ?",
                [match, *args, limit],
            )
            .fetchall()
        )
        return {int(rowid): float(score) for rowid, score in rows}

    if len(parts) > 1 and sum(t.share for t in chosen) * total > OR_ROWS_BUDGET:
        every_term = search(" AND ".join(parts))
        if len(every_term) >= limit:
            return every_term
    return search(" OR ".join(parts))


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
) -> list[Scored]:
    """Rank memories in ``scope`` for ``query``. ``embedder=None`` means keyword-only.

    A string is parsed here (retrieval/query.parse_query); a caller that needs the
    parsed query too (the hook's relevance floor) parses it once and passes the Query.
    """
    query = as_query(query)
    if not query.text:
        raise InvalidInput("The query is empty. Give some words to search for.")
    if limit < 1:
        raise InvalidInput("--limit must be at least 1.")
    if scope.category:
        check_category(scope.category)
    now = now or utcnow()
    settings = config["retrieval"]
    pool = max(int(settings["candidates"]), limit * 3)

    try:
        terms = query_term_weights(db, query)
        keyword = keyword_candidates(db, query, scope, pool, terms)
    except sqlite3.OperationalError as exc:
        raise InvalidInput(f"Cannot search for {query.text!r}: {exc}") from None
    best_bm25 = max(keyword.values(), default=0.0)

    cosines: dict[int, float] = {}
    model_id = None
    dropped: list[str] = []
    if embedder is not None:
        from memory_layer.retrieval.vectors import vector_index

        index = vector_index(db, embedder.model_id, getattr(embedder, "dim", None))
        model_id = embedder.model_id
        embedded, dropped = vector_query(
            db, query, terms, scope, float(settings["vector_common_share"])
        )
        qvec = embedder.embed([embedded])[0]
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
    # One copy per recall: explain dicts go back to callers, the Query may be reused.
    intents = dict(query.intents)
    boosts = query.boosts
    keyword_weight = float(settings["keyword_weight"])
    vector_weight = float(settings["vector_weight"])
    min_similarity = float(settings["min_similarity"])
    covered = {
        rowid: coverage(terms, _searchable(memories[rowid]))
        for rowid in keyword
        if rowid in memories and best_bm25 > 0
    }
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
        # BM25 relative to the best hit says which memory matches best; coverage says
        # whether the match is strong at all. Without it, the top keyword hit of a
        # paraphrase sharing one word would score 1.0 and drown the vector evidence.
        kw = cov = 0.0
        if rowid in covered:
            cov = covered[rowid]
            kw = (keyword[rowid] / best_bm25) * cov
        # Memories written while keyword-only have no vector yet: judge them on keywords.
        has_vector = rowid in cosines and memory.embedding_model == model_id
        vec = vector_similarity(cosines[rowid]) if has_vector else None
        # Next to vector evidence, partial keyword matches count quadratically less
        # (measured: linear let one shared word outrank better paraphrase hits).
        keyword_evidence = kw * cov if vec is not None else kw
        similarity = fuse(keyword_evidence, vec, keyword_weight, vector_weight)
        if similarity < min_similarity:
            continue
        explain = {
            "keyword": round(kw, 6),
            "coverage": round(cov, 6),
            "bm25": round(keyword.get(rowid, 0.0), 6),
            "vector": None if vec is None else round(vec, 6),
            "cosine": None if not has_vector else round(cosines[rowid], 6),
            "mode": "hybrid" if embedder is not None else "keyword-only",
            "vector_query_left_out": dropped,
            "intents": intents,
        }
        scored.append(
            blend(
                memory, similarity, config=config, now=now, boosts_for_query=boosts, explain=explain
            )
        )
    # Outcome, recency, frequency and confidence weigh 0.65 together, so without this a
    # proven memory that merely shares a stem with the query outranks the one that answers
    # it. Memories below ``relative_floor`` of the best similarity rank after the others.
    best_similarity = max((s.scores["similarity"] for s in scored), default=0.0)
    floor = float(settings["relative_floor"]) * best_similarity
    strong = [s for s in scored if s.scores["similarity"] >= floor]
    weak = [s for s in scored if s.scores["similarity"] < floor]
    for item in weak:
        item.explain["below_relative_floor"] = round(floor, 6)
    return (rank(strong) + rank(weak))[:limit]
