"""Evidence that a surfaced memory was acted on.

A memory shown to an agent is only a candidate for credit. It counts as *used* when
something in the session, after it was shown, contains what **tells it apart**:

- its *terms*: words (3+ characters, not stopwords or generic verbs) and compound
  tokens (``react-dom``, ``libpq-dev``, ``apply_fix.sh``, ``~/.ssh/id_ed25519``);
- minus every term a **rival** has: the other memories surfaced for the same task
  (a path counts as shared when a rival names it or a path under it, so
  ``~/.ssh`` is not evidence for a memory when its rival names ``~/.ssh/id_ed25519``);
- minus the terms of the problem statement (the task's subject and the session's
  prompts): restating the error is not acting on a fix;
- each remaining term weighted by its rarity across the store:
  ``log((N + 1) / df) / log(N + 1)`` (1.0 for a term no other memory has).

An event is evidence when the distinguishing terms it contains (as whole tokens) weigh
``MIN_EVIDENCE`` (0.6) or more: one term few other memories use, or several.
Also evidence, when no rival shares it: a code snippet of the memory (`backtick` spans,
fenced lines, ``$ `` lines; 4+ characters, 6+ in a message) in a command, an edit or a
message; a command (8+ characters) the memory's text names; the memory's id (or its
first 8 characters) in a message. Matching ignores case and runs of whitespace.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from memory_layer.text import STOPWORDS, WORD

_FENCED = re.compile(r"```[^\n`]*\n?(.*?)```", re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
_DOLLAR = re.compile(r"^\s*\$\s+(.+)$", re.M)
# A compound token: word characters joined by - _ . / : ~ = (a package, a file, a path,
# a flag's value). Split into words it would lose what makes it specific.
_COMPOUND = re.compile(r"[~\w][\w.\-/:~=@+]*[\w~]")
_JOINERS = re.compile(r"[\-_./:~=@+]")
# Words of advice and generic verbs that nearly every memory and message uses ("always",
# "must", "run", "again", "fix"): they tell memories apart no better than stopwords, so
# they are never evidence. They stay search terms ("make target", "doesn't work" are
# good queries), hence not in memory_layer.text.STOPWORDS.
_GENERIC_WORDS = frozenset(
    """against always cannot instead make makes must need needs never work works worked
    run runs running ran rerun again first then try tried check checked sure add added set
    fix fixes fixed fixing apply applied applying stored done please now still""".split()
)
_NOT_DISTINCTIVE = STOPWORDS | _GENERIC_WORDS
MIN_TERM = 3

MIN_SNIPPET = 4
MIN_CITED_SNIPPET = 6
MIN_COMMAND = 8
# How much distinguishing weight an event must contain: one term that no rival shown
# has and that few memories of the store have (weight 1.0 for none other; 0.63 for 4
# of 41, "upgrade" in benchmarks/learning.py; 0.6 for 40 of 10,000), or several
# commoner ones.
MIN_EVIDENCE = 0.6
# Terms named in an explanation.
SHOWN_TERMS = 3


def normalise(text: str) -> str:
    return " ".join((text or "").split()).lower()


def terms_of(text: str) -> frozenset[str]:
    """The words and compound tokens of ``text`` that can tell a memory apart."""
    lowered = (text or "").lower()
    found: set[str] = set()
    for match in WORD.finditer(lowered):
        word = match.group(0)
        if len(word) >= MIN_TERM and word not in _NOT_DISTINCTIVE:
            found.add(word)
    for match in _COMPOUND.finditer(lowered):
        token = match.group(0).rstrip(".:")
        if len(token) >= MIN_TERM + 1 and _JOINERS.search(token) and "://" not in token:
            found.add(token)
    return frozenset(found)


def _path_prefixes(term: str) -> Iterable[str]:
    """``~/.ssh`` and ``~`` for ``~/.ssh/id_ed25519``: a rival naming a file names its
    folders too."""
    parts = term.split("/")
    for end in range(1, len(parts)):
        prefix = "/".join(parts[:end])
        if prefix:
            yield prefix


@dataclass(frozen=True)
class Signature:
    """What of a memory's text can be recognised in a session's events."""

    memory_id: str
    text: str  # normalised
    snippets: tuple[str, ...]  # normalised, longest first
    terms: frozenset[str]

    @property
    def words(self) -> tuple[str, ...]:
        """Its plain distinctive words, in a stable order (for display and tests)."""
        ordered = dict.fromkeys(m.group(0).lower() for m in WORD.finditer(self.text))
        return tuple(w for w in ordered if w in self.terms)


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
    return Signature(
        memory_id=memory_id,
        text=normalise(text),
        snippets=tuple(s for s in cleaned if len(s) >= MIN_SNIPPET),
        terms=terms_of(text),
    )


@dataclass(frozen=True)
class Distinction:
    """What tells one memory apart from its rivals: the terms only it has (not in the
    problem statement), weighed by ``rarity`` across the store when an event contains
    them, and its unshared snippets."""

    sig: Signature
    terms: frozenset[str] = frozenset()
    snippets: tuple[str, ...] = ()
    rival_texts: tuple[str, ...] = ()
    rivals: int = 0
    rarity: Callable[[str], float] = field(default=lambda _term: 1.0, compare=False)


def distinction(
    sig: Signature,
    rivals: Iterable[Signature] = (),
    *,
    rarity: Callable[[str], float] | None = None,
    problem: str = "",
) -> Distinction:
    """``sig`` told apart from ``rivals`` (other memories shown for the same task) and
    from the ``problem`` statement, weighted by ``rarity`` (0..1, 1 = in no other
    memory of the store; looked up only for terms an event contains)."""
    others = [r for r in rivals if r.memory_id != sig.memory_id]
    shared: set[str] = set(terms_of(problem))
    for rival in others:
        shared |= rival.terms
        for term in rival.terms:
            if "/" in term:
                shared.update(_path_prefixes(term))
    rival_texts = tuple(r.text for r in others)
    snippets = tuple(s for s in sig.snippets if not any(s in text for text in rival_texts))
    return Distinction(
        sig,
        frozenset(sig.terms - shared),
        snippets,
        rival_texts,
        len(others),
        rarity or (lambda _term: 1.0),
    )


def rarity_in(size: int, document_frequency: Callable[[str], int]) -> Callable[[str], float]:
    """Normalised IDF over a store of ``size`` memories: 1.0 for a term only one memory
    has, falling towards 0 for a term most memories have."""
    cache: dict[str, float] = {}

    def rarity(term: str) -> float:
        if term not in cache:
            df = max(1, document_frequency(term))
            total = max(size, df)
            cache[term] = 1.0 if total <= 1 else math.log((total + 1) / df) / math.log(total + 1)
        return cache[term]

    return rarity


def _as_distinction(found: Signature | Distinction) -> Distinction:
    return found if isinstance(found, Distinction) else distinction(found)


def _term_hits(dist: Distinction, text: str) -> str | None:
    present = terms_of(text)
    weights = {t: round(dist.rarity(t), 4) for t in dist.terms & present}
    hits = sorted((t for t in weights if weights[t] > 0), key=lambda t: (-weights[t], t))
    total = sum(weights[t] for t in hits)
    if total < MIN_EVIDENCE:
        return None
    named = ", ".join(f"`{t}` ({weights[t]:.2f})" for t in hits[:SHOWN_TERMS])
    apart = f"; none of the {dist.rivals} rival(s) shown has it" if dist.rivals else ""
    return f"names {named}, weight {total:.2f} ≥ {MIN_EVIDENCE:g}{apart}"


def match_command(found: Signature | Distinction, command: str) -> str | None:
    """Why this Bash command shows the memory was acted on, or None."""
    dist = _as_distinction(found)
    cmd = normalise(command)
    if not cmd:
        return None
    for snippet in dist.snippets:
        if snippet in cmd:
            return f"ran `{snippet}`"
    if (
        len(cmd) >= MIN_COMMAND
        and cmd in dist.sig.text
        and not any(cmd in text for text in dist.rival_texts)
    ):
        return f"ran `{cmd}`, which the memory names"
    why = _term_hits(dist, cmd)
    return f"ran a command that {why}" if why else None


def match_edit(found: Signature | Distinction, new_text: str, file_path: str = "") -> str | None:
    """Why this edit's new text (in ``file_path``) shows the memory's fix was applied."""
    dist = _as_distinction(found)
    body = normalise(new_text)
    if not body:
        return None
    for snippet in dist.snippets:
        if snippet in body:
            return f"edit contains `{snippet}`"
    # The file's path counts: a memory about `.env` edited in .env names both.
    why = _term_hits(dist, normalise(file_path) + " " + body)
    return f"an edit that {why}" if why else None


def match_message(found: Signature | Distinction, message: str) -> str | None:
    """Why this assistant message cites the memory, or None."""
    dist = _as_distinction(found)
    sig = dist.sig
    body = normalise(message)
    if not body:
        return None
    if sig.memory_id.lower() in body or (
        len(sig.memory_id) > 8 and re.search(r"\b" + re.escape(sig.memory_id[:8].lower()), body)
    ):
        return "the assistant cites its id"
    for snippet in dist.snippets:
        if len(snippet) >= MIN_CITED_SNIPPET and snippet in body:
            return f"the assistant quotes `{snippet}`"
    why = _term_hits(dist, body)
    return f"the assistant {why}" if why else None


def match_event(found: Signature | Distinction, event: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, why) when one session event is evidence of use, else None.

    ``event`` is a session_events row: kind tool|prompt|assistant, tool, command,
    file_path, text.
    """
    dist = _as_distinction(found)
    kind = event.get("kind")
    if kind == "assistant":
        why = match_message(dist, event.get("text") or "")
        return ("cites", why) if why else None
    if kind != "tool":
        return None
    if event.get("command"):
        why = match_command(dist, event["command"])
        if why:
            return ("command", why)
    if event.get("text") and (event.get("file_path") or event.get("tool") != "Bash"):
        why = match_edit(dist, event["text"], event.get("file_path") or "")
        if why:
            return ("edit", why)
    return None
