"""The scorer can recover and explore: probation for a sinking memory whose record is not
conclusive, an exploration bonus for rarely tried rivals, and what a person decided
stays decided (a memory a person failed stays down; a person's restore lifts it)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_layer import api
from memory_layer.config import set_value
from memory_layer.errors import ConfigError
from memory_layer.hooks.events import parse_event
from memory_layer.hooks.handlers import handle
from memory_layer.memories import remember
from memory_layer.models import Memory
from memory_layer.outcomes import memory_feedback, restore_sinking
from memory_layer.outcomes.rules import chance_of_holding, may_retry, settings
from memory_layer.retrieval.scoring import Scored, mean_rate, optimistic_rate, rank_in_bands
from memory_layer.storage.records import get_memory, update_memory

PROJECT_DIR = "/nonexistent/shop"  # not a git repo: the project id is the path itself
QUESTION = "docker build fails with no space left on device"


def _add(db: sqlite3.Connection, cfg: dict[str, Any], text: str, **changes: Any) -> Memory:
    memory = remember(
        db, text, config=cfg, category="troubleshooting", project=PROJECT_DIR, embedder=None
    ).memory
    if changes:
        memory = update_memory(db, memory.id, changes, actor="test", action="test")
    return memory


def _agent_top(db: sqlite3.Connection, cfg: dict[str, Any]) -> list[Any]:
    return api.recall(
        db, QUESTION, config=cfg, scope=api.Scope.for_project(PROJECT_DIR), audience=api.AGENT
    )


def _sinking(failures: int, successes: int = 0) -> dict[str, Any]:
    score = max(-1.0, round(0.2 * successes - 0.3 * failures, 6))
    return {"outcome_score": score, "failure_count": failures, "success_count": successes}


@pytest.fixture
def rivals(db: sqlite3.Connection, cfg: dict[str, Any]) -> tuple[Memory, Memory]:
    good = _add(db, cfg, "docker build no space left on device: prune unused images")
    bad = _add(db, cfg, "docker build no space left on device: delete the systemd journal")
    return good, bad


# --- probation ---------------------------------------------------------------------------


def test_break_even_and_the_chance_of_holding() -> None:
    assert settings().break_even == pytest.approx(0.6)  # +0.2 / -0.3: 60% holds its ground
    assert chance_of_holding(0, 2, 0.6) == pytest.approx(0.4**3)
    assert chance_of_holding(0, 3, 0.6) < 0.05 < chance_of_holding(0, 2, 0.6)
    assert chance_of_holding(14, 2, 0.6) > 0.5


def test_a_sinking_memory_comes_back_when_every_rival_sinks_too(
    db: sqlite3.Connection, cfg: dict[str, Any], rivals: tuple[Memory, Memory]
) -> None:
    good, bad = rivals
    update_memory(db, good.id, _sinking(2), actor="test", action="outcome")
    # A rival that is not sinking answers as well: the sinking one stays withheld.
    assert [s.memory.id for s in _agent_top(db, cfg)] == [bad.id]
    # Every rival sinks: the one whose record is not conclusive is tried again, flagged.
    update_memory(db, bad.id, _sinking(4, 1), actor="test", action="outcome")
    assert not may_retry(get_memory(db, bad.id), cfg)  # 1 success, 4 failures: known to fail
    results = _agent_top(db, cfg)
    assert [s.memory.id for s in results] == [good.id]
    assert "probation" in results[0].explain
    flags = api.agent_flags(results[0].memory, cfg)
    assert any(f.startswith("ON PROBATION: failed 2 of 2") for f in flags)
    # The person-facing recall still withholds it unless asked (--include-sinking).
    person = api.recall(db, QUESTION, config=cfg, scope=api.Scope.for_project(PROJECT_DIR))
    assert person == []


def test_the_prompt_hook_shows_a_memory_on_probation_flagged(
    db: sqlite3.Connection, cfg: dict[str, Any], rivals: tuple[Memory, Memory]
) -> None:
    good, bad = rivals
    update_memory(db, good.id, _sinking(2), actor="test", action="outcome")
    update_memory(db, bad.id, _sinking(4), actor="test", action="outcome")
    data = {"session_id": "s1", "cwd": PROJECT_DIR, "prompt": QUESTION}
    out = handle(parse_event("UserPromptSubmit", json.dumps(data).encode(), env={}), db, cfg)
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "prune unused images" in text and "systemd journal" not in text
    assert "[ON PROBATION: failed 2 of 2 credited tries" in text
    rows = db.execute("SELECT memory_id FROM usage WHERE session_id = 's1'").fetchall()
    assert [r[0] for r in rows] == [good.id]  # a surfacing, so its outcome counts


def test_a_memory_a_person_failed_stays_down(
    db: sqlite3.Connection, cfg: dict[str, Any], rivals: tuple[Memory, Memory]
) -> None:
    good, bad = rivals
    for _ in range(2):
        memory_feedback(db, good.id, False, actor="me", source="cli")
    update_memory(db, bad.id, _sinking(4), actor="test", action="outcome")
    assert may_retry(get_memory(db, good.id), cfg)  # by its counts alone it could be
    assert _agent_top(db, cfg) == []  # but a person failed it: no probation
    # An agent's report is not a person's verdict.
    other = _add(db, cfg, "docker build no space left on device: move the data root")
    for _ in range(2):
        memory_feedback(db, other.id, False, actor="codex", source="mcp:codex")
    assert [s.memory.id for s in _agent_top(db, cfg)] == [other.id]
    # Sinking stays reversible by a person.
    restore_sinking(db, good.id, actor="me")
    assert good.id in [s.memory.id for s in _agent_top(db, cfg)]


def test_probation_can_be_turned_off(
    db: sqlite3.Connection, cfg: dict[str, Any], rivals: tuple[Memory, Memory]
) -> None:
    good, bad = rivals
    update_memory(db, good.id, _sinking(2), actor="test", action="outcome")
    update_memory(db, bad.id, _sinking(4), actor="test", action="outcome")
    set_value("outcomes.probation", False)
    from memory_layer.config import load_config

    assert _agent_top(db, load_config()) == []


# --- exploration --------------------------------------------------------------------------


def _scored(memory_id: str, similarity: float, score: float, **counts: Any) -> Scored:
    now = datetime(2026, 6, 1, tzinfo=UTC).isoformat()
    memory = Memory(
        id=memory_id, text=memory_id, category="troubleshooting", project=None, tags=(),
        source="user", confidence=0.8, outcome_score=score,
        success_count=counts.get("successes", 0), failure_count=counts.get("failures", 0),
        use_count=counts.get("successes", 0), last_used_at=None, proven_at=None,
        status="active", created_at=now, updated_at=now,
    )  # fmt: skip
    blend = 0.35 * similarity + 0.25 * (score + 1) / 2 + 0.15 * counts.get("frequency", 0.0)
    return Scored(memory, blend, {"similarity": similarity})


def test_a_rarely_tried_rival_gets_tried_before_a_mediocre_incumbent() -> None:
    def band() -> list[Scored]:
        return [
            _scored("established", 0.80, 0.25, successes=6, failures=3, frequency=0.66),
            _scored("newcomer", 0.78, 0.0),
            _scored("sinking", 0.79, -0.6, failures=2),
        ]

    assert [s.memory.id for s in rank_in_bands(band(), 0.1)][0] == "established"
    ranked = rank_in_bands(band(), 0.1, explore=0.2)
    assert [s.memory.id for s in ranked] == ["newcomer", "established", "sinking"]
    why = ranked[0].explain["explore"]
    assert why["leader"] == "established" and why["optimistic_rate"] > why["leader_rate"]
    # Never a sinking one, however rarely tried (only probation shows it, flagged); one
    # unlucky failure in two tries does not rule a newcomer out; too far is no rival.
    alone = [band()[0], band()[2]]
    assert [s.memory.id for s in rank_in_bands(alone, 0.1, explore=0.2)][0] == "established"
    unlucky = [band()[0], _scored("newcomer", 0.78, -0.1, successes=1, failures=1)]
    assert rank_in_bands(unlucky, 0.1, explore=0.2)[0].memory.id == "newcomer"
    assert "explore" not in ranked[2].explain
    far = [*band()[:1], _scored("newcomer", 0.50, 0.0)]
    assert [s.memory.id for s in rank_in_bands(far, 0.1, explore=0.2)][0] == "established"


def test_a_strong_record_is_not_displaced_by_an_untried_rival() -> None:
    for successes in (5, 10, 40):
        band = [
            _scored("proven", 0.80, 1.0, successes=successes, frequency=1.0),
            _scored("untried", 0.80, 0.0),
        ]
        ranked = rank_in_bands(band, 0.1, explore=0.2)
        assert [s.memory.id for s in ranked] == ["proven", "untried"]


def test_optimistic_rate_shrinks_with_tries_and_needs_rivals_tried() -> None:
    memory = _scored("m", 0.5, 0.0).memory
    assert optimistic_rate(memory, 0, 0.2) == mean_rate(memory) == 0.5
    assert optimistic_rate(memory, 10, 0.2) > optimistic_rate(memory, 2, 0.2)
    tried = _scored("t", 0.5, 0.4, successes=8).memory
    assert optimistic_rate(tried, 10, 0.2) - mean_rate(tried) < optimistic_rate(
        memory, 10, 0.2
    ) - mean_rate(memory)


def test_explore_is_validated() -> None:
    with pytest.raises(ConfigError, match="outcomes.explore"):
        settings({"outcomes": {"explore": 3}})


def test_a_rival_shown_first_but_never_acted_on_stops_being_explored() -> None:
    def band() -> list[Scored]:
        return [
            _scored("established", 0.80, 0.25, successes=6, failures=3, frequency=0.66),
            _scored("ignored", 0.70, 0.0),  # within reach, below the band
        ]

    assert rank_in_bands(band(), 0.1, explore=0.2)[0].memory.id == "ignored"
    shown = {"ignored": 5}  # the agent was shown it first five times and never used it
    assert rank_in_bands(band(), 0.1, explore=0.2, shown_first=shown)[0].memory.id == (
        "established"
    )


def test_recall_explain_says_when_a_rival_was_tried_first(
    db: sqlite3.Connection, cfg: dict[str, Any], rivals: tuple[Memory, Memory]
) -> None:
    from click.testing import CliRunner

    from memory_layer.cli import cli

    good, bad = rivals
    update_memory(
        db,
        bad.id,
        {"outcome_score": 0.3, "success_count": 6, "failure_count": 3, "use_count": 6},
        actor="test",
        action="outcome",
    )
    top = _agent_top(db, cfg)[0]
    assert top.memory.id == good.id and top.explain["explore"]["leader"] == bad.id
    out = CliRunner().invoke(
        cli, ["recall", QUESTION, "-p", PROJECT_DIR, "--explain", "--keyword-only"]
    )
    assert out.exit_code == 0, out.output
    assert "tried first (outcomes.explore)" in out.output


def test_the_chance_of_holding_survives_a_long_record() -> None:
    # math.comb over ~1,000 tries overflows a float; the gate must not fail closed.
    assert 0.0 <= chance_of_holding(900, 700, 0.6) <= 1.0
    assert chance_of_holding(2_000, 0, 0.6) == pytest.approx(1.0)
    assert chance_of_holding(0, 3_000, 0.6) == pytest.approx(0.0, abs=1e-12)
