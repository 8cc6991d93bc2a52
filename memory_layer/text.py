"""The package's lexical rules: what a word is, which words say nothing, the stem rule.

One place for them, so that the FTS index (storage/textindex), recall's keyword
evidence (retrieval), the hook's relevance floor and outcome evidence all agree on
what "a word of this text" means. A leaf module: storage imports it, so it imports
nothing from the package.
"""

from __future__ import annotations

import re

# A word as FTS5's unicode61 tokenizer keeps it together: letters and digits, split at
# underscores and punctuation. On ASCII text (nearly every memory and query) this is
# the whole story; storage/textindex adds CJK handling for other text.
WORD = re.compile(r"[^\W_]+")

# Words that say nothing about which memory is meant. Dropped from search terms (they
# match nearly everything and slow FTS5 down ~4x) and from the words that identify a
# memory's prose (outcomes/evidence).
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

# --- the stem rule -----------------------------------------------------------------
# A query word finds a memory word that starts with the query word minus its last
# STEM_CUT letters, keeping at least STEM_KEEP ("failing" -> "fail" finds "fails"): a
# cheap stand-in for how the porter tokenizer lets BM25 match both. Non-ASCII words
# (CJK bigrams, accented words) are matched as they are, anywhere in the text.
STEM_KEEP = 4
STEM_CUT = 3
# Where an ASCII stem may start: not right after an ASCII letter or digit. STEM_WORDS
# splits text into exactly those runs, so counting memories whose runs start with a
# stem (retrieval/vector_search.ScopeSample) agrees with what the stem's pattern finds.
_STEM_START = r"(?<![a-z0-9])"
STEM_WORDS = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """The lower-cased prefix of ``word`` that the stem rule looks for."""
    key = word.lower()
    if not key.isascii() or len(key) <= STEM_KEEP:
        return key
    return key[: max(STEM_KEEP, len(key) - STEM_CUT)]


def stem_pattern(word: str) -> re.Pattern[str]:
    """Finds ``word`` by its stem in lower-cased text (see the stem rule above)."""
    key = stem(word)
    if not key.isascii():
        return re.compile(re.escape(key))
    return re.compile(_STEM_START + re.escape(key))


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 memory``, ``2 memories``: a count with its noun in the right number."""
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
