"""Shared guards of the prose extractors: filler and lead-ins cut off, questions and
hedges refused, a candidate sentence tidied and bounded, a following reason kept.

Split from ``extract`` so the instruction/decision extractors there and the
diagnosis/finding extractors in ``findings`` apply the very same rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memory_layer.capture.candidate import Candidate

MIN_CHARS = 12
MAX_CHARS = 400
MIN_BODY_WORDS = 3

# --- shared guards ----------------------------------------------------------

FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|alright|all right|right|well|hmm+|oh|also|and|but|btw|"
    r"by the way|fyi|actually|anyway|great|cool|nice|perfect|thanks|thank you|"
    r"one more thing|one thing|hey|hi|yeah|yes|yep|please|just|ah|ps|"
    r"also note|quick note|important)\b[\s,:;.!\-–—]*"
    # "No, …" answers; "no rails wrapper either way" is a rule and keeps its "no".
    r"|(?:no|nope)\b\s*[,:;.!\-–—][\s,:;.!\-–—]*)+",
    re.IGNORECASE,
)
QUESTION = re.compile(r"\?(?:[\s\"')\]]|$)")
HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|possibly|probably|likely|presumably|not sure|unsure|"
    r"wonder|what if|should we|could we|would it|do we|shall we|i guess|i think|"
    r"i suspect|i believe|i suppose|seems?|appears? to|could be|may be|hypothetically|"
    r"let'?s say|suppose|imagine|for now|this time|temporarily|for the moment|"
    r"not always|almost always|never mind|nevermind|if only|kidding)\b",
    re.IGNORECASE,
)
# What holds for this moment, this change or this run, not for the project: "Do NOT commit
# anything yet", "DO NOT push to main until the demo is over", "Do NOT merge PR #42", "the
# errors above are harmless, the test passed on retry", "`test_login` fails on main right
# now". HEDGE already refuses "for now" and "this time".
TRANSIENT = re.compile(
    r"\b(?:yet|until|till|today|tonight|tomorrow|right now|just now|at the moment|currently|"
    r"anymore|(?:was|were|is|are) still|on (?:a )?retry|after (?:a )?retry|retried|above|"
    r"(?:this|that|the current) (?:pr|pull request|branch|test|commit|change|diff|session|"
    r"ticket|run|week|sprint|demo)|these (?:changes|files|tests)|"
    r"(?:pr|issue|ticket|bug)\s*#?\d+)\b|(?<![\w&])#\d+\b",
    re.IGNORECASE,
)
# Reported speech: the rule belongs to someone else ("the docs say …").
REPORTED = re.compile(
    r"\b(?:says?|said|saying|claims?|according to|the docs|the readme|the error|"
    r"the message|the log|the output|prints?|printed|warns?)\b",
    re.IGNORECASE,
)
PRONOUN_START = re.compile(r"^(?:it|this|that|they|these|those|he|she)\b", re.IGNORECASE)
DEAD_END = re.compile(
    r"\b(?:wasn'?t it|was not it|not the (?:issue|problem|cause|culprit)|red herring|"
    r"unrelated|false alarm)\b",
    re.IGNORECASE,
)


# A label in front of the rule or finding: "Note: …", "One more thing to keep in mind:
# …", "Found a real bug: …", "One detail worth flagging before you review: …".  The
# label hides the rule from the patterns below, so it is cut off (and remembered: a
# labelled finding of the assistant is a candidate by itself, see ``findings.labelled_finding``).
LEAD_IN = re.compile(
    r"^(?:(?:one more thing|one thing|something|also|and)\s+)?"
    r"(?P<label>(?:(?:one |a |another )?(?:detail|thing|point|gotcha) )?"
    r"(?:to keep in mind|to remember|worth (?:noting|flagging|knowing|remembering)"
    r"(?: before you \w+)?)|note|nb|ps|reminder|tip|rule|fyi|important|"
    r"(?:key|important|notable) (?:point|takeaway|insight)|(?:(?:key|important|notable) )?finding|"
    r"takeaway|lesson(?: learned)?|"
    r"found (?:a|the|one) (?:real |actual |subtle )?(?:bug|issue|problem|cause)|"
    r"(?:the )?(?:root cause|real cause|actual cause|fix|catch|trick|culprit))\s*:\s*"
    r"(?P<body>\S.*)",
    re.IGNORECASE,
)


def strip_filler(sentence: str) -> str:
    sentence = FILLER.sub("", sentence).strip()
    m = LEAD_IN.match(sentence)
    return m.group("body").strip() if m else sentence


def inside_quotes(sentence: str, pos: int) -> bool:
    """True when ``pos`` falls inside a "double-quoted" or “curly-quoted” span."""
    for m in re.finditer(r"\"[^\"]*\"|“[^”]*”", sentence):
        if m.start() < pos < m.end():
            return True
    return False


def finish(text: str) -> str | None:
    """Tidy a candidate sentence; ``None`` if it is out of bounds."""
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:–—-").strip()
    if not text:
        return None
    if text[0].islower():
        text = text[0].upper() + text[1:]
    if text[-1] not in ".!`)\"'":
        text += "."
    if not MIN_CHARS <= len(text) <= MAX_CHARS:
        return None
    return text


def first_word(text: str) -> str:
    m = re.match(r"[`'\"]?([A-Za-z]+)", text)
    return m.group(1).lower() if m else ""


def usable(sentence: str) -> bool:
    return not (QUESTION.search(sentence) or HEDGE.search(sentence))


# A following sentence that gives the reason belongs to the memory.
_REASON_NEXT = re.compile(
    r"^(?:because|since|that'?s because|this is because|the reason (?:is|was)|"
    r"otherwise|it'?s because|that way)\b",
    re.IGNORECASE,
)


def with_reason(sentences: list[str], i: int, text: str) -> tuple[str, int]:
    """Append sentence ``i+1`` when it states the reason; returns (text, consumed)."""
    if i + 1 < len(sentences):
        nxt = strip_filler(sentences[i + 1])
        if _REASON_NEXT.match(nxt) and usable(nxt):
            return f"{text.rstrip('.')}. {nxt}", 1
    return text, 0


# What the assistant did, not what it learned: progress reports are no lessons.
NARRATION = re.compile(
    r"\b(?:i|i'(?:ve|ll|m|d)|we'(?:ve|ll)|let me|already (?:done|committed|pushed|merged)|"
    r"(?:is|are|was|were) (?:done|committed|pushed|merged|pending)|the task list|"
    r"commit `?[0-9a-f]{7,}`?)\b",
    re.IGNORECASE,
)
# Something concrete named: code, a path, an identifier, a flag.
CONCRETE = re.compile(r"`[^`]+`|\b[\w.-]+/[\w./-]+|\b[A-Za-z]+[A-Z_][\w]*\b|--?[a-z][\w-]+")


# Each extractor takes (sentences, index) and returns (candidate or None, extra sentences
# consumed).  They receive sentences with filler already stripped.
Extractor = Callable[[list[str], int], tuple[Candidate | None, int]]
