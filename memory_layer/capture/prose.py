"""Turn a chat message into prose sentences, dropping everything that is not prose.

Code blocks, quoted lines, pasted logs and tool output, Markdown tables and
headings, system reminders and command tags are removed: "always" inside a
code comment or a CI warning is not an instruction from anyone.
"""

from __future__ import annotations

import re

from memory_layer.capture.privacy import clean

__all__ = ["prose_sentences", "without_blocks"]

_TAG_BLOCK = re.compile(
    r"<(?P<tag>[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)\b[^>]*>.*?(?:</(?P=tag)>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+")
# Lines that are output or markup, not something a person said.
_NOT_PROSE = re.compile(
    r"^\s*(?:>|\$ |# |#{1,6}\s|\||>>>|\.\.\. |={3,}|-{3,}|\*{3,}|\+{3}|@@|"
    r"Traceback |File \"|[A-Z][a-z]*Error:|E {2,}|FAILED |PASSED |(?:ERROR|WARN|WARNING|"
    r"INFO|DEBUG|FATAL|CRITICAL)\b[:\] ]|npm (?:ERR!|WARN)|error(?:\[\w+\])?:|warning:|"
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[\d{2}:\d{2}|Caveat: |\[Request interrupted)"
)
_INDENTED = re.compile(r"^(?:\t| {4,})")
_MARKUP = re.compile(r"\*\*|__(?=\w)|(?<=\w)__")
# [ADR-022 — Fundy moves to a separate repo](docs/adr/0022-….md): the words, not the URL.
_LINK = re.compile(r"\[([^\]\n]{1,200})\]\([^)\s]{1,400}\)")
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig."})
# Users often type lower-case sentences ("nice catch. for flaky tests, …"),
# so any ". " ends a sentence unless the word before is an abbreviation.
# CJK sentences end in full-width punctuation with no space after it.
_SENTENCE_END = re.compile(r"[.!?](?=\s+\S)|[。！？](?=\S)")


# A Markdown code span: a run of backticks, then the same run closing it. What is inside
# is a command or a name, never a sentence end ("Run `ruff check . || true` first.").
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")


def _split_sentences(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    spans = [m.span() for m in _CODE_SPAN.finditer(line)] if "`" in line else []
    for m in _SENTENCE_END.finditer(line):
        if any(a < m.start() < b for a, b in spans):
            continue
        word = line[start : m.end()].rsplit(None, 1)[-1].lower()
        if word in _ABBREVIATIONS:
            continue
        out.append(line[start : m.end()].strip())
        start = m.end()
    tail = line[start:].strip()
    if tail:
        out.append(tail)
    return out


def without_blocks(text: str) -> str:
    """``text`` cleaned, without tag blocks (system reminders, command tags) and fenced
    code, links reduced to their words: what every reader of a message's own words
    starts from (the sentence rules here, the decision lists in ``sections``)."""
    text = clean(text)
    text = _TAG_BLOCK.sub("\n", text)
    text = _FENCE.sub("\n", text)
    return _LINK.sub(r"\1", text)


def prose_sentences(text: str) -> list[str]:
    """Clean ``text`` and return its prose sentences, in order.

    Lines that were hard-wrapped (previous line has no final punctuation and
    the next starts in lower case) are joined first.
    """
    text = without_blocks(text)
    lines: list[str] = []
    for raw in text.splitlines():
        if not raw.strip() or _INDENTED.match(raw) and not _LIST_MARKER.match(raw):
            lines.append("")
            continue
        if _NOT_PROSE.match(raw):
            lines.append("")
            continue
        is_item = bool(_LIST_MARKER.match(raw))
        line = _MARKUP.sub("", _LIST_MARKER.sub("", raw)).strip()
        if (
            lines
            and lines[-1]
            and not is_item
            and line[:1].islower()
            and lines[-1][-1] not in ".!?:"
        ):
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
    sentences: list[str] = []
    for line in lines:
        if line:
            sentences.extend(_split_sentences(line))
    return sentences
