"""The relevance floor: "silent when nothing fits" (docs/hooks.md).

Recall always ranks something first, even for "thanks!". A door that speaks unasked
(the UserPromptSubmit hook today) shows only the results with evidence that they are
about the query, and nothing when none has. The thresholds are the ``hooks.min_*``
settings, measured with benchmarks/hooks_floor.py.
"""

from __future__ import annotations

from memory_layer.retrieval.query import Query

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Sequence
    from typing import Any

    from memory_layer.retrieval.scoring import Scored

# A long prompt's first words are enough to tell whether a memory shares several of
# them; testing hundreds of patterns against every result would not change the answer.
MATCHED_TERMS_LIMIT = 64


def matched_terms(query: Query, text: str) -> int:
    """Distinct query terms in ``text``, each found by its stem (memory_layer.text)."""
    lowered = text.lower()
    return sum(1 for term in query.terms[:MATCHED_TERMS_LIMIT] if term.pattern.search(lowered))


def relevant(item: Scored, query: Query, config: dict[str, Any], best_bm25: float = 0.0) -> bool:
    """Evidence that this recalled memory is about the query.

    With vectors, the cosine to the query must reach ``hooks.min_cosine``: it is an
    absolute measure, unlike BM25, which is relative to the best hit and gives the top
    match of "thanks!" full marks. Keyword-only, the memory must contain at least
    ``hooks.min_terms`` distinct query words and reach keyword similarity
    ``hooks.min_keyword``, or contain two words more than that. Either way the blended
    score must reach ``hooks.min_score``.
    """
    settings = config["hooks"]
    if item.score < float(settings["min_score"]):
        return False
    explain = item.explain
    cosine = explain.get("cosine")
    if cosine is not None and cosine >= float(settings["min_cosine"]):
        return True
    keyword = float(explain.get("keyword") or 0.0)
    if best_bm25 > 0 and "coverage" in explain and "bm25" in explain:
        # Relative to the best hit the agent may see: recall normalises by the best hit
        # of all, and when that one is withheld every other match would look weak.
        keyword = float(explain["bm25"]) / best_bm25 * float(explain["coverage"])
    terms = matched_terms(query, item.memory.text)
    min_terms = int(settings["min_terms"])
    if terms < min_terms:
        return False
    # With a vector available, keywords alone need more words in common: two common
    # words ("test", "file") shared with an unrelated memory are not enough.
    if cosine is not None:
        return terms > min_terms and keyword >= float(settings["min_keyword"])
    # Many distinct query words in one memory is evidence even when a long query
    # dilutes the keyword similarity (coverage is a share of the query's words).
    return keyword >= float(settings["min_keyword"]) or terms >= min_terms + 2


def above_floor(
    results: Sequence[Scored],
    query: Query,
    config: dict[str, Any],
    *,
    skip: Collection[str] = (),
) -> list[Scored]:
    """The results that pass ``relevant``, in order, judged against the best keyword
    hit among ``results`` (the ones this door may show); ids in ``skip`` (already
    shown, say) are left out before the floor is tested."""
    best_bm25 = max((float(item.explain.get("bm25") or 0.0) for item in results), default=0.0)
    return [
        item
        for item in results
        if item.memory.id not in skip and relevant(item, query, config, best_bm25)
    ]
