"""Outcome learning core: close rules, credit by evidence, idempotence, undo, floor."""

from __future__ import annotations

from typing import Any

import pytest

from memory_layer import outcomes
from memory_layer.config import set_value
from memory_layer.errors import ConfigError
from memory_layer.listing import details
from memory_layer.outcomes.claude import on_task_signal
from memory_layer.outcomes.rules import close_outcome
from memory_layer.storage.records import get_memory, history
from tests.test_outcomes_support import (
    add_memory,
    claude_event,
    event,
    session,
    surface,
    task_update,
)


@pytest.fixture(autouse=True)
def _no_shared_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)


# --- close reasons: whole words, markers, metadata ---------------------------------


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("Fixed error handling", "success"),  # bd's substring check says failure
        ("Closed", "success"),
        ("Fixed: serialized refresh behind mutex; tests green", "success"),
        ("Timeout handling added", "success"),
        ("Abandoned: approach failed load test (timeout)", "failure"),
        ("failed", "failure"),
        ("Build FAILED on CI", "failure"),
        ("wontfix", "failure"),
        ("Won't fix: upstream behaviour", "failure"),
        ("won’t fix", "failure"),
        ("cancelled by product", "failure"),
        ("Canceled", "failure"),
        ("rejected in review", "failure"),
        ("abandoned", "failure"),
        ("unfailed retries now pass", "success"),  # not a whole word
        ("prefailed check removed", "success"),
        ("Rejected the old approach; new one works [outcome:success]", "success"),
        ("Looks done [outcome:failed]", "failure"),
        ("[Outcome: Failure] reverted", "failure"),
        ("Fixed the failed login test", "success"),  # what was fixed, not the ending
        ("fix 3 failed jobs in the nightly run", "success"),
        ("Resolved all rejected review comments", "success"),
        ("Fix failed", "failure"),  # no object: the fix failed
        ("Tried to fix, failed", "failure"),
        ("Fixed the parser but the deploy failed", "failure"),
    ],
)
def test_close_reason_rules(reason: str, expected: str) -> None:
    assert close_outcome(reason) == expected


def test_metadata_outcome_wins_over_reason() -> None:
    assert close_outcome("Fixed it", {"outcome": "failed"}) == "failure"
    assert close_outcome("cancelled", {"outcome": "success"}) == "success"


# --- helpers -------------------------------------------------------------------------


def _complete(db: Any, session_id: str, task: str, minute: float, **extra: Any) -> Any:
    return on_task_signal(
        db, claude_event("TaskCompleted", session_id, minute, task_id=task, **extra)
    )


def _create(db: Any, session_id: str, task: str, minute: float) -> Any:
    return on_task_signal(
        db,
        claude_event("TaskCreated", session_id, minute, task_id=task, task_subject="Fix db"),
    )


@pytest.fixture
def rivals(db: Any, cfg: dict[str, Any]) -> dict[str, str]:
    """A good fix and a wrong fix for the same error, both shown in session s1."""
    good = add_memory(
        db, cfg, "ECONNREFUSED 5432 in tests: start the database with `docker compose up -d db`"
    )
    bad = add_memory(db, cfg, "ECONNREFUSED 5432 in tests: set `PGHOST=127.0.0.1` in .env")
    other = add_memory(db, cfg, "Release notes live in `docs/CHANGELOG.md`", category="convention")
    session(db, "s1")
    event(db, "s1", 1, "prompt", text="tests fail with ECONNREFUSED 5432")
    surface(db, good, "s1", 1)
    surface(db, bad, "s1", 1)
    return {"good": good, "bad": bad, "other": other}


# --- crediting ------------------------------------------------------------------------


def test_rival_fixes_only_the_one_acted_on_gains(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    event(db, "s1", 4, tool="Bash", command="pytest -x")
    result = _complete(db, "s1", "1", 5)
    assert result.action == "credited"
    good, bad, other = (get_memory(db, rivals[k]) for k in ("good", "bad", "other"))
    assert good.outcome_score == pytest.approx(0.2)
    assert (good.success_count, good.use_count) == (1, 1)
    assert good.proven_at is not None
    assert bad.outcome_score == 0.0  # shown, never acted on: shown_weight 0
    assert (bad.success_count, bad.use_count, bad.proven_at) == (0, 0, None)
    assert other.outcome_score == 0.0  # never surfaced
    weights = {c["memory_id"]: c["weight"] for c in result.credits}
    assert weights == {rivals["good"]: 1.0, rivals["bad"]: 0.0}


def test_shown_weight_is_configurable(db: Any, rivals: dict[str, str]) -> None:
    set_value("outcomes.shown_weight", 0.25)
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    _complete(db, "s1", "1", 5)
    assert get_memory(db, rivals["bad"]).outcome_score == pytest.approx(0.05)
    assert get_memory(db, rivals["good"]).outcome_score == pytest.approx(0.2)


def test_edit_evidence_and_failure_penalty(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    # Started, worked on, then deleted: a failure for the memory acted on.
    on_task_signal(db, task_update("s1", "1", 2.5, "in_progress"))
    event(db, "s1", 3, tool="Edit", file_path="/repo/.env", text="PGHOST=127.0.0.1\n")
    result = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s1",
            6,
            tool_name="TaskUpdate",
            tool_input={"taskId": "1", "status": "deleted"},
            tool_response={"success": True, "taskId": "1", "statusChange": {"to": "deleted"}},
        ),
    )
    assert result.outcome == "failure"
    bad = get_memory(db, rivals["bad"])
    assert bad.outcome_score == pytest.approx(-0.3)
    assert (bad.failure_count, bad.success_count, bad.use_count) == (1, 0, 0)
    assert get_memory(db, rivals["good"]).outcome_score == 0.0
    evidence = next(c for c in result.credits if c["memory_id"] == rivals["bad"])["evidence"]
    assert any(e["kind"] == "edit" for e in evidence)


def test_assistant_citing_the_memory_counts(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, "assistant", text=f"Per memory {rivals['good'][:8]} I started the db.")
    _complete(db, "s1", "1", 5)
    assert get_memory(db, rivals["good"]).outcome_score == pytest.approx(0.2)
    assert get_memory(db, rivals["bad"]).outcome_score == 0.0


def test_acting_before_the_memory_was_shown_is_not_evidence(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Reset the cache with `make clean-cache`")
    session(db, "s2")
    event(db, "s2", 1, "prompt", text="cache is stale")
    _create(db, "s2", "1", 1.5)
    event(db, "s2", 2, tool="Bash", command="make clean-cache")
    surface(db, mid, "s2", 3)  # shown only after the command ran
    event(db, "s2", 4, tool="Bash", command="ls")
    _complete(db, "s2", "1", 5)
    assert get_memory(db, mid).outcome_score == 0.0


def test_unobserved_session_gets_the_unobserved_weight(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Use the staging bucket for fixtures")
    session(db, "s3")
    _create(db, "s3", "7", 1)
    surface(db, mid, "s3", 2, kind="mcp_search")
    _complete(db, "s3", "7", 3)  # no tool or assistant events were recorded at all
    assert get_memory(db, mid).outcome_score == pytest.approx(0.1)


# --- idempotence, reopen, correction, undo -------------------------------------------


def test_replaying_the_same_close_changes_nothing(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    _complete(db, "s1", "1", 5)
    ops = len(history(db, rivals["good"]))
    again = _complete(db, "s1", "1", 5)
    also = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s1",
            5.5,
            tool_name="TaskUpdate",
            tool_input={"taskId": "1", "status": "completed"},
            tool_response={
                "success": True,
                "taskId": "1",
                "statusChange": {"from": "in_progress", "to": "completed"},
            },
        ),
    )
    assert again.action == also.action == "unchanged"
    good = get_memory(db, rivals["good"])
    assert good.outcome_score == pytest.approx(0.2)
    assert good.success_count == 1
    assert len(history(db, rivals["good"])) == ops
    live = db.execute(
        "SELECT count(*) FROM task_credits WHERE memory_id = ? AND reversed_at IS NULL",
        [rivals["good"]],
    ).fetchone()[0]
    assert live == 1


def test_stale_events_are_ignored(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    _complete(db, "s1", "1", 5)
    # An in_progress update older than the completion (a late or replayed event).
    late = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s1",
            4,
            tool_name="TaskUpdate",
            tool_input={"taskId": "1", "status": "in_progress"},
            tool_response={"success": True, "taskId": "1"},
        ),
    )
    assert late.action == "unchanged"
    assert get_memory(db, rivals["good"]).outcome_score == pytest.approx(0.2)


def test_reopen_reverses_then_recompletion_credits_again(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    _complete(db, "s1", "1", 5)
    before = get_memory(db, rivals["good"])
    reopened = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s1",
            6,
            tool_name="TaskUpdate",
            tool_input={"taskId": "1", "status": "in_progress"},
            tool_response={
                "success": True,
                "taskId": "1",
                "statusChange": {"from": "completed", "to": "in_progress"},
            },
        ),
    )
    assert reopened.action == "reopened"
    after = get_memory(db, rivals["good"])
    assert after.outcome_score == 0.0
    assert (after.success_count, after.use_count, after.proven_at) == (0, 0, None)
    assert before.proven_at is not None
    again = _complete(db, "s1", "1", 8)
    assert again.action == "credited"
    assert get_memory(db, rivals["good"]).outcome_score == pytest.approx(0.2)


def test_clamping_and_exact_undo(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Run `npm ci` not `npm install` in CI")
    db.execute("UPDATE memories SET outcome_score = 0.9 WHERE id = ?", [mid])
    session(db, "s4")
    _create(db, "s4", "1", 1)
    surface(db, mid, "s4", 1)
    event(db, "s4", 2, tool="Bash", command="npm ci")
    result = _complete(db, "s4", "1", 3)
    assert get_memory(db, mid).outcome_score == 1.0  # clamped, not 1.1
    assert result.credits[0]["applied"] == pytest.approx(0.1)
    undone = outcomes.undo_outcome(db, result.task_id, actor="tester")
    assert undone.action == "undone"
    memory = get_memory(db, mid)
    assert memory.outcome_score == pytest.approx(0.9)
    assert (memory.success_count, memory.use_count, memory.proven_at) == (0, 0, None)
    ops = [op for op in history(db, mid) if op.action.startswith("outcome")]
    assert [op.action for op in ops] == ["outcome", "outcome_undo"]
    assert ops[0].context["task"] == result.task_id
    assert ops[0].context["source"] == "hook:TaskCompleted"
    assert ops[0].old_value["outcome_score"] == pytest.approx(0.9)
    assert ops[0].new_value["outcome_score"] == 1.0
    assert ops[1].new_value["outcome_score"] == pytest.approx(0.9)


def test_lower_clamp(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Bump `max_connections` to fix pool exhaustion")
    db.execute("UPDATE memories SET outcome_score = -0.9 WHERE id = ?", [mid])
    result = outcomes.memory_feedback(db, mid, False, actor="tester", source="cli")
    assert get_memory(db, mid).outcome_score == -1.0
    assert result["applied"] == pytest.approx(-0.1)


def test_correct_outcome_undoes_then_redoes(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    result = _complete(db, "s1", "1", 5)
    fixed = outcomes.correct_outcome(db, result.task_id, False, actor="tester")
    assert fixed.action == "corrected"
    good = get_memory(db, rivals["good"])
    assert good.outcome_score == pytest.approx(-0.3)
    assert (good.success_count, good.failure_count, good.use_count) == (0, 1, 0)
    assert good.proven_at is None
    # record_outcome with the same verdict again is a no-op; the other verdict corrects.
    assert outcomes.record_outcome(db, "1", False, source="cli", actor="t").action == "unchanged"
    back = outcomes.record_outcome(db, "1", True, source="cli", actor="t")
    assert back.action == "corrected"
    assert get_memory(db, rivals["good"]).outcome_score == pytest.approx(0.2)


def test_manual_record_closes_an_open_task(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    result = outcomes.record_outcome(db, "1", True, source="cli", actor="me", reason="it works")
    assert result.action == "credited"
    assert get_memory(db, rivals["good"]).outcome_score == pytest.approx(0.2)
    detail = outcomes.task_detail(db, result.task_id)
    assert detail["outcome"] == "success"
    assert {c["memory_id"] for c in detail["credits"]} == {rivals["good"], rivals["bad"]}


def test_unknown_task_is_a_named_error(db: Any) -> None:
    with pytest.raises(outcomes.UnknownTask, match="tasks list"):
        outcomes.record_outcome(db, "nope", True, source="cli", actor="me")


def test_in_progress_at_session_end_stays_open(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s1",
            3,
            tool_name="TaskUpdate",
            tool_input={"taskId": "1", "status": "in_progress"},
            tool_response={"success": True, "taskId": "1"},
        ),
    )
    event(db, "s1", 4, tool="Bash", command="docker compose up -d db")
    on_task_signal(db, claude_event("SessionEnd", "s1", 5, reason="prompt_input_exit"))
    task = outcomes.list_tasks(db)[0]
    assert (task["status"], task["outcome"], task["credits"]) == ("in_progress", None, 0)
    assert task["closed_at"] is None
    assert get_memory(db, rivals["good"]).outcome_score == 0.0


# --- floor, proven, notes, feedback, series ------------------------------------------


def test_sinking_floor_withholds_and_restores(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Set `PGHOST=127.0.0.1` for ECONNREFUSED")
    outcomes.memory_feedback(db, mid, False, actor="t", source="cli")
    assert not outcomes.is_sinking(get_memory(db, mid), cfg)
    outcomes.memory_feedback(db, mid, False, actor="t", source="cli")
    memory = get_memory(db, mid)
    assert memory.outcome_score == pytest.approx(-0.6)
    assert outcomes.is_sinking(memory, cfg)
    notes = details(db, mid)["notes"]
    assert any(n.startswith("sinking:") for n in notes)
    restored = outcomes.restore_sinking(db, mid, actor="t")
    assert restored.outcome_score == 0.0 and not outcomes.is_sinking(restored, cfg)
    assert restored.failure_count == 2  # the record stays; only the score is lifted


def test_floor_is_configurable_and_validated(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Some advice")
    outcomes.memory_feedback(db, mid, False, actor="t", source="cli")
    set_value("outcomes.floor", -0.2)
    from memory_layer.config import load_config

    assert outcomes.is_sinking(get_memory(db, mid), load_config())
    with pytest.raises(ConfigError):
        outcomes.settings({"outcomes": {"failure_delta": 0.3}})


def test_proven_marking(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Use `uv run pytest -x`")
    outcomes.memory_feedback(db, mid, True, actor="t", source="cli")
    assert not outcomes.is_proven(get_memory(db, mid), cfg)
    outcomes.memory_feedback(db, mid, True, actor="t", source="cli")
    assert outcomes.is_proven(get_memory(db, mid), cfg)
    outcomes.memory_feedback(db, mid, False, actor="t", source="cli")
    outcomes.memory_feedback(db, mid, False, actor="t", source="cli")
    assert not outcomes.is_proven(get_memory(db, mid), cfg)


def test_show_notes_name_the_crediting_task(db: Any, rivals: dict[str, str]) -> None:
    _create(db, "s1", "1", 2)
    event(db, "s1", 3, tool="Bash", command="docker compose up -d db")
    result = _complete(db, "s1", "1", 5)
    notes = details(db, rivals["good"])["notes"]
    assert (
        f"credited by task {result.task_id}: +0.20 (success, ran `docker compose up -d db`)"
        in notes
    )
    history_rows = outcomes.memory_outcomes(db, rivals["good"])
    assert history_rows[0]["task_id"] == result.task_id
    assert history_rows[0]["applied"] == pytest.approx(0.2)
    assert not [n for n in details(db, rivals["bad"])["notes"] if n.startswith("credited")]


def test_memory_feedback_and_undo_credit(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Prefer `rg` over grep")
    credit = outcomes.memory_feedback(db, mid, True, actor="me", source="cli")
    assert get_memory(db, mid).outcome_score == pytest.approx(0.2)
    outcomes.undo_credit(db, credit["id"], actor="me")
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.success_count, memory.use_count) == (0.0, 0, 0)


def test_learning_series_counts_days(db: Any, rivals: dict[str, str]) -> None:
    from memory_layer.models import iso, utcnow

    outcomes.memory_feedback(db, rivals["good"], True, actor="t", source="cli")
    outcomes.memory_feedback(db, rivals["good"], True, actor="t", source="cli")
    now = iso(utcnow())
    on_task_signal(db, claude_event("TaskCreated", "s1", 0, task_id="9", at=now))
    on_task_signal(db, claude_event("TaskCompleted", "s1", 0, task_id="9", at=now))
    series = outcomes.learning_series(db, days=3)
    assert len(series) == 3
    today = series[-1]
    assert (today["successes"], today["failures"]) == (1, 0)
    assert today["proven"] == 1 and today["memories"] == 3
    assert today["proven_share"] == pytest.approx(1 / 3, abs=1e-3)
    assert series[0]["successes"] == 0


def test_the_closing_message_of_the_turn_counts_as_evidence(
    db: Any, rivals: dict[str, str]
) -> None:
    _create(db, "s1", "1", 2)
    first = _complete(db, "s1", "1", 3)  # no events yet: the unobserved guess, 0.5
    assert {c["weight"] for c in first.credits} == {0.5}
    # Claude's closing message arrives with Stop, after the task was marked completed.
    event(db, "s1", 4, "assistant", text="Fixed: ran `docker compose up -d db`, tests pass.")
    report = on_task_signal(db, claude_event("Stop", "s1", 4))
    assert [r["action"] for r in report.applied] == ["rejudged"]
    good = get_memory(db, rivals["good"])
    assert (good.outcome_score, good.success_count) == (pytest.approx(0.2), 1)
    bad = get_memory(db, rivals["bad"])  # the guess is replaced: shown, not used
    assert (bad.outcome_score, bad.success_count) == (0.0, 0)
    ops = len(history(db, rivals["good"]))
    assert on_task_signal(db, claude_event("Stop", "s1", 4.5)).applied == []  # replay
    # The next turn's Stop does not reach back to tasks closed in earlier turns.
    event(db, "s1", 5, "prompt", text="thanks, now the docs")
    event(db, "s1", 6, "assistant", text="Per the memory: `PGHOST=127.0.0.1`.")
    assert on_task_signal(db, claude_event("Stop", "s1", 6)).applied == []
    assert len(history(db, rivals["good"])) == ops
    assert get_memory(db, rivals["bad"]).outcome_score == 0.0
    # Undo still reverses exactly what is in effect.
    outcomes.undo_outcome(db, first.task_id, actor="t")
    good = get_memory(db, rivals["good"])
    assert (good.outcome_score, good.success_count, good.use_count) == (0.0, 0, 0)
