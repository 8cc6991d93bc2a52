"""The outcome rules in one place: settings, proven, sinking, and how a close reads.

Kept free of database code so the hook path can import it cheaply.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_layer.errors import ConfigError
from memory_layer.models import Memory

SUCCESS = "success"
FAILURE = "failure"

# Whole words only. Beads' own IsFailureClose() matches substrings, so "Fixed error
# handling" reads as a failure there ("error"); here it is a success. "error",
# "timeout" and "blocked" are left out on purpose: they describe what was fixed far
# more often than how the work ended.
FAILURE_WORDS = re.compile(
    r"(?<![\w'’])(failed|wontfix|won[’']?t[ -]fix|cancell?ed|canceled|abandoned|rejected)"
    r"(?![\w'’])",
    re.IGNORECASE,
)
# A failure word that is the object of a fix names what was fixed, not how the work
# ended: "Fixed the failed login test", "fix 3 failed jobs". A bare "fix failed" (no
# noun after it) or "tried to fix, failed" still reads as a failure.
FIXED_OBJECT = re.compile(
    r"\b(?:fix(?:e[sd])?|resolved?|repair(?:ed)?|retried|rerun|re-ran)\s+"
    r"(?:(?:the|a|an|all|some|every|\d+)\s+)?"
    r"(?:failed|cancell?ed|canceled|rejected)\s+[a-z]\w*",
    re.IGNORECASE,
)
# An explicit marker anywhere in the reason wins over the words:
# "[outcome:failed]" / "[outcome:failure]" or "[outcome:success]" / "[outcome:worked]".
MARKER = re.compile(r"\[outcome:\s*(success|succeeded|worked|failure|failed)\s*\]", re.IGNORECASE)
_MARKER_VALUES = {"success": SUCCESS, "succeeded": SUCCESS, "worked": SUCCESS}


@dataclass(frozen=True)
class Settings:
    success_delta: float
    failure_delta: float
    floor: float
    shown_weight: float
    unobserved_weight: float
    proven_min_successes: int
    proven_min_score: float
    lead_seconds: float
    fallback_window_hours: float
    tasks_dir: str
    explore: float = 0.0
    probation: bool = False

    @property
    def break_even(self) -> float:
        """The success rate at which a memory holds its ground: 0.6 for +0.2/-0.3."""
        loss = -self.failure_delta
        return loss / (self.success_delta + loss) if self.success_delta + loss > 0 else 0.5


def settings(config: dict[str, Any] | None = None) -> Settings:
    """The ``outcomes`` section of ``config`` (default: the user's config.yaml),
    checked for values that cannot work."""
    from memory_layer.config import DEFAULTS, load_config

    section = dict(DEFAULTS["outcomes"])
    section.update((config if config is not None else load_config()).get("outcomes") or {})
    try:
        return _checked(tuple(sorted(section.items())))
    except TypeError:  # an unhashable value: check it uncached (and report it)
        return _check(section)


@functools.lru_cache(maxsize=16)
def _checked(items: tuple[tuple[str, Any], ...]) -> Settings:
    # is_sinking/is_proven run once per candidate (SessionStart looks at ~600): checking
    # the same section again each time cost more than the rest of the filter.
    return _check(dict(items))


def _check(section: dict[str, Any]) -> Settings:
    values = Settings(
        success_delta=float(section["success_delta"]),
        failure_delta=float(section["failure_delta"]),
        floor=float(section["floor"]),
        shown_weight=float(section["shown_weight"]),
        unobserved_weight=float(section["unobserved_weight"]),
        proven_min_successes=int(section["proven_min_successes"]),
        proven_min_score=float(section["proven_min_score"]),
        lead_seconds=float(section["lead_seconds"]),
        fallback_window_hours=float(section["fallback_window_hours"]),
        tasks_dir=str(section["tasks_dir"]),
        explore=float(section.get("explore", 0.0)),
        probation=bool(section.get("probation", False)),
    )
    if not 0 <= values.success_delta <= 2:
        raise ConfigError("outcomes.success_delta must be between 0 and 2 (default 0.2).")
    if not -2 <= values.failure_delta <= 0:
        raise ConfigError("outcomes.failure_delta must be between -2 and 0 (default -0.3).")
    if not -1 <= values.floor <= 1:
        raise ConfigError("outcomes.floor must be between -1 and 1 (default -0.5).")
    if not 0 <= values.explore <= 1:
        raise ConfigError("outcomes.explore must be between 0 (off) and 1 (default 0.2).")
    for name in ("shown_weight", "unobserved_weight"):
        if not 0 <= getattr(values, name) <= 1:
            raise ConfigError(f"outcomes.{name} must be between 0 and 1.")
    return values


def is_sinking(memory: Memory, config: dict[str, Any] | None = None) -> bool:
    """At or below the floor: withheld from automatic injection, still findable."""
    return memory.outcome_score <= settings(config).floor


# Probation ends for a memory whose record is conclusive: when, from its credited
# successes and failures (a uniform prior on its success rate), the chance that it
# really succeeds at least at the break-even rate is below this. 0 successes and 2
# failures: 6.4% (one more chance); 0 and 3: 2.6% (known to fail); 1 and 3: 8.7%;
# 1 and 4: 4.1%.
PROBATION_MIN_CHANCE = 0.05


def chance_of_holding(successes: int, failures: int, rate: float) -> float:
    """P(true success rate ≥ ``rate``) under Beta(1 + successes, 1 + failures): for whole
    counts, P(Binomial(successes + failures + 1, rate) ≤ successes)."""
    trials = max(0, successes) + max(0, failures) + 1
    if rate <= 0.0:
        return 1.0
    if rate >= 1.0:
        return 1.0 if successes >= trials else 0.0

    # In log space: math.comb(trials, k) overflows a float beyond ~1,000 tries, and an
    # exception here would empty a prompt's injection (the gate fails closed).
    def log_term(k: int) -> float:
        return (
            math.lgamma(trials + 1) - math.lgamma(k + 1) - math.lgamma(trials - k + 1)
            + k * math.log(rate) + (trials - k) * math.log1p(-rate)
        )

    return min(1.0, sum(math.exp(log_term(k)) for k in range(max(0, successes) + 1)))


def may_retry(memory: Memory, config: dict[str, Any] | None = None) -> bool:
    """Whether a sinking memory may be shown on probation (the caller checks that no
    rival that is not sinking answers as well, and that no person failed it): probation
    is on and its record is not yet conclusive.

    A score can be lower than its counts say (imported, or set before counts were
    kept): it counts as at least the failures that would explain it."""
    rules = settings(config)
    if not rules.probation or not is_sinking(memory, config):
        return False
    implied = (
        math.ceil(round(memory.outcome_score / rules.failure_delta, 6))
        if (rules.failure_delta < 0)
        else 0
    )
    failures = max(memory.failure_count, implied)
    chance = chance_of_holding(memory.success_count, failures, rules.break_even)
    return chance >= PROBATION_MIN_CHANCE


def is_proven(memory: Memory, config: dict[str, Any] | None = None) -> bool:
    """A strong record: enough credited successes, a good score, and at least twice as
    many successes as failures."""
    rules = settings(config)
    return (
        memory.success_count >= rules.proven_min_successes
        and memory.outcome_score >= rules.proven_min_score
        and memory.success_count >= 2 * memory.failure_count
    )


def close_outcome(reason: str | None, metadata: Any = None) -> str:
    """Success or failure of a Beads close, from its reason (and metadata.outcome).

    Order: an explicit ``metadata.outcome``, then an ``[outcome:...]`` marker in the
    reason, then the whole-word failure list; anything else is a success (bd's default
    reason is "Closed").
    """
    if isinstance(metadata, Mapping):  # a dict, or a parsed issue's read-only copy
        value = str(metadata.get("outcome") or "").strip().lower()
        if value in {"success", "succeeded", "worked"}:
            return SUCCESS
        if value in {"failure", "failed"}:
            return FAILURE
    text = reason or ""
    marker = MARKER.search(text)
    if marker:
        return _MARKER_VALUES.get(marker.group(1).lower(), FAILURE)
    return FAILURE if FAILURE_WORDS.search(FIXED_OBJECT.sub(" ", text)) else SUCCESS
