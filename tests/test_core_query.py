"""The parsed query: one parse per prompt and per recall; the shared lexical rules."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import memory_layer
from memory_layer import text as lexical
from memory_layer.hooks.events import parse_event
from memory_layer.hooks.handlers import prepare
from memory_layer.memories import remember
from memory_layer.outcomes.evidence import match_message, signature
from memory_layer.retrieval import query as query_module
from memory_layer.retrieval.query import Query, parse_query
from memory_layer.retrieval.relevance import matched_terms
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage import textindex
from tests.fakes import FakeEmbedder

PROJECT_DIR = "/nonexistent/shop"  # not a git repo: the project id is the path itself
PACKAGE = Path(memory_layer.__file__).parent


# --- the stem rule -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("failing", "fail"),  # the last three letters go ...
        ("Deployment", "deploym"),  # ... lower-cased
        ("fails", "fail"),  # ... but four letters stay
        ("test", "test"),  # four letters or fewer: the word itself
        ("db", "db"),
        ("数据", "数据"),  # non-ASCII: as it is
        ("Café", "café"),
    ],
)
def test_stem_keeps_all_but_the_last_three_letters_and_at_least_four(
    word: str, stem: str
) -> None:
    assert lexical.stem(word) == stem


def test_stem_pattern_finds_words_sharing_the_stem_at_a_word_start() -> None:
    failing = lexical.stem_pattern("failing")
    assert failing.search("the build fails on ci")
    assert failing.search("failure:")  # after punctuation
    assert not failing.search("unfailing")  # not inside a word
    assert not lexical.stem_pattern("Deploy").search("redeploy")
    # Non-ASCII terms have no word boundaries to respect (CJK has no spaces).
    assert lexical.stem_pattern("迁移").search("数据库迁移脚本")


def test_the_sample_words_split_where_an_ascii_stem_may_start() -> None:
    # ScopeSample counts memories whose STEM_WORDS start with a stem; that must agree
    # with what the stem's pattern finds, including after non-ASCII letters.
    text = "naïve re-deploy"
    words = lexical.STEM_WORDS.findall(text)
    for word in ("ve", "deploy"):
        assert any(w.startswith(word) for w in words)
        assert lexical.stem_pattern(word).search(text)


# --- one word regex, one stopword list ----------------------------------------------


def test_search_terms_and_evidence_share_the_stopwords() -> None:
    assert textindex.query_terms("why does the deploy fail") == ["deploy", "fail"]
    every_stopword = " ".join(sorted(lexical.STOPWORDS)).upper()
    assert textindex.query_terms(every_stopword + " rollback") == ["rollback"]
    # A prose memory's distinctive words leave out the same stopwords.
    sig = signature("m1", "Something about the nightly rollback: things were done before")
    assert not set(sig.words) & lexical.STOPWORDS
    assert sig.words == ("nightly", "rollback")


def test_evidence_splits_words_as_the_index_does() -> None:
    sig = signature("m1", "Rotate the staging credentials before the quarterly audit starts")
    # Hyphens and apostrophes split words as memory_layer.text.WORD does on both sides.
    message = "I'll rotate staging-credentials now, before the quarterly audit's start"
    assert match_message(sig, message) is not None


def test_the_lexical_rules_are_defined_once() -> None:
    word_regex = re.compile(r"""re\.compile\(r["']\[\^\\W_\]\+["']\)""")
    stem_rule = re.compile(r"len\(\w+\) - 3")
    holders = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if word_regex.search(source := path.read_text(encoding="utf-8"))
        or stem_rule.search(source)
        or "whats hows wheres" in source
    }
    assert holders == {"text.py"}


# --- parse_query -------------------------------------------------------------------


def test_parse_query_terms_stems_phrases_and_intents() -> None:
    query = parse_query("  Why does the Deploy fail with ECONNREFUSED? deploy again  ")
    assert query.text == "Why does the Deploy fail with ECONNREFUSED? deploy again"
    assert [t.text for t in query.terms] == ["Deploy", "fail", "ECONNREFUSED"]
    assert [t.stem for t in query.terms] == ["depl", "fail", "econnrefu"]
    assert [t.phrase for t in query.terms] == ['"Deploy"', '"fail"', '"ECONNREFUSED"']
    assert query.intents["error"] == "ECONNREFUSED" and "decision" in query.intents
    assert query.boosts["troubleshooting"].startswith("error intent")
    assert parse_query("Why does the Deploy fail with ECONNREFUSED? deploy again") == query


def test_parse_query_cjk_bigrams_as_fts_phrases() -> None:
    query = parse_query("数据库迁移 deploy")
    assert [t.text for t in query.terms] == ["数据", "据库", "库迁", "迁移", "deploy"]
    assert query.terms[0].phrase == '"数 据"'
    assert textindex.query_terms(query.text) == [t.text for t in query.terms]


def test_without_drops_words_and_keeps_punctuation() -> None:
    query = parse_query("What about Caroline's pottery, caroline?")
    assert query.without({"caroline"}) == "What about 's pottery, ?"
    assert query.without(set()) == query.text
    assert parse_query("").terms == () and parse_query("the of").terms == ()


def test_matched_terms_counts_distinct_terms_by_stem() -> None:
    query = parse_query("failing deploy rollback")
    assert matched_terms(query, "Deployment fails when the VPN is down") == 2
    assert matched_terms(query, "redeploy") == 0


# --- one parse per prompt ------------------------------------------------------------


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every parse_query call, counted through the module attribute callers use."""
    seen: list[str] = []
    real = query_module.parse_query

    def counting(text: str) -> Query:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(query_module, "parse_query", counting)
    return seen


def _prompt_event(prompt: str) -> Any:
    data = {"session_id": "s1", "cwd": PROJECT_DIR, "prompt": prompt}
    return parse_event("UserPromptSubmit", json.dumps(data).encode(), env={})


@pytest.mark.parametrize("with_vectors", [False, True])
def test_a_prompt_is_parsed_once_on_its_way_through_the_hook(
    db: Any, cfg: Any, parses: list[str], with_vectors: bool
) -> None:
    embedder = FakeEmbedder() if with_vectors else None
    for text in (
        "psycopg2 connection refused on 5432: start docker compose db.",
        "psycopg2 connection refused on 5432: the VPN drops the tunnel.",
        "Deploys need the VPN up first.",
    ):
        remember(
            db, text, config=cfg, category="troubleshooting", project=PROJECT_DIR,
            embedder=embedder,
        )
    prompt = "why is the psycopg2 connection refused on 5432"
    reply = prepare(_prompt_event(prompt), db, cfg, embedder=embedder)
    assert "docker compose" in reply.output  # recall and the floor both ran
    assert parses == [prompt]


def test_a_plain_recall_parses_its_query_once(db: Any, cfg: Any, parses: list[str]) -> None:
    embedder = FakeEmbedder()
    for i in range(60):  # enough memories for the embedded query to leave a word out
        remember(db, f"Caroline: ok{i}", config=cfg, project="chat", embedder=embedder)
    remember(db, "Caroline: the pottery class went well", config=cfg, project="chat",
             embedder=embedder)
    results = recall(db, "What about Caroline's pottery?", scope=Scope.for_project("chat"),
                     config=cfg, embedder=embedder)
    assert results[0].explain["vector_query_left_out"] == ["caroline"]
    assert parses == ["What about Caroline's pottery?"]
    parsed = parse_query("pottery class")
    parses.clear()
    recall(db, parsed, scope=Scope.for_project("chat"), config=cfg, embedder=embedder)
    assert parses == []  # a Query is used as it is
