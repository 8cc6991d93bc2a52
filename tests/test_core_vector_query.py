"""Words common to the searched memories are left out of the query's embedding."""

from __future__ import annotations

import copy

import pytest

from memory_layer.memories import remember
from memory_layer.retrieval.search import Scope, _sample_cache, query_term_weights, recall
from memory_layer.retrieval.search import vector_query as build_vector_query
from tests.fakes import FakeEmbedder

TARGET = "Caroline: the pottery workshop at the community centre went really well today"


class RecordingEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return super().embed(texts)


@pytest.fixture(autouse=True)
def _fresh_sample_cache():
    _sample_cache.clear()
    yield
    _sample_cache.clear()


def _conversation(db, cfg, embedder, fillers: int = 59) -> str:
    """A speaker's turns: one long one about pottery, many short ones."""
    for i in range(fillers):
        remember(db, f"Caroline: ok{i}", config=cfg, project="chat", embedder=embedder)
    return remember(db, TARGET, config=cfg, project="chat", embedder=embedder).memory.id


def _vector_only(cfg, **retrieval):
    local = copy.deepcopy(cfg)
    local["retrieval"].update(keyword_weight=0.0, **retrieval)
    return local


def test_common_word_left_out_of_the_embedding(db, cfg):
    embedder = RecordingEmbedder()
    target = _conversation(db, cfg, embedder)
    embedder.seen.clear()
    results = recall(db, "What about Caroline's pottery?", scope=Scope.for_project("chat"),
                     config=cfg, embedder=embedder)
    assert embedder.seen == ["What about 's pottery?"]
    assert results[0].memory.id == target
    assert results[0].explain["vector_query_left_out"] == ["caroline"]


def test_leaving_the_speaker_out_is_what_finds_the_turn(db, cfg, fake_embedder):
    # Vector evidence alone: with the name embedded, every short turn of that speaker
    # looks closer to the question than the long turn that answers it.
    target = _conversation(db, cfg, fake_embedder)
    scope = Scope.for_project("chat")
    with_rule = recall(db, "Caroline pottery", scope=scope, config=_vector_only(cfg),
                       embedder=fake_embedder)
    assert with_rule[0].memory.id == target
    _sample_cache.clear()
    without = recall(db, "Caroline pottery", scope=scope,
                     config=_vector_only(cfg, vector_common_share=1.0), embedder=fake_embedder)
    assert target not in [s.memory.id for s in without[:3]]
    assert without[0].explain["vector_query_left_out"] == []


def test_small_scope_keeps_every_word(db, cfg, fake_embedder):
    _conversation(db, cfg, fake_embedder, fillers=20)  # 21 memories: too few to judge
    terms = query_term_weights(db, "Caroline pottery")
    text, left_out = build_vector_query(db, "Caroline pottery", terms,
                                        Scope.for_project("chat"), 0.2)
    assert (text, left_out) == ("Caroline pottery", [])


def test_query_of_only_common_words_is_embedded_whole(db, cfg, fake_embedder):
    _conversation(db, cfg, fake_embedder)
    terms = query_term_weights(db, "Caroline?")
    assert build_vector_query(db, "Caroline?", terms, Scope.for_project("chat"), 0.2) == (
        "Caroline?", [])


def test_share_is_measured_in_the_searched_scope(db, cfg, fake_embedder):
    # "Caroline" fills project chat but is rare in project other: searching other keeps it.
    _conversation(db, cfg, fake_embedder)
    for i in range(60):
        remember(db, f"deploy note {i} for the billing service", config=cfg, project="other",
                 embedder=fake_embedder)
    remember(db, "Caroline owns the billing deploy", config=cfg, project="other",
             embedder=fake_embedder)
    terms = query_term_weights(db, "Caroline deploy")
    assert build_vector_query(db, "Caroline deploy", terms,
                              Scope.for_project("other", include_global=False), 0.2) == (
        "Caroline", ["deploy"])
    assert build_vector_query(db, "Caroline deploy", terms,
                              Scope.for_project("chat", include_global=False), 0.2) == (
        "deploy", ["caroline"])


def test_sample_follows_a_growing_collection(db, cfg, fake_embedder):
    scope = Scope.for_project("chat")
    _conversation(db, cfg, fake_embedder, fillers=20)
    terms = query_term_weights(db, "Caroline pottery")
    assert build_vector_query(db, "Caroline pottery", terms, scope, 0.2)[1] == []
    for i in range(40):  # the same warm process sees the scope grow past the minimum
        remember(db, f"Caroline: more{i}", config=cfg, project="chat", embedder=fake_embedder)
    assert build_vector_query(db, "Caroline pottery", terms, scope, 0.2)[1] == ["caroline"]


def test_recall_explain_names_the_words_left_out(db, cfg, fake_embedder):
    from click.testing import CliRunner

    from memory_layer.cli import cli

    _conversation(db, cfg, fake_embedder)
    result = CliRunner().invoke(cli, ["recall", "Caroline pottery", "--project", "chat",
                                      "--explain"])
    assert result.exit_code == 0, result.output
    assert ("Left out of the embedded query (in over 20% of the searched memories; keywords "
            "still use them): caroline") in result.output
    lines = result.output.splitlines()
    assert lines[1].startswith("Store answers the query: ")  # the verifier's value
    assert TARGET[:40] in next(line for line in lines if line.startswith("1. "))
