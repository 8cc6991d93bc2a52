"""Evidence that a surfaced memory was acted on.

A memory shown to an agent is only a candidate for credit. It counts as *used* when
something in the session, after it was shown, points at it:

- **command**: a Bash command run contains one of the memory's code snippets, or the
  command itself (8+ characters) appears in the memory's text;
- **edit**: an edit's new text contains one of the memory's code snippets, or (when the
  memory has no snippets) at least two of its code-like tokens (all, if it has one),
  counting the edited file's path;
- **cites**: an assistant message names the memory's id (or its first 8 characters),
  contains a code snippet (6+ characters) or two code-like tokens, or — for prose
  memories with neither — at least 60% (and 4+) of its distinctive words.

Code snippets are `backtick` spans and ```fenced``` blocks (4+ characters), and lines
starting with ``$ ``. Code-like tokens contain ``_ . / : =``, ``()``, a camelCase
hump, or start with ``-``. Matching ignores case and runs of whitespace.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_layer.text import STOPWORDS, WORD

_FENCED = re.compile(r"```[^\n`]*\n?(.*?)```", re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
_DOLLAR = re.compile(r"^\s*\$\s+(.+)$", re.M)
_CODE_TOKEN = re.compile(r"[_./:=]|\(\)|[a-z][A-Z]|^-{1,2}\w")
# Words of advice and generic verbs that nearly every prose memory uses ("always",
# "never", "must", "make", "work"): they tell memories apart no better than stopwords,
# so they are not distinctive. They stay search terms ("make target", "doesn't work" are
# good queries), hence not in memory_layer.text.STOPWORDS.
_ADVICE_WORDS = frozenset(
    """against always cannot instead make makes must need needs never work works""".split()
)
_NOT_DISTINCTIVE = STOPWORDS | _ADVICE_WORDS
# Shorter words are too common to tell a restated memory from chance overlap.
MIN_DISTINCTIVE_WORD = 4
MAX_DISTINCTIVE_WORDS = 30

MIN_SNIPPET = 4
MIN_CITED_SNIPPET = 6
MIN_COMMAND = 8


def normalise(text: str) -> str:
    return " ".join((text or "").split()).lower()


@dataclass(frozen=True)
class Signature:
    """What of a memory's text can be recognised in a session's events."""

    memory_id: str
    text: str  # normalised
    snippets: tuple[str, ...]  # normalised, longest first
    code_tokens: tuple[str, ...]  # lower-cased
    words: tuple[str, ...]  # distinctive prose words


def _strip_token(token: str) -> str:
    return token.strip("\"'`,;!?()[]{}<>").rstrip(".:")


@lru_cache(maxsize=4096)
def signature(memory_id: str, text: str) -> Signature:
    snippets: list[str] = []
    for match in _FENCED.finditer(text):
        snippets.extend(line for line in match.group(1).splitlines() if line.strip())
    without_fences = _FENCED.sub(" ", text)
    snippets.extend(m.group(1) for m in _INLINE.finditer(without_fences))
    snippets.extend(m.group(1) for m in _DOLLAR.finditer(without_fences))
    cleaned = sorted(
        {normalise(s).lstrip("$ ").strip() for s in snippets}, key=lambda s: (-len(s), s)
    )
    code_tokens: list[str] = []
    for raw_token in text.split():
        token = _strip_token(raw_token)
        if len(token) >= 4 and _CODE_TOKEN.search(token) and "://" not in token:
            code_tokens.append(token.lower())
    words = [
        w
        for w in dict.fromkeys(m.group(0).lower() for m in WORD.finditer(text))
        if len(w) >= MIN_DISTINCTIVE_WORD and w not in _NOT_DISTINCTIVE
    ][:MAX_DISTINCTIVE_WORDS]
    return Signature(
        memory_id=memory_id,
        text=normalise(text),
        snippets=tuple(s for s in cleaned if len(s) >= MIN_SNIPPET),
        code_tokens=tuple(dict.fromkeys(code_tokens)),
        words=tuple(words),
    )


def _tokens_hit(sig: Signature, haystack: str) -> list[str]:
    return [t for t in sig.code_tokens if t in haystack]


def _enough_tokens(sig: Signature, hits: list[str]) -> bool:
    return bool(sig.code_tokens) and len(hits) >= min(2, len(sig.code_tokens))


def match_command(sig: Signature, command: str) -> str | None:
    """Why this Bash command shows the memory was acted on, or None."""
    cmd = normalise(command)
    if not cmd:
        return None
    for snippet in sig.snippets:
        if snippet in cmd:
            return f"ran `{snippet}`"
    if len(cmd) >= MIN_COMMAND and cmd in sig.text:
        return f"ran `{cmd}`, which the memory names"
    return None


def match_edit(sig: Signature, new_text: str, file_path: str = "") -> str | None:
    """Why this edit's new text (in ``file_path``) shows the memory's fix was applied."""
    body = normalise(new_text)
    if not body:
        return None
    for snippet in sig.snippets:
        if snippet in body:
            return f"edit contains `{snippet}`"
    if not sig.snippets:
        # The file's path counts: a memory about `.env` edited in .env names both.
        hits = _tokens_hit(sig, normalise(file_path) + " " + body)
        if _enough_tokens(sig, hits):
            return "edit contains " + ", ".join(f"`{h}`" for h in hits[:3])
    return None


def match_message(sig: Signature, message: str) -> str | None:
    """Why this assistant message cites the memory, or None."""
    body = normalise(message)
    if not body:
        return None
    if sig.memory_id.lower() in body or (
        len(sig.memory_id) > 8 and re.search(r"\b" + re.escape(sig.memory_id[:8].lower()), body)
    ):
        return "the assistant cites its id"
    for snippet in sig.snippets:
        if len(snippet) >= MIN_CITED_SNIPPET and snippet in body:
            return f"the assistant quotes `{snippet}`"
    hits = _tokens_hit(sig, body)
    if _enough_tokens(sig, hits):
        return "the assistant names " + ", ".join(f"`{h}`" for h in hits[:3])
    if not sig.snippets and not sig.code_tokens and len(sig.words) >= 4:
        present = {m.group(0).lower() for m in WORD.finditer(body)}
        shared = [w for w in sig.words if w in present]
        if len(shared) >= 4 and len(shared) >= 0.6 * len(sig.words):
            return f"the assistant restates it ({len(shared)}/{len(sig.words)} words)"
    return None


def match_event(sig: Signature, event: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, why) when one session event is evidence of use, else None.

    ``event`` is a session_events row: kind tool|prompt|assistant, tool, command,
    file_path, text.
    """
    kind = event.get("kind")
    if kind == "assistant":
        why = match_message(sig, event.get("text") or "")
        return ("cites", why) if why else None
    if kind != "tool":
        return None
    if event.get("command"):
        why = match_command(sig, event["command"])
        if why:
            return ("command", why)
    if event.get("text") and (event.get("file_path") or event.get("tool") != "Bash"):
        why = match_edit(sig, event["text"], event.get("file_path") or "")
        if why:
            return ("edit", why)
    return None
