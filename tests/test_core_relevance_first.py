"""Relevance first, priority second: boosts and priors reorder only comparable matches,
and a project's own name is no evidence inside its scope."""

from __future__ import annotations

from datetime import timedelta

from memory_layer.api import remember
from memory_layer.models import utcnow
from memory_layer.retrieval.query import parse_query, project_words, within_project
from memory_layer.retrieval.scoring import Scored, rank_in_bands
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import update_memory

PROJECT = "github.com/apache/airflow"


def _scored(memory_id: str, similarity: float, score: float) -> Scored:
    from memory_layer.models import Memory

    memory = Memory(
        id=memory_id, text=memory_id, category="general", project=None, tags=(), source="t",
        confidence=0.8, outcome_score=0.0, success_count=0, failure_count=0, use_count=0,
        last_used_at=None, proven_at=None, status="active", created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00", embedding_model=None,
    )
    return Scored(memory, score, {"similarity": similarity}, {})


def test_a_boost_reorders_comparable_matches_only() -> None:
    exact = _scored("exact", 1.0, 0.70)
    boosted_close = _scored("close", 0.95, 0.90)  # comparable: the boost may win
    boosted_weak = _scored("weak", 0.65, 0.95)  # far weaker match: it must not
    ranked = rank_in_bands([boosted_weak, exact, boosted_close], band=0.1)
    assert [s.memory.id for s in ranked] == ["close", "exact", "weak"]
    assert ranked[2].explain["band"]["number"] == 2
    # band >= 1 is the plain blend order, as before.
    assert [s.memory.id for s in rank_in_bands([exact, boosted_weak], 1.0)] == ["weak", "exact"]


def test_the_exact_answer_beats_a_boosted_gotcha(db, cfg) -> None:  # type: ignore[no-untyped-def]
    answer = remember(
        db, "Raise AirflowException only for task failures; a bad argument raises ValueError.",
        config=cfg, source="cli", category="convention", project=PROJECT,
    ).memory
    gotcha = remember(
        db, "A test that fails on a bad fixture: do not use caplog under xdist.",
        config=cfg, source="cli", category="gotcha", project=PROJECT,
    ).memory
    # The gotcha is proven and fresh, the answer old: priors favour the gotcha.
    update_memory(db, gotcha.id, {"outcome_score": 1.0, "use_count": 20}, actor="t", action="t")
    old = (utcnow() - timedelta(days=120)).isoformat()
    update_memory(db, answer.id, {"created_at": old}, actor="t", action="t")
    question = "Should I raise AirflowException for a bad argument? It fails the test."
    scope = Scope.for_project(PROJECT)
    # Keyword-only: the similarities are the keyword evidence alone (answer ~0.8,
    # gotcha ~0.27), above the relative floor, so only the band keeps them apart.
    plain = {**cfg, "retrieval": {**cfg["retrieval"], "relevance_band": 1.0}}
    # The plain blend lets the proven, boosted gotcha outrank the exact answer ...
    assert recall(db, question, scope=scope, config=plain)[0].memory.id == gotcha.id
    # ... relevance bands do not.
    assert recall(db, question, scope=scope, config=cfg)[0].memory.id == answer.id
    assert recall(db, question, scope=scope, config=cfg)[1].explain["band"]["number"] == 2


def test_the_project_name_is_taken_out_inside_its_scope() -> None:
    assert project_words(PROJECT) == {"apache", "airflow"}
    assert project_words("/home/me/shop") == {"me", "shop"}
    query = within_project(parse_query("How do I set up the pre-commit hooks for Airflow?"), PROJECT)
    assert "airflow" not in {t.text.lower() for t in query.terms}
    assert query.text == "How do I set up the pre-commit hooks for ?"
    # A query that is nothing but the name keeps it; outside a project nothing changes.
    only = parse_query("Airflow")
    assert within_project(only, PROJECT) is only
    assert within_project(only, None) is only
