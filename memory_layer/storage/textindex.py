"""How text becomes FTS5 tokens and queries.

unicode61 treats a run of CJK characters as one token, so "数据库迁移" would only
match that exact run. We index CJK text with a space between characters and turn
a CJK run in a query into a phrase of those characters: a Chinese word then
matches wherever its characters appear next to each other.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from memory_layer.text import STOPWORDS, WORD

# Han, Hiragana, Katakana, Hangul syllables and CJK punctuation-free ranges.
_CJK = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    "\uac00-\ud7af"  # Hangul syllables
)
# ASCII text is split by memory_layer.text.WORD alone; the CJK-aware patterns below cost
# ~10 ms to compile (big character ranges), so they are compiled only when non-ASCII
# text shows up.


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


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Han, kana or Hangul character."""
    return not text.isascii() and _cjk("char").search(text) is not None


def _is_cjk_run(term: str) -> bool:
    return not term.isascii() and _cjk("run").fullmatch(term) is not None


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
    pattern = WORD if query.isascii() else _cjk("term")
    return search_terms(match.group(0) for match in pattern.finditer(query))


def search_terms(tokens: Iterable[str]) -> list[str]:
    """The distinct search terms among a query's tokens, in order (see query_terms):
    stopwords and one-letter words dropped, CJK runs as bigrams, first spelling kept."""
    terms: list[str] = []
    seen: set[str] = set()
    for token in tokens:
        if _is_cjk_run(token):
            candidates = _cjk_bigrams(token)
        elif token.lower() in STOPWORDS or len(token) < 2:
            continue
        else:
            candidates = [token]
        for candidate in candidates:
            key = candidate.lower()
            if key not in seen:
                seen.add(key)
                terms.append(candidate)
    return terms


def fts_phrase(term: str) -> str:
    """One search term as a quoted FTS5 phrase: a CJK run as its characters in a row."""
    if _is_cjk_run(term):
        return '"' + " ".join(term) + '"'
    return '"' + term.replace('"', '""') + '"'


def normalise_for_hash(text: str) -> str:
    """A hash of the text with case, punctuation and spacing removed: exact-duplicate detection."""
    # Imported here: loading OpenSSL costs ~3 ms, and most hook runs that import this
    # module (a PostToolUse that stores nothing) never hash.
    import hashlib

    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        words = WORD.findall(folded)
    else:
        words = _cjk("word").findall(folded) + _cjk("char").findall(folded)
    return hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()
