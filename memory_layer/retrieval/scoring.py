"""The five-signal blend. Pure Python (no numpy) so the hook fallback path stays light.

    final = (w_sim·similarity + w_out·outcome + w_rec·recency + w_freq·frequency
             + w_conf·confidence) × category_boost

Every term lies in 0..1:
- similarity: fused keyword (BM25) and vector (cosine) evidence, see ``fuse``.
- outcome = (outcome_score + 1) / 2, so a new memory (score 0) sits at 0.5.
- recency = 0.5 ** (age_days / half_life_days), where age runs from the memory's
  creation or the last time it was *proven useful* (a credited task success, or the
  user re-stating it). Being retrieved never refreshes it.
- frequency = min(1, ln(1 + use_count) / ln(1 + saturation_uses)). use_count counts
  uses (reinforcements and credited outcomes), not mere retrievals.
- confidence: set at capture (user-stated 0.8–1.0, extracted lower), clamped to 0..1.
- category_boost: boosts[category] when the query's intent names the category, else 1.

With no query (the SessionStart block), ``quality`` is the same blend without
similarity: the other four weights rescaled to sum to 1, times
``hooks.category_weights[category]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from memory_layer.models import Memory, parse_time

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

SIGNALS = ("similarity", "outcome", "recency", "frequency", "confidence")


@dataclass(frozen=True)
class Scored:
    memory: Memory
    score: float
    scores: dict[str, float]
    explain: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = self.memory.to_dict()
        data["score"] = round(self.score, 6)
        data["scores"] = {k: round(v, 6) for k, v in self.scores.items()}
        data["explain"] = self.explain
        return data


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def outcome_term(score: float) -> float:
    return clamp((score + 1.0) / 2.0)


def recency_term(memory: Memory, now: datetime, half_life_days: float) -> tuple[float, float]:
    """(recency, age in days) measured from creation or the last proof of usefulness."""
    anchor = parse_time(memory.created_at)
    if memory.proven_at:
        anchor = max(anchor, parse_time(memory.proven_at))
    age_days = max(0.0, (now - anchor).total_seconds() / 86400.0)
    return 0.5 ** (age_days / half_life_days), age_days


def frequency_term(use_count: int, saturation_uses: int) -> float:
    if use_count <= 0:
        return 0.0
    return clamp(math.log1p(use_count) / math.log1p(max(1, saturation_uses)))


def fuse(
    keyword: float | None,
    vector: float | None,
    keyword_weight: float = 1.0,
    vector_weight: float = 1.0,
) -> float:
    """Similarity from keyword evidence (0..1: BM25 relative to the best hit, times the
    IDF-weighted share of query terms present, squared) and vector evidence (rescaled
    cosine, 0..1), combined as a noisy-OR: 1 − (1 − wk·keyword)(1 − wv·vector).

    Either kind of evidence alone can carry a result: a paraphrase sharing no words
    scores exactly as it would on vectors alone, and an exact identifier scores fully
    on keywords. Rank fusion (RRF) was rejected: it lets the keyword engine's first hit
    win by position even when it is weak, and lost recall to BM25 alone on LoCoMo. A
    weighted sum was measured too and lost to vector-only on paraphrases (it halves the
    similarity spread, so category boosts swamp it). See benchmarks/RESULTS.md.
    """
    kw = clamp((keyword or 0.0) * keyword_weight)
    if vector is None:
        return kw
    return clamp(1.0 - (1.0 - kw) * (1.0 - clamp(vector * vector_weight)))


def memory_signals(
    memory: Memory, config: dict[str, Any], now: datetime
) -> tuple[dict[str, float], float]:
    """What a memory brings to the blend whatever the query: outcome, recency,
    frequency and confidence (in SIGNALS order), and its age in days."""
    recency, age_days = recency_term(memory, now, float(config["recency"]["half_life_days"]))
    signals = {
        "outcome": outcome_term(memory.outcome_score),
        "recency": recency,
        "frequency": frequency_term(memory.use_count, int(config["frequency"]["saturation_uses"])),
        "confidence": clamp(memory.confidence),
    }
    return signals, age_days


def _weighted_sum(weights: dict[str, Any], signals: dict[str, float]) -> float:
    return sum(float(weights[name]) * value for name, value in signals.items())


def blend(
    memory: Memory,
    similarity: float,
    *,
    config: dict[str, Any],
    now: datetime,
    boosts_for_query: dict[str, str],
    explain: dict[str, Any] | None = None,
) -> Scored:
    weights = config["weights"]
    own, age_days = memory_signals(memory, config, now)
    terms = {"similarity": clamp(similarity), **own}
    base = _weighted_sum(weights, terms)
    reason = boosts_for_query.get(memory.category)
    boost = float(config["boosts"].get(memory.category, 1.0)) if reason else 1.0
    details = dict(explain or {})
    details.update(
        {
            "age_days": round(age_days, 3),
            "boost_reason": reason or "no intent in the query matches this category",
            "weighted": {name: round(float(weights[name]) * terms[name], 6) for name in SIGNALS},
            "base": round(base, 6),
        }
    )
    return Scored(memory, base * boost, {**terms, "boost": boost}, details)


def quality(memory: Memory, config: dict[str, Any], now: datetime) -> float:
    """The blend without similarity: what makes a memory worth knowing with no query
    (the SessionStart block). The four remaining weights are rescaled to sum to 1, and
    ``hooks.category_weights`` stands in for the intent boosts a query would bring."""
    weights = config["weights"]
    own, _age_days = memory_signals(memory, config, now)
    total = sum(float(weights[name]) for name in own) or 1.0
    base = _weighted_sum(weights, own) / total
    return base * float(config["hooks"]["category_weights"].get(memory.category, 1.0))


def rank(items: list[Scored]) -> list[Scored]:
    """Best first; ties broken by similarity, then id, so order is deterministic."""
    return sorted(items, key=lambda s: (-round(s.score, 12), -s.scores["similarity"], s.memory.id))


def tries(memory: Memory) -> int:
    """How often outcome learning has judged this memory acted on."""
    return max(0, memory.success_count) + max(0, memory.failure_count)


# How far below a band's best similarity exploration looks for rivals of its leader: a
# newcomer worded like an established fix may match the question a little less well
# (0.68 against 0.83 for two ssh fixes in benchmarks/learning.py).
EXPLORE_REACH = 0.2


def mean_rate(memory: Memory) -> float:
    """Its success rate as its credited record says, with a uniform prior: (w+1)/(n+2)."""
    return (max(0, memory.success_count) + 1) / (tries(memory) + 2)


def optimistic_rate(memory: Memory, band_tries: int, weight: float, shown_first: int = 0) -> float:
    """The UCB1 upper estimate of its success rate among rivals tried ``band_tries``
    times: ``mean_rate + weight × sqrt(ln(1 + band_tries) / (1 + n))``, where n is its
    tries or, if more, the times it was shown first: a memory shown first and never
    acted on (not what the agent needed) stops being explored after a few showings."""
    n = max(tries(memory), shown_first)
    return mean_rate(memory) + weight * math.sqrt(math.log1p(band_tries) / (1 + n))


def rank_in_bands(
    items: list[Scored],
    band: float,
    explore: float = 0.0,
    shown_first: Mapping[str, int] | None = None,
    floor: float = -0.5,
) -> list[Scored]:
    """Relevance first, priority second: results whose similarity lies within ``band``
    of the best remaining similarity form a band and are ordered among themselves by
    the blended score (outcome, recency, frequency, confidence and the intent boost);
    the next band starts at the best similarity left below it.

    So boosts and priors reorder results of comparable relevance, and never lift a
    weak match over a strong one: the blend multiplies the whole score by the boost and
    gives every memory ~0.35 with no match at all, which put an exact answer (similarity
    1.0) fifth behind a ×1.4 gotcha at 0.65. ``band`` ≥ 1 is the plain blend order.
    Each result's ``explain`` says which band it is in and where that band starts.
    With ``explore`` > 0, a rarely tried rival may go first (``_explore``);
    ``shown_first`` counts how often each memory id was already shown first; a memory
    at or below ``floor`` (``outcomes.floor``: sinking) is never explored.
    """
    if not band >= 0:  # NaN from a hand-edited config.yaml: one band per similarity
        band = 0.0
    pending = sorted(items, key=lambda s: (-s.scores["similarity"], s.memory.id))
    out: list[Scored] = []
    number = 0
    while pending:
        number += 1
        top = pending[0].scores["similarity"]
        cut = top - band
        members = rank([s for s in pending if s.scores["similarity"] >= cut])
        pending = [s for s in pending if s.scores["similarity"] < cut]
        if explore > 0:
            reach = [s for s in pending if s.scores["similarity"] >= top - EXPLORE_REACH]
            chosen = _explore(members, reach, explore, shown_first or {}, floor)
            if chosen is not None:
                pending = [s for s in pending if s is not chosen]
                members = [chosen, *(s for s in members if s is not chosen)]
        for item in members:
            item.explain["band"] = {"number": number, "from_similarity": round(top, 6)}
        out.extend(members)
    return out


def _explore(
    members: list[Scored],
    reach: list[Scored],
    explore: float,
    shown: Mapping[str, int],
    floor: float,
) -> Scored | None:
    """The rarely tried rival to put first in this band, or None: the one whose
    optimistic rate beats the band leader's record the most, among the band and the
    memories within ``EXPLORE_REACH`` of its best similarity.

    Only the top memory of a band gets acted on, so without this a better newcomer
    worded like an established fix is never tried. A leader with a strong record (5
    successes of 5: 0.86) is not displaced by an untried memory (0.5 + the bonus); a
    mediocre one (6 of 9: 0.64) is, until the newcomer's own record decides; one failure
    in its first tries (1 of 2: 0.5 + bonus) does not rule a newcomer out, three do. A
    sinking memory is never explored (only probation shows it again, flagged), so
    exploration never presents one known to fail as if it were fine.
    """
    if not members:
        return None
    leader, rivals = members[0], [*members[1:], *reach]
    band_tries = sum(tries(item.memory) for item in (leader, *rivals))
    bar = mean_rate(leader.memory)
    best, best_rate = None, bar
    for item in rivals:
        if item.memory.outcome_score <= floor:
            continue
        rate = optimistic_rate(item.memory, band_tries, explore, shown.get(item.memory.id, 0))
        if rate > best_rate + 1e-9:
            best, best_rate = item, rate
    if best is not None:
        best.explain["explore"] = {
            "optimistic_rate": round(best_rate, 4),
            "leader": leader.memory.id,
            "leader_rate": round(bar, 4),
            "tries": tries(best.memory),
            "shown_first": shown.get(best.memory.id, 0),
        }
    return best
