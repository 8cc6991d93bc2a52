"""Is anything in the store about this query? A learned verifier over the evidence.

Recall always ranks something first, so "nothing matches" has to be decided apart from
the ranking, and never on the blended score (whose priors give every memory about .35
with no match at all). The decision is a logistic regression over what the search found
(``Evidence``): how high the best cosine is and how far it stands out from the query's
cosines over the whole scope, how much of the query the best keyword hit covers, how much
of the query no memory contains at all, and whether keywords and vectors agree on the
best memory. It is trained by ``benchmarks/answerable_train.py`` on answerable and
unanswerable questions about 20 real repositories' agent instructions (plus the coding
set), evaluated on repositories held out of the training, and the coefficients it wrote
are in ``answerable_weights.py``.

Two operating points: ``retrieval.min_answer`` for what a person or agent asks for
(`recall`, MCP search), ``hooks.min_answer`` for what the prompt hook injects unasked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

from memory_layer.retrieval import answerable_weights

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from memory_layer.retrieval.scoring import Scored
    from memory_layer.retrieval.vectors import ScopeCosines

# Where the training's operating points land on the shared scale: the defaults of
# retrieval.min_answer and hooks.min_answer (memory_layer/config).
RECALL_POINT = 0.1
HOOK_POINT = 0.6
# A z-score is clipped: a scope of five memories can give a huge one by chance, and one
# outlier must not dominate a linear model. Under Z_MIN_SCOPE memories, or with cosines
# closer together than Z_MIN_STD (a scope of near-copies), the spread means nothing and
# the feature is left neutral (the training mean).
Z_CLIP = 6.0
Z_MIN_SCOPE = 10
Z_MIN_STD = 0.02
# Evidence that needs no model: every query term in one memory, or a cosine that means
# "the same thing said again" (search.COSINE_CEIL). Measured: no unanswerable question
# of the 208 in training reaches either, 23% of plain questions and every identifier do.
FULL_COVERAGE = 0.99
SAME_MEANING_COSINE = 0.75
# Where the model knows nothing, a result needs only some evidence: a query term in it,
# or a cosine of at least SOME_COSINE (search.COSINE_FLOOR, where vector evidence starts
# counting: unrelated memories average 0.07 on the calibrated scale, and correct Chinese
# <-> English top answers with use-multilingual reached 0.20-0.26). That is so in a store of under SMALL_STORE memories,
# where IDF (so coverage and the unknown share) is degenerate and one absent word
# outweighs the rest, and across languages: the model was trained on English text only,
# and a Chinese question about an English memory has no keyword evidence at all.
SMALL_STORE = 20
SOME_COSINE = 0.15
FEATURES = (
    "cosine",  # best cosine to the query among the candidates (calibrated scale)
    "cosine_z",  # the same, in standard deviations above the scope's mean cosine
    "cosine_gap",  # best minus second-best cosine
    "coverage",  # best IDF-weighted share of the query's terms found in one memory
    "top_coverage",  # the same for the memory ranked first
    "unknown",  # IDF-weighted share of the query's terms that no memory contains
    "agree",  # 1 when the best keyword hit is also the nearest vector
    "terms",  # log(1 + number of query terms)
)


@dataclass(frozen=True)
class Evidence:
    """What one recall found, as the verifier reads it. ``hybrid`` is False when no
    vectors were searched (keyword-only): the cosine features are then 0."""

    hybrid: bool
    store_size: int  # memories in the whole store, which IDF is measured over
    cosine: float
    cosine_z: float
    cosine_gap: float
    coverage: float
    top_coverage: float
    unknown: float
    agree: float
    terms: float
    # False when the query or its best results are in a CJK script (no training data).
    learned: bool = True

    def features(self) -> list[float]:
        return [float(getattr(self, name)) for name in FEATURES]

    def certain(self) -> bool:
        """Evidence strong enough to need no model (FULL_COVERAGE, SAME_MEANING_COSINE)."""
        return self.coverage >= FULL_COVERAGE or self.cosine >= SAME_MEANING_COSINE

    def probability(self) -> float:
        """The verifier's probability that the store answers the query (shared scale)."""
        if self.certain():
            return 1.0
        if self.store_size < SMALL_STORE or not self.learned:
            return 1.0 if self.coverage > 0 or self.cosine >= SOME_COSINE else 0.0
        return probability(self.features(), hybrid=self.hybrid)


def probability(features: Sequence[float], *, hybrid: bool) -> float:
    """The model's probability, mapped onto the shared scale of the two settings."""
    model = answerable_weights.HYBRID if hybrid else answerable_weights.KEYWORD
    z = model["intercept"]
    for name, value, mean, scale in zip(
        FEATURES, features, model["mean"], model["scale"], strict=True
    ):
        if not math.isnan(value):  # a neutral feature (NaN) adds nothing
            z += model["weights"][name] * (value - mean) / scale
    return _shared_scale(1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z)))), model["anchors"])


def _shared_scale(p: float, anchors: Sequence[tuple[float, float]]) -> float:
    """Piecewise-linear and monotone through (model probability, shared value) anchors.

    The hybrid and keyword-only models reach the same operating points (recall's and the
    hook's, chosen in training) at different probabilities. Mapping each one's points
    onto RECALL_POINT and HOOK_POINT lets one setting per door serve both, as the
    cosine calibration lets one ``hooks.min_cosine`` serve every embedding model.
    """
    for (x0, y0), (x1, y1) in pairwise(anchors):
        if p <= x1:
            return y0 if x1 <= x0 else y0 + (p - x0) * (y1 - y0) / (x1 - x0)
    return float(anchors[-1][1])


def unknown_share(terms: Sequence[tuple[float, float]]) -> float:
    """IDF-weighted share of the query's terms, given as (idf, share of memories
    holding it), that no stored memory contains."""
    total = sum(idf for idf, _ in terms)
    if total <= 0:
        return 1.0
    return sum(idf for idf, share in terms if share <= 0) / total


def gather(
    ranked: Sequence[Scored],
    terms: Sequence[tuple[float, float]],
    scope: ScopeCosines | None,
    store_size: int,
    learned: bool = True,
) -> Evidence:
    """The evidence of a ranked candidate list (every candidate, before the limit);
    ``terms`` are the query's (idf, share) pairs (search.Term)."""
    cosines = sorted(
        (float(c) for item in ranked if (c := item.explain.get("cosine")) is not None),
        reverse=True,
    )
    best = cosines[0] if cosines else 0.0
    z = 0.0  # keyword-only, or no memory with a vector: the cosine features are all 0
    if scope is not None and cosines:
        z = math.nan
        if scope.count >= Z_MIN_SCOPE and scope.std >= Z_MIN_STD:
            z = max(-Z_CLIP, min(Z_CLIP, (best - scope.mean) / scope.std))
    gap = best - cosines[1] if len(cosines) > 1 else best
    coverage = max((float(item.explain.get("coverage") or 0.0) for item in ranked), default=0.0)
    top_coverage = float(ranked[0].explain.get("coverage") or 0.0) if ranked else 0.0
    return Evidence(
        hybrid=scope is not None,
        store_size=store_size,
        cosine=best,
        cosine_z=z,
        cosine_gap=gap,
        coverage=coverage,
        top_coverage=top_coverage,
        unknown=unknown_share(terms),
        agree=_agree(ranked),
        terms=math.log1p(len(terms)),
        learned=learned,
    )


def _agree(ranked: Sequence[Scored]) -> float:
    """1.0 when the best BM25 hit and the nearest vector are the same memory."""
    by_bm25 = max(ranked, key=lambda s: float(s.explain.get("bm25") or 0.0), default=None)
    with_cosine = [s for s in ranked if s.explain.get("cosine") is not None]
    if by_bm25 is None or not with_cosine or not by_bm25.explain.get("bm25"):
        return 0.0
    nearest = max(with_cosine, key=lambda s: float(s.explain["cosine"]))
    return 1.0 if nearest.memory.id == by_bm25.memory.id else 0.0
