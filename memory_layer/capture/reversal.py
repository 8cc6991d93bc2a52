"""What a new rule replaces: "use Vitest instead of Jest" retires "Always use Jest …".

A user who changes their mind says what they no longer want: "X instead of Y", "X
rather than Y", "X, not Y", "switch from Y to X", "no longer use Y", "stop using Y".
``replaced_term`` returns that Y (lower case, without quotes or backticks) so the
write path can supersede the earlier memory that told agents to use it, instead of
leaving both to be injected.
"""

from __future__ import annotations

import re

__all__ = ["replaced_term", "says_to_use"]

_TERM = r"`?(?P<term>[A-Za-z][\w.@/+-]{1,40})`?"
_REPLACED = (
    re.compile(
        r"\b(?:instead of|rather than|in place of|over)\s+(?:the\s+|using\s+)?" + _TERM, re.I
    ),
    re.compile(r",\s*not\s+(?:the\s+)?" + _TERM, re.I),
    re.compile(r"\bswitch(?:ed|ing)?\s+(?:away\s+)?from\s+" + _TERM, re.I),
    re.compile(r"\b(?:no longer use|stop using|don'?t use|do not use|never use)\s+" + _TERM, re.I),
)
_STOP = frozenset({"a", "an", "the", "it", "that", "this", "them", "one", "now", "before"})


def replaced_term(text: str) -> str:
    """The tool or practice ``text`` says to stop using, or ``""``."""
    for pattern in _REPLACED:
        m = pattern.search(text)
        if m:
            term = m.group("term").rstrip(".,;:").lower()
            if term not in _STOP:
                return term
    return ""


# How far a verb may stand before the term it governs: "use the `vitest` runner" is a
# rule about Vitest, a verb a clause away is about something else.
VERB_REACH = 40


def says_to_use(text: str, term: str, category: str) -> bool:
    """Whether ``text`` tells agents to use ``term`` (and not to stop using it): a verb
    before it ("use Vitest for …"), or, in a decision (``category``), the term as the
    subject of an item ("Key decisions: Vitest for fast testing.", ``capture.sections``).
    Only a decision's item names its choice that way: in a gotcha, "npm (v10) prints a
    funding warning" is about npm, not a choice of it."""
    if replaced_term(text) == term:
        return False
    word = re.escape(term)
    return bool(
        re.search(
            rf"\b(?:use|uses|using|with|run|runs|prefer|go with|stick with|adopt)\b"
            rf"[^.;]{{0,{VERB_REACH}}}(?<![\w-]){word}(?![\w-])",
            text,
            re.IGNORECASE,
        )
        or category == "decision"
        and re.search(
            rf"(?:^|[:;]\s)\s*`?{word}`?(?:\s+v?\d[\w.]*)?\s+(?:for|as|—|–|-|\()",
            text,
            re.IGNORECASE,
        )
    )
