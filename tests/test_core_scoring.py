"""The blend against hand-computed cases, intent boosts and deterministic order."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from memory_layer.memories import remember
from memory_layer.models import iso, parse_time, utcnow
from memory_layer.retrieval.intent import boosted_categories, detect_intents
from memory_layer.retrieval.scoring import blend, frequency_term, fuse, outcome_term, quality
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import update_memory


def test_terms_by_hand():
    assert outcome_term(0.0) == 0.5
    assert outcome_term(1.0) == 1.0
    assert outcome_term(-1.0) == 0.0
    assert frequency_term(0, 20) == 0.0
    assert frequency_term(20, 20) == pytest.approx(1.0)
    assert frequency_term(3, 20) == pytest.approx(math.log(4) / math.log(21))
    assert frequency_term(500, 20) == 1.0
    assert fuse(0.0, 0.6) == pytest.approx(0.6)
    assert fuse(1.0, 0.2) == pytest.approx(1.0)
    assert fuse(0.5, 0.5) == pytest.approx(0.75)
    assert fuse(0.4, None) == pytest.approx(0.4)


def test_blend_matches_hand_computation(db, cfg):
    now = utcnow()
    created = now - timedelta(days=30)
    memory = remember(
        db,
        "Use ruff for linting",
        config=cfg,
        category="tool_preference",
        project="p",
        confidence=0.9,
        created_at=iso(created),
        now=now,
    ).memory
    memory = update_memory(db, memory.id, {"outcome_score": 0.4, "use_count": 3}, actor="test")
    scored = blend(memory, 0.8, config=cfg, now=now, boosts_for_query={})
    expected = (
        0.35 * 0.8 + 0.25 * 0.7 + 0.15 * 0.5 + 0.15 * (math.log(4) / math.log(21)) + 0.10 * 0.9
    )
    assert scored.score == pytest.approx(expected, abs=1e-6)
    assert scored.scores["recency"] == pytest.approx(0.5, abs=1e-6)  # one half-life old
    assert scored.scores["boost"] == 1.0


def test_boost_multiplies_when_intent_matches(db, cfg):
    now = utcnow()
    memory = remember(
        db,
        "ECONNREFUSED means postgres is down",
        config=cfg,
        category="troubleshooting",
        project="p",
        now=now,
    ).memory
    boosts = boosted_categories(detect_intents("why do I get ECONNREFUSED"))
    plain = blend(memory, 0.5, config=cfg, now=now, boosts_for_query={})
    boosted = blend(memory, 0.5, config=cfg, now=now, boosts_for_query=boosts)
    assert boosted.scores["boost"] == 1.5
    assert boosted.score == pytest.approx(plain.score * 1.5)
    assert "ECONNREFUSED" in boosted.explain["boost_reason"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("pytest fails with ImportError", {"troubleshooting", "gotcha", "workaround"}),
        ("ECONNREFUSED on startup", {"troubleshooting", "gotcha", "workaround"}),
        ("why did we choose Postgres over MySQL", {"decision"}),
        ("branch naming convention", {"convention", "pattern"}),
        ("what command runs the tests", {"command"}),
        ("how does the auth service talk to billing", {"architecture"}),
        ("any gotchas with pg_dump", {"gotcha"}),
        ("which editor do I prefer", {"preference"}),
        ("is there a workaround for the flaky test", {"troubleshooting", "gotcha", "workaround"}),
        ("e2e suite fails intermittently", {"troubleshooting", "gotcha", "workaround"}),
    ],
)
def test_intent_detection(query, expected):
    assert expected <= set(boosted_categories(detect_intents(query)))


def test_no_intent_for_plain_statement():
    assert detect_intents("tabs versus spaces") == {"decision": "versus"}
    assert detect_intents("hello there") == {}


def test_configured_boost_and_weights_apply(db, cfg):
    from memory_layer.config import load_config, set_value

    set_value("boosts.gotcha", "2.0")
    set_value("weights.similarity", "1.0")
    cfg = load_config()
    now = utcnow()
    memory = remember(
        db, "pg_dump gotcha", config=cfg, category="gotcha", project="p", now=now
    ).memory
    scored = blend(memory, 1.0, config=cfg, now=now, boosts_for_query={"gotcha": "caution intent"})
    assert scored.scores["boost"] == 2.0
    assert scored.score == pytest.approx(2.0 * (1.0 + 0.25 * 0.5 + 0.15 + 0.10 * 0.8))


def test_retrieval_does_not_refresh_recency(db, cfg):
    now = utcnow()
    old = remember(
        db,
        "docker compose down -v wipes the database volume",
        config=cfg,
        category="gotcha",
        project="p",
        created_at=iso(now - timedelta(days=60)),
        now=now,
    ).memory
    for _ in range(3):
        recall(db, "docker volume wiped", scope=Scope.for_project("p"), config=cfg)
    again = recall(db, "docker volume wiped", scope=Scope.for_project("p"), config=cfg)[0]
    assert again.memory.id == old.id
    assert again.scores["recency"] == pytest.approx(0.25, abs=1e-3)
    assert again.memory.use_count == 0


def test_proven_at_restarts_recency(db, cfg):
    now = utcnow()
    memory = remember(
        db,
        "Run alembic upgrade head before tests",
        config=cfg,
        category="command",
        project="p",
        created_at=iso(now - timedelta(days=90)),
        now=now,
    ).memory
    memory = update_memory(
        db, memory.id, {"proven_at": iso(now - timedelta(days=30))}, actor="test"
    )
    scored = blend(memory, 0.5, config=cfg, now=now, boosts_for_query={})
    assert scored.scores["recency"] == pytest.approx(0.5, abs=1e-3)
    assert parse_time(memory.proven_at) < now


def test_ties_break_deterministically(db, cfg, keyword_only):
    now = utcnow()
    ids = []
    for n in range(6):
        ids.append(
            remember(
                db,
                f"Deploy step {n}: run make deploy-{n} from the infra repo",
                config=cfg,
                category="command",
                project="p",
                now=now,
                dedupe=False,
            ).memory.id
        )
    first = [
        s.memory.id
        for s in recall(db, "deploy infra repo", scope=Scope.for_project("p"), config=cfg, now=now)
    ]
    for _ in range(5):
        again = [
            s.memory.id
            for s in recall(
                db, "deploy infra repo", scope=Scope.for_project("p"), config=cfg, now=now
            )
        ]
        assert again == first
    assert sorted(first) == sorted(ids)


def test_weak_match_with_strong_record_does_not_outrank_the_answer(db, cfg, keyword_only):
    now = utcnow()
    proven = remember(db, "Merges allowed on the dev branch: fast-forward only "
                      "(git config pull.rebase true)",
                      config=cfg, category="convention", project="p", now=now).memory
    update_memory(db, proven.id, {"outcome_score": 1.0, "use_count": 40, "confidence": 1.0},
                  actor="test")
    answer = remember(db, "The dev server accepts cross-site calls from http://localhost:5173 "
                      "(CORS_ALLOWED_ORIGINS in settings/dev.py)", config=cfg,
                      category="environment", project="p", confidence=0.3, now=now,
                      created_at=iso(now - timedelta(days=45))).memory
    hits = recall(db, "which origins are allowed for CORS on the dev server",
                  scope=Scope.for_project("p"), config=cfg, now=now)
    assert hits[0].memory.id == answer.id
    weak = [h for h in hits if h.memory.id == proven.id]
    assert not weak or "below_relative_floor" in weak[0].explain


def test_quality_is_the_blend_without_similarity(db, cfg):
    memory = remember(db, "Run `make dev` to start the stack.", config=cfg,
                      category="command", project="p", embedder=None).memory
    now = utcnow() + timedelta(days=40)
    scored = blend(memory, 0.0, config=cfg, now=now, boosts_for_query={})
    weights = cfg["weights"]
    own = sum(float(weights[name]) for name in ("outcome", "recency", "frequency", "confidence"))
    category_weight = float(cfg["hooks"]["category_weights"].get("command", 1.0))
    assert quality(memory, cfg, now) == pytest.approx(scored.score / own * category_weight)
