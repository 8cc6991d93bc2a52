"""The value every capture path returns: a proposed memory, not yet stored."""

from __future__ import annotations

import re

from memory_layer.errors import InvalidInput, UnknownCategory
from memory_layer.frozen import Frozen
from memory_layer.models import CATEGORIES

__all__ = ["CATEGORIES", "RELAYED", "TOOL_OUTPUT", "Candidate", "Turn", "dedupe", "normalise"]

# A candidate's ``origin`` when its words are not the speaker's own (capture.provenance
# decides it). Defined here, not there: PostToolUse needs the name on every call, and
# provenance's regexes and window code are only needed where a transcript is read.
TOOL_OUTPUT = "tool_output"
RELAYED = "relayed"


class Candidate(Frozen):
    """A memory proposed by one extractor.

    ``confidence`` is the extractor's own estimate that a careful human would
    keep this memory (explicit user instructions score higher than inferred
    root causes).  ``evidence`` is the cleaned source snippet it came from, and
    ``source`` an optional pointer (e.g. a transcript line uuid) for provenance.
    ``origin`` is empty when the words are the speaker's own, else where they came
    from (``capture.provenance``: tool output, or assistant text relaying it).
    ``replaces`` names what a changed rule says to stop using ("Vitest instead of Jest"
    → ``jest``): storing it supersedes the earlier memory that said to use it.
    """

    text: str
    category: str
    confidence: float
    extractor: str
    evidence: str = ""
    source: str = ""
    origin: str = ""
    replaces: str = ""

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise UnknownCategory(
                f"Unknown category '{self.category}'. Choose one of: {', '.join(CATEGORIES)}."
            )
        if not 0.0 <= self.confidence <= 1.0:
            raise InvalidInput(f"Confidence must be between 0 and 1, got {self.confidence}.")


class Turn(Frozen):
    """One conversational line as the extractors read it: who speaks (a compaction
    summary is the assistant's account), its prose sentences and the rules' proposals."""

    role: str  # user | assistant | compact
    uuid: str
    sentences: tuple[str, ...]
    proposed: tuple[Candidate, ...]


# Letters of every script count: with ASCII letters only, two different Chinese sentences
# both normalised to "" and one of them was dropped as a "duplicate".
_NON_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Key used to recognise the same memory phrased with different punctuation/case."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def dedupe(candidates: list[Candidate]) -> list[Candidate]:
    """Keep one candidate per normalised text (the most confident), in first-seen order."""
    best: dict[str, Candidate] = {}
    for cand in candidates:
        key = normalise(cand.text)
        if key not in best or cand.confidence > best[key].confidence:
            best[key] = cand
    return list(best.values())
