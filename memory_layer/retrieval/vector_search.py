"""The vector side of recall: what to embed for a query, and what the index finds.

Separate from ``retrieval/search`` because only a recall with an embedder needs it:
the hooks recall keyword-only in their own process when no engine runs, and this
module (with the scope sample it keeps per store) stays out of their import path.
``search.rank_with_evidence`` imports it when an embedder is given; ``search``
re-exports its public names for callers that import them from there.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_layer.retrieval.query import Query, Scope, Term, as_query
from memory_layer.storage import fts
from memory_layer.storage.conn import Conn, db_path
from memory_layer.text import STEM_WORDS

if TYPE_CHECKING:
    from memory_layer.retrieval.vectors import ScopeCosines

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


def _scope_sample(db: Conn, scope: Scope) -> ScopeSample:
    """Up to SHARE_SAMPLE memories in scope (``fts.sample_texts``: always the same ones
    for the same data). A warm process reuses it until the collection grows or shrinks
    by 5%."""
    key = (db_path(db), repr(scope))
    total = fts.collection_size(db)
    cached = _sample_cache.get(key)
    if cached is not None and abs(cached[0] - total) <= 0.05 * max(total, 1):
        return cached[1]
    rows = fts.sample_texts(db, SHARE_SAMPLE, **scope.filters())
    holders: dict[str, set[int]] = {}
    for i, text in enumerate(rows):
        for word in set(STEM_WORDS.findall(text.lower())):
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
    sample = _scope_sample(db, scope)
    if sample.size < SHARE_MIN_SCOPE:
        return query.text, []
    limit = common_share * sample.size
    common = {t.text.lower() for t in words if sample.count(t.stem) > limit}
    if not common or len(common) == len(terms):
        return query.text, []
    return query.without(common), sorted(common)


@dataclass(frozen=True)
class VectorEvidence:
    """What the embedding side of one recall found."""

    cosines: dict[int, float]  # rowid -> cosine with the embedded query
    model_id: str  # the embedder's: a memory's vector counts only if it is this model's
    left_out: list[str]  # words left out of the embedded query (vector_query)
    scope: ScopeCosines  # the query's cosines over every memory searched
    # What later cosines are measured with (the next turns of candidates, threads.py).
    query_vector: Any = None
    index: Any = None


def vector_evidence(
    db: Conn,
    query: Query,
    terms: list[Term],
    scope: Scope,
    pool: int,
    embedder: Any,
    settings: dict[str, Any],
    keyword: dict[int, float],
) -> VectorEvidence:
    """The ``pool`` nearest memories in scope, plus the cosine of every keyword candidate
    the nearest left out (a memory may match on both counts, ranked far apart)."""
    from memory_layer.retrieval.vectors import vector_index

    index = vector_index(db, embedder.model_id, getattr(embedder, "dim", None))
    embedded, dropped = vector_query(
        db, query, terms, scope, float(settings["vector_common_share"])
    )
    qvec = embedder.embed([embedded])[0]
    projects = list(scope.projects) if scope.projects is not None else None
    hits, spread = index.search_scope(
        qvec, projects=projects, limit=pool, active_only=scope.statuses == ("active",)
    )
    cosines = dict(hits)
    missing = [r for r in keyword if r not in cosines]
    cosines.update(index.cosine(qvec, missing))
    return VectorEvidence(cosines, embedder.model_id, dropped, spread, qvec, index)
