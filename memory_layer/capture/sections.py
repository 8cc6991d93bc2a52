"""Lists the assistant itself titles as decisions: "Key decisions:", "## Key Design
Decisions", a compaction summary's "**Key Design Decisions for vlm-service:**".

The structure says what the sentences do not: each item there is a design choice of the
project ("**Two Discord messages**: one detailed embed (no ping), one simple verdict with
`@everyone`", AlexandreVassard/will-it-rain), though no item says "we decided". The
prose filter drops headings and reads bullets one by one, so no sentence rule sees them.

Each item becomes one decision memory under its title ("Key decisions: esbuild for
bundling to a single tiny JS file."): a later reversal ("use Jest instead of Vitest")
then retires the item it reverses and nothing else, and an item too long to keep is
dropped by the same bound (``finish``) wherever it sits in the list.

The items pass the prose rules' guards: fenced code and quoted lines are not read (a
draft ADR in a code block is no decision); an item that is hedged, a progress report or
bound to the moment ("… today") or an open choice ("Redux or Zustand") is dropped; a
list that asks anything (an item, or one of the reply's last two sentences unless it
offers more work: "Shall I start?", "Let me know if this works and I'll start.") is a
proposal awaiting an answer; and a title saying the choices are still open or only
proposed ("Decisions needed", "for you", "considered and rejected", "Proposed", "I'd
suggest", "Draft … (for review)") is none. Only the assistant's text and compaction
summaries are read (a user's pasted plan is someone else's document).

Provenance is judged per list, not per item (``extract._mark`` checks the joined
evidence and every line of it): each item's evidence holds the line before the title,
the title line and every item, so a fetched list of short items copied word for word,
one item copied from a fetched page, or a title attributing the list to a document ("The
README lays out the design. Key decisions:", "Key decisions (from README.md):"), marks
every item of that list relayed.
"""

from __future__ import annotations

import re

from memory_layer.capture.candidate import RELAYED, Candidate
from memory_layer.capture.guards import NARRATION, QUESTION, TRANSIENT, finish, usable
from memory_layer.capture.prose import prose_sentences, without_blocks
from memory_layer.capture.provenance import cites_document

__all__ = ["decision_lists"]

# Fewer items than this is a remark, not a list of decisions.
MIN_ITEMS = 2
# An item needs this many words outside code spans and paths: "`docs/adr/0002-use-
# postgres.md`" is an index entry, "esbuild for bundling" a choice.
MIN_ITEM_WORDS = 2
# The assistant's account of a design, stated once with no "we decided" in it: below the
# explicit decision rules (0.65) and below SessionStart's bar (0.7).
CONFIDENCE = 0.6
# Room for what precedes the title words on their line ("The plan is ready. Key …") and
# what follows them ("… for vlm-service"): a longer line is prose mentioning decisions.
TITLE_LEAD_CHARS = 80
TITLE_TAIL_CHARS = 40
_TITLE_WORDS = (
    # Not "requirements" alone: a plan's "## Requirements" lists the task's inputs, and a
    # compaction summary's "User requirements:" the user's requests of that session
    # ("Fix the login redirect bug first"). "Plan updated with all your requirements:" is
    # the assistant's account of what the user fixed for the design (will-it-rain).
    r"(?:decisions|design choices|choices made|your requirements|"
    r"决定|決定|决策|決策|決定事項|"
    r"設計判断|decisiones|결정 사항|결정사항)"
)
# A heading, or a line ending in ':' (its last sentence is the title: "The plan is ready.
# Key decisions:").
_TITLE = re.compile(
    rf"^\s*(?:#{{1,6}}\s+|\d{{1,2}}\.\s+|[-*+•]\s+)?(?:\*\*)?(?P<title>[^\n]{{0,{TITLE_LEAD_CHARS}}}?"
    + _TITLE_WORDS
    + rf"[^\n:]{{0,{TITLE_TAIL_CHARS}}}?)"
    r"(?:\*\*)?\s*(?P<colon>[:：])?\s*(?:\*\*)?\s*$",
    re.IGNORECASE,
)
# Choices still to be made, or made against: "Decisions needed", "a few decisions for
# you", "Open decisions", "Decisions I considered and rejected", "Summary of changes".
_UNDECIDED_TITLE = re.compile(
    r"\b(?:needed|needs?|open|pending|outstanding|remaining|for you|to (?:make|take|discuss|"
    r"confirm|review)|considered|rejected|alternatives?|options|questions?|undecided|tbd|"
    r"changes|changelog|"
    # A proposal put to the user: "Proposed decisions", "Key decisions I'd suggest",
    # "Recommended design choices", "Draft decisions (for review)".
    r"propos(?:ed|als?)|suggest(?:ed|ions?)?|recommend(?:ed|ations?)?|drafts?|for review)\b|\?",
    re.IGNORECASE,
)
_ANY_TITLE = re.compile(_TITLE_WORDS, re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(?P<body>\S.*)$")
_MARKUP = re.compile(r"\*\*|__")
_LAST_SENTENCE = re.compile(r"^.*(?:[.!?]\s+|[。！？])")
# What was done in this session, not what was chosen: "Edited `app/main.py` …", "Ran
# `pytest -q`, all 42 pass", "Committed as `a1b2c3d`".
_REPORT = re.compile(
    r"^(?:edited|ran|committed|pushed|wrote|tested|verified|opened|merged|reverted|"
    r"checked|confirmed|looked)\b",
    re.IGNORECASE,
)
# "Postgres vs SQLite", "Use Redux or Zustand for state management": a choice laid out,
# not made. "or" only between two named things (capitalised or code): "fail fast on a
# missing or bad config" chooses.
_NAMED = r"(?:[A-Z][\w.+#-]*|`[^`]+`)"
_OPEN_CHOICE = re.compile(
    r"^[^,;:]{1,40}\s(?:vs\.?|versus)\s[^,;:]{1,40}$"
    rf"|(?-i:\b{_NAMED}\s+or\s+{_NAMED}(?![\w`]))|\beither\b.{{1,60}}\bor\b",
    re.IGNORECASE,
)
_NOT_WORDS = re.compile(r"`[^`]*`|\S*/\S*")
_WORD = re.compile(r"[^\W\d_]{2,}|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _title(line: str) -> str | None:
    m = _TITLE.match(line)
    if not m or not (m.group("colon") or line.lstrip().startswith("#")):
        return None
    title = _LAST_SENTENCE.sub("", _MARKUP.sub("", m.group("title"))).strip()
    if not title or _UNDECIDED_TITLE.search(title):
        return None
    return title


def _items(lines: list[str], start: int) -> list[str]:
    """The list right after the title (one blank line allowed before it)."""
    items: list[str] = []
    i = start
    if i < len(lines) and not lines[i].strip():
        i += 1
    while i < len(lines):
        m = _ITEM.match(lines[i])
        if not m:
            break
        items.append(" ".join(_MARKUP.sub("", m.group("body")).split()).rstrip(" ;."))
        i += 1
    return items


def _decided(item: str) -> bool:
    """Whether a list item states a choice (the prose rules' guards, and an item of
    words, not a bare file name or an "A vs B")."""
    return (
        usable(item)
        and not TRANSIENT.search(item)
        and not NARRATION.search(item)
        and not _REPORT.match(item)
        and not _OPEN_CHOICE.search(item)
        and len(_WORD.findall(_NOT_WORDS.sub(" ", item))) >= MIN_ITEM_WORDS
    )


# A closing offer of more work is no question about the list: "Want me to wire up the
# frontend …?" after a summary of what was built (ikihin/bhavana). Asking to start, go
# ahead or implement is: the list is then a proposal.
_OFFER = re.compile(
    r"^(?:want me to|would you like me to|do you want me to|should i also|shall i also)\b"
    r"(?!.*\b(?:start|begin|proceed|go ahead|implement|build (?:it|this)|apply|execute)\b)",
    re.IGNORECASE,
)


# Waiting for the user's word without a question mark: "Let me know if this works and
# I'll start.", "If you agree, I'll implement it.", "Once you confirm, …".
_AWAITS = re.compile(
    r"\b(?:let me know|if you (?:agree|approve|are ok|'re ok|are happy|'re happy|confirm)|"
    r"if (?:this|that|it) (?:works|looks (?:good|right|ok)|sounds (?:good|right|ok))|"
    r"once you (?:confirm|approve|agree|sign off)|with your (?:ok|approval|go-ahead))\b",
    re.IGNORECASE,
)
# How many closing sentences may carry the question: "Does that sound good? I can also
# add tests." still asks.
ASK_SENTENCES = 2


def _asks(text: str) -> bool:
    """Whether the reply ends by asking about the list: a plan put to the user ("Does
    this look right before I start?", "Shall I start?", "Let me know if this works and
    I'll start.") is not decided yet. A closing offer of more work asks nothing."""
    for sentence in prose_sentences(text)[-ASK_SENTENCES:]:
        if _AWAITS.search(sentence):
            return True
        if QUESTION.search(sentence + " ") and not _OFFER.match(sentence):
            return True
    return False


def decision_lists(text: str, source: str = "") -> list[Candidate]:
    """One decision candidate per item of every list ``text`` titles as decisions."""
    if not _ANY_TITLE.search(text):
        return []  # most replies have none: skip cleaning and the line scan
    lines = without_blocks(text).splitlines()
    found: list[Candidate] = []
    asks: bool | None = None
    for i, line in enumerate(lines):
        title = _title(line)
        if title is None:
            continue
        items = _items(lines, i + 1)
        if len(items) < MIN_ITEMS or any(QUESTION.search(item + " ") for item in items):
            continue
        asks = _asks(text) if asks is None else asks
        if asks:
            return []
        # The nearest line above the title: where "The README lays out …" would be.
        before = next((b for b in reversed(lines[:i]) if b.strip()), "")
        evidence = "\n".join([before, line, *items]).strip()
        origin = RELAYED if cites_document(f"{before}\n{line}") else ""
        for item in items:
            if not _decided(item):
                continue
            kept = finish(f"{title}: {item}")
            if kept:
                found.append(
                    Candidate(
                        kept, "decision", CONFIDENCE, "section.decisions", evidence, source, origin
                    )
                )
    return found
