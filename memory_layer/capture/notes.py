"""Notes the agent writes down for later: Claude Code's own memory files and ADRs.

When Claude Code decides something is worth keeping it writes a memory file
(``~/.claude/projects/<project>/memory/<name>.md``, front matter ``name``,
``description``, ``type``; indexed in ``MEMORY.md``), and a session that settles an
architecture question often writes an ADR (``docs/adr/0021-….md``). Those files are
the session's lessons in the agent's own words, already distilled, so capture reads
them from the ``Write`` (and whole-file ``Edit``) calls in the transcript:

* a memory file becomes one memory, "<name>: <description>", its category from the
  file's ``type`` (feedback -> convention, user -> preference, project -> decision,
  reference -> context);
* an ADR becomes one decision, "<title>: <first sentence of its body>".

The index (``MEMORY.md``) repeats the files and is skipped. Only what the call wrote
is read, never the file on disk: the transcript is the record of the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory_layer.capture.candidate import Candidate
from memory_layer.capture.prose import prose_sentences
from memory_layer.capture.transcript import ToolUse

__all__ = ["written_notes"]

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
MAX_NOTE_CHARS = 400  # the extractors' bound: a memory is a sentence or two, not a file
MEMORY_CONFIDENCE = 0.8  # the agent chose to remember it: as sure as a user's rule
ADR_CONFIDENCE = 0.7

_MEMORY_FILE = re.compile(r"/\.claude/projects/[^/]+/memory/(?P<name>[^/]+)\.md$")
_ADR_FILE = re.compile(
    r"(?:^|/)(?:adrs?|decisions|architecture[-_]decisions)/(?P<name>[^/]+)\.md$", re.I
)
_FRONT_MATTER = re.compile(r"\A\s*---\s*\n(?P<body>.*?)\n---\s*(?:\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^(?P<key>name|description|type)\s*:\s*(?P<value>.+?)\s*$", re.M)
_TYPE_CATEGORY = {
    "feedback": "convention",
    "user": "preference",
    "project": "decision",
    "reference": "context",
}
_TITLE = re.compile(r"^#\s+(?P<title>.+?)\s*$", re.M)
# ADR boilerplate lines that are no part of the decision's statement.
_ADR_META = re.compile(r"^(?:status|date|deciders|context|supersedes|superseded by)\b", re.I)


def _written_text(use: ToolUse) -> str:
    """The whole file a call wrote: Write's content, or an Edit that replaced it all."""
    if use.name == "Write":
        content = use.input.get("content")
        return content if isinstance(content, str) else ""
    new = use.input.get("new_string")
    # An Edit of a few lines is no statement of the note; one that rewrites the front
    # matter carries the whole note (Claude Code updates memory files this way).
    return new if isinstance(new, str) and _FRONT_MATTER.match(new) else ""


def _bounded(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > MAX_NOTE_CHARS:
        cut = text[:MAX_NOTE_CHARS].rsplit(" ", 1)[0].rstrip(",;:–—-")
        text = cut + "…"
    return text


def _memory_note(text: str) -> tuple[str, str] | None:
    m = _FRONT_MATTER.match(text)
    if not m:
        return None
    fields = {f.group("key"): f.group("value").strip() for f in _FIELD.finditer(m.group("body"))}
    name, description = fields.get("name", ""), fields.get("description", "")
    if not (name and description):
        return None
    category = _TYPE_CATEGORY.get(fields.get("type", "").lower(), "context")
    return _bounded(f"{name.rstrip('.')}: {description}"), category


def _adr_note(text: str) -> str | None:
    m = _TITLE.search(text)
    if not m:
        return None
    title = m.group("title").strip()
    for sentence in prose_sentences(text[m.end() :]):
        if len(sentence) >= 20 and not _ADR_META.match(sentence):
            return _bounded(f"{title.rstrip('.')}: {sentence}")
    return None


def written_notes(uses: Iterable[ToolUse], source: str = "") -> list[Candidate]:
    """The memory files and ADRs these tool calls wrote, as candidates."""
    found: list[Candidate] = []
    for use in uses:
        if use.name not in WRITE_TOOLS:
            continue
        path = use.input.get("file_path")
        if not isinstance(path, str) or path.endswith("/MEMORY.md"):
            continue
        text = _written_text(use)
        if not text:
            continue
        if _MEMORY_FILE.search(path):
            note = _memory_note(text)
            if note:
                found.append(
                    Candidate(note[0], note[1], MEMORY_CONFIDENCE, "notes.memory", note[0], source)
                )
        elif _ADR_FILE.search(path) and use.name == "Write":
            adr = _adr_note(text)
            if adr:
                found.append(Candidate(adr, "decision", ADR_CONFIDENCE, "notes.adr", adr, source))
    return found
