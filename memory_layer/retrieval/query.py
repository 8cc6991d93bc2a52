"""One parsed query: split into terms once per recall, then passed along.

A prompt's way through the hook (``hooks/inject.plan_prompt``), recall
(``retrieval/search.recall``) and the relevance floor (``retrieval/relevance``) needs
the same facts about the query: its search terms, each term's stem and the pattern
finding it in a memory, its FTS5 phrase, the intents it expresses. ``parse_query``
works them out once; everything that depends on the database (IDF, shares, the words
left out of the embedded query) is computed from this object by recall, without
splitting the text again.

The other values a recall is asked with live here too, so recall's keyword side
(``retrieval/search``) and its vector side (``retrieval/vector_search``) share them
without importing each other: ``Scope``, which memories a recall may return, and
``Term``, a query term with what the database says about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_layer.frozen import Frozen
from memory_layer.retrieval.intent import boosted_categories, detect_intents
from memory_layer.storage.textindex import fts_phrase, query_terms, search_terms
from memory_layer.text import WORD, stem, stem_pattern

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.models import Memory


class QueryTerm(Frozen):
    """One search term of a query (``textindex.query_terms``)."""

    text: str  # as first spelled in the query
    stem: str  # what ``pattern`` looks for at the start of a word (memory_layer.text)
    pattern: re.Pattern[str]  # finds the term by its stem in lower-cased text
    phrase: str  # the term as a quoted FTS5 phrase


class Query(Frozen):
    """A query as recall and the relevance floor use it. Made by ``parse_query``;
    two queries are equal when their text is (everything else derives from it)."""

    # Everything but the text derives from it: not compared.
    _not_compared = frozenset({"terms", "intents", "boosts", "word_spans"})

    text: str  # stripped
    terms: tuple[QueryTerm, ...]
    intents: dict[str, str]  # intent -> the cue that triggered it
    boosts: dict[str, str]  # category -> why the intents boost it
    # (start, end) of every word of ``text``, stopwords included: lets ``without`` drop
    # words from the text without splitting it again.
    word_spans: tuple[tuple[int, int], ...]

    def without(self, left_out: set[str] | frozenset[str]) -> str:
        """The text minus the words whose lower-cased form is in ``left_out``, spaces
        collapsed; punctuation stays."""
        pieces: list[str] = []
        end = 0
        for start, stop in self.word_spans:
            pieces.append(self.text[end:start])
            word = self.text[start:stop]
            if word.lower() not in left_out:
                pieces.append(word)
            end = stop
        pieces.append(self.text[end:])
        return " ".join("".join(pieces).split())

    def without_words(self, left_out: set[str] | frozenset[str]) -> Query:
        """This query with the words whose lower-cased form is in ``left_out`` taken out
        of its text and terms (derived, not parsed again); itself when nothing is left
        out or nothing else would be left."""
        terms = tuple(t for t in self.terms if t.text.lower() not in left_out)
        if len(terms) == len(self.terms) or not terms:
            return self
        text = self.without(left_out)
        return Query(
            text=text,
            terms=terms,
            intents=self.intents,
            boosts=self.boosts,
            word_spans=tuple(match.span() for match in WORD.finditer(text)),
        )


def _term(text: str) -> QueryTerm:
    return QueryTerm(text, stem(text), stem_pattern(text), fts_phrase(text))


def parse_query(text: str) -> Query:
    """Parse ``text`` (None or blank gives a query without terms)."""
    text = (text or "").strip()
    spans = tuple(match.span() for match in WORD.finditer(text))
    if text.isascii():
        # WORD is also how ASCII text splits into search terms: reuse the one pass.
        terms = search_terms(text[start:stop] for start, stop in spans)
    else:
        terms = query_terms(text)
    intents = detect_intents(text)
    return Query(
        text=text,
        terms=tuple(_term(term) for term in terms),
        intents=intents,
        boosts=boosted_categories(intents),
        word_spans=spans,
    )


_NAME_PART = re.compile(r"[a-z0-9]+")
# The last two parts of a project id name the project (github.com/apache/airflow:
# apache, airflow; a path: its last two folders).
PROJECT_NAME_PARTS = 2


def project_words(project: str) -> frozenset[str]:
    """The words that name ``project`` (``github.com/apache/airflow`` → apache, airflow)."""
    parts = [p for p in project.lower().replace("\\", "/").split("/") if p][-PROJECT_NAME_PARTS:]
    return frozenset(w for part in parts for w in _NAME_PART.findall(part))


def within_project(query: Query, project: str | None) -> Query:
    """The query as asked inside one project: the project's own name taken out.

    Inside a project's scope its name is no evidence for any one memory ("How do I set
    up the pre-commit hooks for Airflow?" asks the Airflow store), yet it pulls the
    keyword match and the embedding toward every memory that mentions the project.
    Measured on real agent instructions: plain-question hit@1 0.79 → 0.88 and false
    answers to unanswerable questions 62% → 19% (benchmarks/RESULTS.md)."""
    if not project:
        return query
    return query.without_words(project_words(project))


def as_query(query: str | Query) -> Query:
    """``query`` itself, or the text parsed: the one door from a string to a Query."""
    return query if isinstance(query, Query) else parse_query(query)


@dataclass(frozen=True)
class Term:
    """A query term (``QueryTerm``) with what the database says about it, computed once
    per recall (``search.query_term_weights``). Flat rather than wrapping the QueryTerm: ``coverage``
    reads ``pattern`` and ``idf`` for every term of every candidate."""

    text: str
    pattern: re.Pattern[str]
    idf: float
    share: float  # fraction of memories containing the term
    stem: str  # what ``pattern`` looks for at the start of a word
    phrase: str  # the FTS5 phrase matching the term


@dataclass(frozen=True)
class Scope:
    """Which memories a recall may return. ``projects=None`` means every project."""

    projects: tuple[str | None, ...] | None
    statuses: tuple[str, ...] = ("active",)
    category: str | None = None
    # Scenes (deploy, server_ops, coding...) the client declared: recall covers them plus
    # memories without a scene. None = no scene filter.
    scenes: tuple[str, ...] | None = None

    @classmethod
    def for_project(
        cls, project: str | None, *, include_global: bool = True, category: str | None = None
    ) -> Scope:
        projects: tuple[str | None, ...] = (project,) if project else ()
        if include_global:
            projects += (None,)
        return cls(projects=projects, category=category)

    def single_project(self) -> str | None:
        """The one named project searched (global memories may come along), else None."""
        named = [p for p in (self.projects or ()) if p is not None]
        return named[0] if len(named) == 1 else None

    def admits(self, memory: Memory) -> bool:
        """Whether the memory is in scope (candidates come from scoped queries; the next
        turn of a conversation is looked up by its place, so its project is checked too)."""
        if memory.status not in self.statuses:
            return False
        if self.projects is not None and memory.project not in self.projects:
            return False
        if self.category and memory.category != self.category:
            return False
        return self.scenes is None or memory.extra.get("scene") in (None, *self.scenes)

    def filters(self) -> dict[str, Any]:
        """The scope as the plain values storage filters memories by (``storage.fts``)."""
        return {
            "projects": self.projects,
            "statuses": self.statuses,
            "category": self.category,
            "scenes": self.scenes,
        }
