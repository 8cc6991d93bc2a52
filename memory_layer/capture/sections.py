"""Lists the assistant itself titles as decisions: "Key decisions:", "## Key Design
Decisions", a compaction summary's "**Key Design Decisions for vlm-service:**".

The structure says what the sentences do not: each item there is a design choice of the
project ("**Two Discord messages**: one detailed embed (no ping), one simple verdict with
`@everyone`", AlexandreVassard/will-it-rain), though no item says "we decided". The
prose filter drops headings and reads bullets one by one, so no sentence rule sees them.

The items are kept together under their title, in chunks of at most ``MAX_CHARS``: one
item alone ("**esbuild** for bundling") rarely makes sense, and the list is one account
of one design. Only the assistant's text and compaction summaries are read (a user's
pasted plan is someone else's document), and relay marking still applies to what is
proposed (``extract._mark``).
"""

from __future__ import annotations

import re

from memory_layer.capture.candidate import Candidate
from memory_layer.capture.guards import MAX_CHARS
from memory_layer.capture.privacy import clean

__all__ = ["decision_lists"]

# Fewer items than this is a remark, not a list of decisions.
MIN_ITEMS = 2
_TITLE_WORDS = (
    # "requirements" only as the user's: a plan's generic "## Requirements" lists the
    # task's inputs, not choices made.
    r"(?:decisions|design choices|choices made|(?:your|the user'?s|user) requirements|"
    r"决定|決定|决策|決策|決定事項|"
    r"設計判断|decisiones|결정 사항|결정사항)"
)
# A heading, or a line ending in ':' (its last sentence is the title: "The plan is ready.
# Key decisions:").
_TITLE = re.compile(
    r"^\s*(?:#{1,6}\s+|\d{1,2}\.\s+|[-*+•]\s+)?(?:\*\*)?(?P<title>[^\n]{0,80}?" + _TITLE_WORDS + r"[^\n:]{0,40}?)"
    r"(?:\*\*)?\s*(?P<colon>[:：])?\s*(?:\*\*)?\s*$",
    re.IGNORECASE,
)
_ANY_TITLE = re.compile(_TITLE_WORDS, re.IGNORECASE)
_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(?P<body>\S.*)$")
_MARKUP = re.compile(r"\*\*|__")
_LAST_SENTENCE = re.compile(r"^.*(?:[.!?]\s+|[。！？])")


def _title(line: str) -> str | None:
    m = _TITLE.match(line)
    if not m or not (m.group("colon") or line.lstrip().startswith("#")):
        return None
    title = _LAST_SENTENCE.sub("", _MARKUP.sub("", m.group("title"))).strip()
    return title or None


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
        items.append(" ".join(_MARKUP.sub("", m.group("body")).split()))
        i += 1
    return items


def _chunks(title: str, items: list[str]) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    for item in items:
        item = item.rstrip(" ;.")
        candidate = f"{title}: {'; '.join([*current, item])}."
        if current and len(candidate) > MAX_CHARS:
            chunks.append(f"{title}: {'; '.join(current)}.")
            current = [item]
        else:
            current.append(item)
    if current:
        text = f"{title}: {'; '.join(current)}."
        if len(text) <= MAX_CHARS:
            chunks.append(text)
    return chunks


def decision_lists(text: str, source: str = "") -> list[Candidate]:
    """One decision candidate per chunk of every list ``text`` titles as decisions."""
    if not _ANY_TITLE.search(text):
        return []  # most replies have none: skip cleaning and the line scan
    lines = clean(text).splitlines()
    found: list[Candidate] = []
    for i, line in enumerate(lines):
        title = _title(line)
        if title is None:
            continue
        items = _items(lines, i + 1)
        if len(items) < MIN_ITEMS:
            continue
        for chunk in _chunks(title, items):
            found.append(Candidate(chunk, "decision", 0.6, "section.decisions", chunk, source))
    return found
