"""Regressions from the outcome-learning audit: evidence windows of tasks sharing a
turn, the task list id of the hook's own environment, out-of-order async updates,
manual verdicts against later task files, and the messages outcome code builds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memory_layer.cli import cli
from memory_layer.hooks.events import event_from_dict, parse_event
from memory_layer.outcomes import record_outcome, task_detail, undo_outcome
from memory_layer.outcomes.claude import on_task_signal
from memory_layer.storage.records import get_memory
from tests.test_outcomes_support import (
    add_memory,
    claude_event,
    event,
    session,
    surface,
    task_create,
    task_update,
)


@pytest.fixture(autouse=True)
def _no_shared_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)


def _credits(db: Any, task_id: str) -> dict[str, float]:
    return {c["memory_id"]: c["weight"] for c in task_detail(db, task_id)["credits"]}


# --- 1. one turn, several tasks: each task's evidence is its own ---------------------


@pytest.fixture
def turn(db: Any, cfg: dict[str, Any]) -> dict[str, str]:
    """Three tasks created up front in one turn, worked through one after another."""
    pip = add_memory(db, cfg, "ModuleNotFoundError for shop: run `pip install -e .` first")
    readme = add_memory(db, cfg, "READMEs start from the template `docs/readme-template.md`")
    session(db, "s1")
    event(db, "s1", 1, "prompt", text="fix the tests, add a README, bump the version")
    surface(db, pip, "s1", 1)
    surface(db, readme, "s1", 1)
    for task in ("1", "2", "3", "4"):
        on_task_signal(db, task_create("s1", task, 2))
    on_task_signal(db, task_update("s1", "1", 3, "in_progress", from_="pending"))
    event(db, "s1", 4, tool="Bash", command="pip install -e .")
    on_task_signal(db, task_update("s1", "1", 5, "completed", from_="in_progress"))
    on_task_signal(db, task_update("s1", "2", 6, "in_progress", from_="pending"))
    event(
        db, "s1", 7, tool="Write", file_path="/repo/README.md", text="see docs/readme-template.md"
    )
    on_task_signal(db, task_update("s1", "2", 8, "completed", from_="in_progress"))
    on_task_signal(db, task_update("s1", "3", 9, "in_progress", from_="pending"))
    on_task_signal(db, task_update("s1", "3", 10, "deleted", from_="in_progress"))
    on_task_signal(db, task_update("s1", "4", 11, "deleted", from_="pending"))  # never started
    event(db, "s1", 12, "assistant", text="Tests fixed and README added; bump dropped.")
    on_task_signal(db, claude_event("Stop", "s1", 12))
    return {"pip": pip, "readme": readme}


def test_evidence_counts_only_for_the_task_in_progress(db: Any, turn: dict[str, str]) -> None:
    pip, readme = get_memory(db, turn["pip"]), get_memory(db, turn["readme"])
    assert (pip.outcome_score, pip.success_count, pip.failure_count) == (
        pytest.approx(0.2),
        1,
        0,
    )
    assert (readme.outcome_score, readme.success_count, readme.failure_count) == (
        pytest.approx(0.2),
        1,
        0,
    )
    # Shown at the creating prompt, both stay candidates of every task; only the
    # task whose work used a memory credits it (the Stop re-judge included).
    assert _credits(db, "claude:s1:1") == {turn["pip"]: 1.0, turn["readme"]: 0.0}
    assert _credits(db, "claude:s1:2") == {turn["pip"]: 0.0, turn["readme"]: 1.0}
    assert _credits(db, "claude:s1:3") == {turn["pip"]: 0.0, turn["readme"]: 0.0}


def test_a_task_that_never_started_is_not_judged_on_its_siblings_work(
    db: Any, turn: dict[str, str]
) -> None:
    detail = task_detail(db, "claude:s1:4")
    assert detail["outcome"] == "failure"
    assert {c["weight"] for c in detail["credits"]} == {0.0}  # pip and the README: others'


def test_a_task_tried_and_deleted_without_status_updates_is_still_a_failure(
    db: Any, cfg: dict[str, Any]
) -> None:
    """No task was in progress when the memory was acted on: the deletion is the
    verdict (the learning benchmark's sessions, and agents that skip in_progress)."""
    mid = _worked_on(db, cfg, "s9")
    on_task_signal(db, task_update("s9", "1", 4, "deleted", from_="pending"))
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.failure_count) == (pytest.approx(-0.3), 1)


def _worked_on(db: Any, cfg: dict[str, Any], session_id: str, *, start: bool = False) -> str:
    """Task 1 created at minute 2 (started at 2.5 if ``start``), the memory shown at
    the prompt acted on at minute 3. Returns the memory's id."""
    mid = add_memory(db, cfg, "ModuleNotFoundError for shop: run `pip install -e .` first")
    session(db, session_id)
    event(db, session_id, 1, "prompt", text="fix the tests")
    surface(db, mid, session_id, 1)
    on_task_signal(db, task_create(session_id, "1", 2))
    if start:
        on_task_signal(db, task_update(session_id, "1", 2.5, "in_progress", from_="pending"))
    event(db, session_id, 3, tool="Bash", command="pip install -e .")
    return mid


def test_a_task_never_started_keeps_the_creating_turn_window(db: Any, cfg: dict[str, Any]) -> None:
    mid = _worked_on(db, cfg, "s2")
    on_task_signal(db, claude_event("TaskCompleted", "s2", 4, task_id="1"))
    assert get_memory(db, mid).outcome_score == pytest.approx(0.2)


def test_half_weight_only_when_the_session_recorded_no_events(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Flaky auth refresh: serialize it behind `refresh_lock`")
    session(db, "s3")
    event(db, "s3", 0.5, tool="Bash", command="git status")  # the session has events
    surface(db, mid, "s3", 1)
    on_task_signal(db, task_create("s3", "1", 2))
    on_task_signal(db, claude_event("TaskCompleted", "s3", 3, task_id="1"))
    assert _credits(db, "claude:s3:1") == {mid: 0.0}
    assert get_memory(db, mid).outcome_score == 0.0


# --- 2. the shared task list is the hook's, not the engine's -------------------------


def test_the_task_list_id_comes_from_the_hook_process() -> None:
    raw = json.dumps({"session_id": "s1", "task_id": "1"})
    parsed = parse_event("TaskCreated", raw, {"CLAUDE_CODE_TASK_LIST_ID": "shared"})
    assert parsed.task_list_id == "shared"
    # The engine rebuilds the event from the socket with the hook's value in it.
    assert event_from_dict(parsed.to_dict()).task_list_id == "shared"
    assert parse_event("TaskCreated", raw, {}).task_list_id == ""


def test_the_engine_environment_does_not_name_the_list(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The engine was started by a session with a shared list; this hook had none.
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "shared")
    own = on_task_signal(db, task_create("s9", "1", 1, task_list_id=""))
    assert own.task_id == "claude:s9:1"
    shared = on_task_signal(db, task_create("s8", "1", 1, task_list_id="team-list"))
    assert shared.task_id == "claude:team-list:1"


def test_stop_reconciles_the_hook_process_list(
    db: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "engine-list")
    for name in ("engine-list", "mine"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "1.json").write_text(json.dumps({"id": "1", "status": "pending"}))
    session(db, "mine")
    stop = claude_event("Stop", "mine", 1, task_list_id="")
    report = on_task_signal(db, stop, _tasks_config(cfg, tmp_path))
    assert [r["task_id"] for r in report.applied] == ["claude:mine:1"]


# --- 3. async PostToolUse out of order -----------------------------------------------


@pytest.fixture
def done(db: Any, cfg: dict[str, Any]) -> str:
    """Task 1 of session s1 was worked on with the memory and completed at minute 5."""
    mid = _worked_on(db, cfg, "s1")
    on_task_signal(db, task_update("s1", "1", 5, "completed", from_="in_progress"))
    return mid


def test_a_late_update_from_a_status_already_left_does_not_reopen(
    db: Any, done: str, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    late = on_task_signal(db, task_update("s1", "1", 6, "in_progress", from_="pending"))
    assert late.action == "unchanged" and "out of date" in late.message
    assert task_detail(db, "claude:s1:1")["outcome"] == "success"
    assert get_memory(db, done).outcome_score == pytest.approx(0.2)
    # The file Claude Code wrote at the completion agrees: nothing to catch up.
    _write_task(tmp_path / "s1", "1", "completed")
    report = on_task_signal(db, claude_event("Stop", "s1", 7), _tasks_config(cfg, tmp_path))
    assert report.applied == []
    assert get_memory(db, done).outcome_score == pytest.approx(0.2)


def test_a_real_reopen_still_reverses(db: Any, done: str) -> None:
    reopened = on_task_signal(db, task_update("s1", "1", 6, "in_progress", from_="completed"))
    assert reopened.action == "reopened"
    assert get_memory(db, done).outcome_score == 0.0


# --- 4. a human's verdict outranks later task files ----------------------------------


def test_a_manual_outcome_survives_later_task_files(
    db: Any, cfg: dict[str, Any], tmp_path: Path
) -> None:
    mid = _worked_on(db, cfg, "s1", start=True)
    record_outcome(db, "1", True, source="cli", actor="me")
    assert get_memory(db, mid).outcome_score == pytest.approx(0.2)
    # Renamed later: Claude Code rewrites the file, still in progress.
    _write_task(tmp_path / "s1", "1", "in_progress", ahead=5)
    config = _tasks_config(cfg, tmp_path)
    for minute in (5, 6):  # every Stop reconciles; none logs the overruled file again
        assert on_task_signal(db, claude_event("Stop", "s1", minute), config).applied == []
    hook = on_task_signal(db, task_update("s1", "1", 7, "completed", from_="in_progress"))
    assert hook.action == "unchanged" and "by hand" in hook.message
    detail = task_detail(db, "claude:s1:1")
    assert detail["outcome"] == "success"
    assert get_memory(db, mid).outcome_score == pytest.approx(0.2)
    # Undone by the human: the tracker's state counts again.
    undo_outcome(db, "1", actor="me", source="cli")
    _write_task(tmp_path / "s1", "1", "in_progress", ahead=10)
    on_task_signal(db, claude_event("Stop", "s1", 8), config)
    assert task_detail(db, "claude:s1:1")["status"] == "in_progress"


def test_an_agents_report_does_not_outrank_the_tracker(
    db: Any, cfg: dict[str, Any], tmp_path: Path
) -> None:
    """Review: an agent's MCP report_outcome counted as a person's verdict, so the agent
    grading its own work made later tracker events be ignored."""
    from memory_layer.outcomes.store import manual_verdict

    _worked_on(db, cfg, "s6", start=True)
    record_outcome(db, "1", True, source="mcp:codex", actor="mcp:codex")
    assert task_detail(db, "claude:s6:1")["outcome"] == "success"
    assert not manual_verdict(db, "claude:s6:1")
    undo_outcome(db, "1", actor="me", source="cli")
    record_outcome(db, "1", True, source="cli", actor="me")
    assert manual_verdict(db, "claude:s6:1")


def _write_task(folder: Path, task: str, status: str, ahead: float = 0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task}.json"
    path.write_text(json.dumps({"id": task, "subject": "Fix it", "status": status}))
    when = time.time() + ahead
    os.utime(path, (when, when))


def _tasks_config(cfg: dict[str, Any], root: Path) -> dict[str, Any]:
    return {**cfg, "outcomes": {**cfg["outcomes"], "tasks_dir": str(root)}}


# --- 5. what `memory-layer outcome` prints -------------------------------------------


def test_outcome_output_names_the_task_and_old_to_new_scores(db: Any, cfg: dict[str, Any]) -> None:
    mid = _worked_on(db, cfg, "s1", start=True)
    runner = CliRunner()
    worked = runner.invoke(cli, ["outcome", "--task", "1", "--worked"])
    assert worked.exit_code == 0, worked.output
    headline = worked.output.splitlines()[0]
    assert headline == "task claude:s1:1 closed as success (credited)."
    assert f"{mid} +0.20 (+0.00 → +0.20)" in worked.output
    one = runner.invoke(cli, ["outcome", "--memory", mid, "--failed"])
    assert f"Memory {mid}: -0.30 (+0.20 → -0.10)" in one.output


# --- agent teams: the TaskUpdate without team_name is the team's task ----------------


def test_a_team_task_completed_by_both_signals_is_one_task(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "ModuleNotFoundError for shop: run `pip install -e .` first")
    session(db, "s1")
    surface(db, mid, "s1", 1)
    team = {"task_id": "1", "task_subject": "Fix it", "team_name": "team-x"}
    on_task_signal(db, claude_event("TaskCreated", "s1", 2, **team))
    event(db, "s1", 3, tool="Bash", command="pip install -e .")
    on_task_signal(db, claude_event("TaskCompleted", "s1", 4, **team))
    update = on_task_signal(db, task_update("s1", "1", 4.5, "completed", from_="in_progress"))
    assert update.task_id == "claude:team-x:1" and update.action == "unchanged"
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.success_count) == (pytest.approx(0.2), 1)


def test_a_team_task_whose_untagged_create_came_first_is_one_task(
    db: Any, cfg: dict[str, Any]
) -> None:
    """Hooks are async: the untagged PostToolUse TaskCreate may land before the team's
    TaskCreated. Both, and the completion, must be one task crediting once."""
    mid = add_memory(db, cfg, "ModuleNotFoundError for shop: run `pip install -e .` first")
    session(db, "s5")
    surface(db, mid, "s5", 1)
    first = on_task_signal(db, task_create("s5", "1", 2))
    team = {"task_id": "1", "task_subject": "Fix it", "team_name": "team-x"}
    tagged = on_task_signal(db, claude_event("TaskCreated", "s5", 2.1, **team))
    assert tagged.task_id == first.task_id == "claude:s5:1"
    event(db, "s5", 3, tool="Bash", command="pip install -e .")
    on_task_signal(db, claude_event("TaskCompleted", "s5", 4, **team))
    on_task_signal(db, task_update("s5", "1", 4.5, "completed", from_="in_progress"))
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.success_count) == (pytest.approx(0.2), 1)
    # The other order of the completion: untagged first, closing the task, then tagged.
    session(db, "s4")
    surface(db, mid, "s4", 1)
    on_task_signal(db, task_create("s4", "1", 2))
    event(db, "s4", 3, tool="Bash", command="pip install -e .")
    on_task_signal(db, task_update("s4", "1", 4, "completed", from_="pending"))
    late = on_task_signal(db, claude_event("TaskCompleted", "s4", 4.2, **team))
    assert late.task_id == "claude:s4:1"
    assert get_memory(db, mid).success_count == 2  # one per task, not two for s4's


def test_an_old_own_task_is_not_a_new_team_task_of_the_same_number(
    db: Any, cfg: dict[str, Any]
) -> None:
    session(db, "s3")
    on_task_signal(db, task_create("s3", "1", 2))
    on_task_signal(db, task_update("s3", "1", 3, "completed", from_="pending"))
    team = {"task_id": "1", "task_subject": "Another", "team_name": "team-y"}
    later = on_task_signal(db, claude_event("TaskCreated", "s3", 200, **team))  # 3 h later
    assert later.task_id == "claude:team-y:1"
    assert task_detail(db, "claude:s3:1")["outcome"] == "success"


def test_the_engine_keys_tasks_by_the_hooks_task_list_not_its_own(monkeypatch):
    """The event a hook hands the warm engine carries the hook's CLAUDE_CODE_TASK_LIST_ID;
    the engine's own environment (another session's) must not decide the list."""
    from memory_layer.hooks.tasks import from_hook_event

    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "the-engines-list")
    raw = json.dumps({"session_id": "s1", "cwd": "/tmp", "hook_event_name": "Stop"})
    for hook_env, expected in (({"CLAUDE_CODE_TASK_LIST_ID": "shared"}, "shared"), ({}, "s1")):
        event = event_from_dict(parse_event("Stop", raw, hook_env).to_dict())  # the socket trip
        assert from_hook_event(event, "p").list_id == expected


def test_deleting_a_completed_task_keeps_its_success(db: Any, cfg: dict[str, Any]) -> None:
    """Audit e2 case F: clearing a finished task off the list turned +0.2 into -0.3."""
    mid = _worked_on(db, cfg, "s8", start=True)
    on_task_signal(db, task_update("s8", "1", 4, "completed", from_="in_progress"))
    on_task_signal(db, task_update("s8", "1", 5, "deleted", from_="completed"))
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.success_count, memory.failure_count) == (
        pytest.approx(0.2),
        1,
        0,
    )
    assert task_detail(db, "claude:s8:1")["outcome"] == "success"


def test_a_sessions_own_list_after_a_team_does_not_reopen_the_team_task(
    db: Any, cfg: dict[str, Any]
) -> None:
    """Review of the team routing: task numbers restart in every list, so the session's
    own task "1" after a finished team task "1" is a new task, and later updates of it
    stay with it."""
    mid = add_memory(db, cfg, "ModuleNotFoundError for shop: run `pip install -e .` first")
    session(db, "s7")
    surface(db, mid, "s7", 1)
    team = {"task_id": "1", "task_subject": "Fix it", "team_name": "team-x"}
    on_task_signal(db, claude_event("TaskCreated", "s7", 2, **team))
    event(db, "s7", 3, tool="Bash", command="pip install -e .")
    on_task_signal(db, claude_event("TaskCompleted", "s7", 4, **team))
    assert get_memory(db, mid).success_count == 1
    created = on_task_signal(db, task_create("s7", "1", 10))
    assert created.task_id == "claude:s7:1"
    updated = on_task_signal(db, task_update("s7", "1", 11, "in_progress", from_="pending"))
    assert updated.task_id == "claude:s7:1"
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.success_count) == (pytest.approx(0.2), 1)
    assert task_detail(db, "claude:team-x:1")["outcome"] == "success"
