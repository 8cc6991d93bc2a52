"""How text becomes FTS5 tokens and queries.

unicode61 treats a run of CJK characters as one token, so "数据库迁移" would only
match that exact run. We index CJK text with a space between characters and turn
a CJK run in a query into a phrase of those characters: a Chinese word then
matches wherever its characters appear next to each other.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata

# Han, Hiragana, Katakana, Hangul syllables and CJK punctuation-free ranges.
_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\uac00-\ud7af"  # Hangul syllables
)
# Word characters that unicode61 keeps together. On ASCII text (nearly every memory and
# query) this is the whole story; the CJK-aware patterns below cost ~10 ms to compile
# (big character ranges), so they are compiled only when non-ASCII text shows up.
_ASCII_WORD = re.compile(r"[^\W_]+")


@functools.cache
def _cjk(kind: str) -> re.Pattern[str]:
    return re.compile(
        {
            "char": f"[{_CJK}]",
            "run": f"[{_CJK}]+",
            # Word characters minus CJK (handled separately).
            "word": rf"[^\W_{_CJK}]+",
            "term": rf"[{_CJK}]+|[^\W_{_CJK}]+",
        }[kind]
    )


def _is_cjk_run(term: str) -> bool:
    return not term.isascii() and _cjk("run").fullmatch(term) is not None

# Dropped from OR queries: they match nearly everything and slow FTS5 down ~4x.
STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each few
    for from further get got had has have having he her here hers him his how i if in into
    is it its itself just let me more most my myself no nor not now of off on once only or
    other our ours out over own same she should so some such than that the their theirs them
    then there these they this those through to too under until up us very was we were what
    when where which while who whom why will with would you your yours yourself
    whats hows wheres whys thing things way ways something anything use used using""".split()
)


def fts_document(text: str, subject: str | None = None, key: str | None = None) -> str:
    """What the FTS index holds for a memory: a structured fact's subject and key come
    first, so "what os does prod-server run" finds the fact whose text is only
    "ubuntu 22.04"."""
    return fts_body(" ".join(part for part in (subject, key, text) if part))


def fts_body(text: str) -> str:
    """The text as stored in the FTS index: CJK characters separated by spaces."""
    if text.isascii():
        return text
    return _cjk("char").sub(lambda m: f" {m.group(0)} ", text)


def _cjk_bigrams(run: str) -> list[str]:
    # Chinese has no spaces and most words are two characters: overlapping bigrams find
    # a word inside any phrasing of the question ("部署前要做什么" finds "部署前必须...").
    if len(run) <= 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def query_terms(query: str) -> list[str]:
    """Distinct search terms of a query, in order: words (no stopwords) and CJK bigrams."""
    terms: list[str] = []
    seen: set[str] = set()
    pattern = _ASCII_WORD if query.isascii() else _cjk("term")
    for match in pattern.finditer(query):
        term = match.group(0)
        if _is_cjk_run(term):
            candidates = _cjk_bigrams(term)
        elif term.lower() in STOPWORDS or len(term) < 2:
            continue
        else:
            candidates = [term]
        for candidate in candidates:
            key = candidate.lower()
            if key not in seen:
                seen.add(key)
                terms.append(candidate)
    return terms


def fts_query(query: str) -> str | None:
    """An FTS5 MATCH expression OR-ing the query's terms, each quoted; None if nothing is left."""
    parts: list[str] = []
    for term in query_terms(query):
        if _is_cjk_run(term):
            parts.append('"' + " ".join(term) + '"')
        else:
            parts.append('"' + term.replace('"', '""') + '"')
    return " OR ".join(parts) if parts else None


def normalise_for_hash(text: str) -> str:
    """A hash of the text with case, punctuation and spacing removed: exact-duplicate detection."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        words = _ASCII_WORD.findall(folded)
    else:
        words = _cjk("word").findall(folded) + _cjk("char").findall(folded)
    return hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()
