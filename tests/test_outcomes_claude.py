"""Claude Code Tasks: every event shape, reconciliation from disk, and a full session
through the real hook subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memory_layer.cli import cli
from memory_layer.outcomes import list_tasks, task_detail
from memory_layer.outcomes.claude import on_task_signal, reconcile
from memory_layer.outcomes.signals import InvalidTaskSignal
from memory_layer.storage.records import get_memory
from tests.conftest import FIXTURES
from tests.test_outcomes_support import (
    PROJECT,
    add_memory,
    at,
    claude_event,
    event,
    hook_signal,
    session,
    surface,
)

TASKS = FIXTURES / "tasks"


@pytest.fixture(autouse=True)
def _no_shared_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)


def _fixture(name: str) -> dict[str, Any]:
    data = json.loads((TASKS / name).read_text())
    data.pop("_note", None)
    return data


@pytest.fixture
def used(db: Any, cfg: dict[str, Any]) -> str:
    """A memory shown in session abc123 (the docs' session id) and then acted on."""
    mid = add_memory(db, cfg, "Login endpoints: hash with `bcrypt.hashpw` before storing")
    session(db, "abc123")
    surface(db, mid, "abc123", 1)
    event(db, "abc123", 2, "assistant", text="Using bcrypt.hashpw as the memory says.")
    return mid


# --- the documented payloads, as they arrive ----------------------------------------------


def test_documented_task_created_and_completed(db: Any, used: str) -> None:
    created = on_task_signal(db, hook_signal(_fixture("task_created.docs.json"), at=at(0.5)))
    assert created.action == "opened"
    # The docs payload is a teammate's: the task list is the team's (~/.claude/tasks/<team>).
    assert created.task_id == "claude:session-a1b2c3d4:task-001"
    task = task_detail(db, "task-001")
    assert (task["subject"], task["description"]) == (
        "Implement user authentication",
        "Add login and signup endpoints",
    )
    assert task["project"] == PROJECT and task["outcome"] is None
    done = on_task_signal(db, hook_signal(_fixture("task_completed.docs.json"), at=at(3)))
    assert (done.action, done.outcome) == ("credited", "success")
    assert get_memory(db, used).outcome_score == pytest.approx(0.2)


def test_assembled_task_update_completed(db: Any, used: str) -> None:
    payload = _fixture("post_tool_use_taskupdate_completed.ASSEMBLED.json")
    on_task_signal(db, claude_event("TaskCreated", "abc123", 0.5, task_id="1"))
    result = on_task_signal(db, hook_signal(payload, at=at(3)))
    assert result.outcome == "success" and result.task_id == "claude:abc123:1"
    assert get_memory(db, used).outcome_score == pytest.approx(0.2)


def test_task_create_post_tool_use_opens(db: Any) -> None:
    result = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s9",
            1,
            tool_name="TaskCreate",
            tool_input={"subject": "Write docs", "description": "outcomes.md"},
            tool_response={"task": {"id": "4", "subject": "Write docs"}},
        ),
    )
    assert result.action == "opened"
    task = task_detail(db, "claude:s9:4")
    assert (task["subject"], task["description"], task["status"]) == (
        "Write docs",
        "outcomes.md",
        "pending",
    )


def test_update_without_status_only_renames(db: Any) -> None:
    on_task_signal(db, claude_event("TaskCreated", "s9", 1, task_id="4", task_subject="Old"))
    result = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s9",
            2,
            tool_name="TaskUpdate",
            tool_input={"taskId": "4", "subject": "New"},
            tool_response={"success": True, "taskId": "4", "updatedFields": ["subject"]},
        ),
    )
    assert result.action == "unchanged"
    assert task_detail(db, "claude:s9:4")["subject"] == "New"


def test_shared_list_id_from_the_environment(db: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("CLAUDE_CODE_TASK_LIST_ID", "team-list")
    result = on_task_signal(db, claude_event("TaskCreated", "s1", 1, task_id="2"))
    assert result.task_id == "claude:team-list:2"


@pytest.mark.parametrize(
    "bad",
    [
        {"hook_event_name": "TaskCompleted", "session_id": "s", "task_id": None},
        {"hook_event_name": "TaskCreated", "session_id": "s", "task_id": ""},
        {"hook_event_name": "TaskCompleted", "session_id": "s", "task_id": {"id": 1}},
        {"hook_event_name": "PostToolUse", "tool_name": "TaskUpdate", "tool_input": "1"},
        {"hook_event_name": "PostToolUse", "tool_name": "TaskUpdate", "tool_input": {}},
        {"hook_event_name": "PostToolUse", "tool_name": "TaskCreate", "tool_response": {}},
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "TaskUpdate",
            "session_id": "s",
            "tool_input": {"taskId": "1", "status": "archived"},
        },
    ],
)
def test_bad_shapes_raise_a_named_error(bad: dict[str, Any]) -> None:
    with pytest.raises(InvalidTaskSignal):
        hook_signal(bad, at=at(1))


def test_ignored_events(db: Any) -> None:
    assert hook_signal({"hook_event_name": "PreCompact", "session_id": "s"}, at=at(1)) is None
    failed_update = claude_event(
        "PostToolUse",
        "s",
        1,
        tool_name="TaskUpdate",
        tool_input={"taskId": "1", "status": "completed"},
        tool_response={"success": False},
    )
    assert failed_update is None  # the update did not happen: no signal
    assert list_tasks(db) == []


# --- reconciliation from ~/.claude/tasks ------------------------------------------------


def _write_task(root: Path, list_id: str, task: dict[str, Any], mtime: float | None = None) -> Path:
    folder = root / list_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{task['id']}.json"
    path.write_text(json.dumps(task))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_reconcile_registers_and_closes_missed_tasks(
    db: Any, cfg: dict[str, Any], tmp_path: Path
) -> None:
    from memory_layer.models import parse_time

    mid = add_memory(db, cfg, "Run `make migrate` after pulling")
    session(db, "sess-a")
    surface(db, mid, "sess-a", 1)
    event(db, "sess-a", 2, tool="Bash", command="make migrate")
    on_task_signal(db, claude_event("TaskCreated", "sess-a", 0.5, task_id="88"))
    root = tmp_path / "tasks"
    on_disk = json.loads((TASKS / "task_file_on_disk.example.json").read_text())
    later = parse_time("2026-06-01T09:10:00+00:00").timestamp()
    _write_task(root, "sess-a", {**on_disk, "status": "completed"}, later)
    _write_task(root, "unknown-list", {**on_disk, "id": "5", "status": "completed"}, later)
    report = reconcile(db, directory=root)
    assert (report.lists, report.files, len(report.applied)) == (2, 2, 1)
    assert "not a known session" in report.skipped[0]
    assert get_memory(db, mid).outcome_score == pytest.approx(0.2)
    task = task_detail(db, "claude:sess-a:88")
    assert task["outcome"] == "success" and task["subject"] == "My Task"
    assert reconcile(db, directory=root).applied == []  # idempotent


def test_reconcile_skips_files_older_than_what_hooks_said(db: Any, tmp_path: Path) -> None:
    from memory_layer.models import parse_time

    session(db, "sess-b")
    on_task_signal(db, claude_event("TaskCreated", "sess-b", 1, task_id="3"))
    on_task_signal(db, claude_event("TaskCompleted", "sess-b", 5, task_id="3"))
    root = tmp_path / "tasks"
    # The file still says in_progress but was written before the completion.
    earlier = parse_time("2026-06-01T09:03:00+00:00").timestamp()
    _write_task(root, "sess-b", {"id": "3", "subject": "x", "status": "in_progress"}, earlier)
    reconcile(db, directory=root)
    assert task_detail(db, "claude:sess-b:3")["outcome"] == "success"


def test_session_start_reconciles_its_list_from_the_configured_dir(db: Any, tmp_path: Path) -> None:
    from memory_layer.config import set_value

    root = tmp_path / "claude-tasks"
    set_value("outcomes.tasks_dir", str(root))
    session(db, "sess-c")
    _write_task(root, "sess-c", {"id": "1", "subject": "Ship", "status": "in_progress"})
    _write_task(root, "sess-other", {"id": "1", "subject": "Other", "status": "completed"})
    report = on_task_signal(db, claude_event("SessionStart", "sess-c", 0, source="resume"))
    assert report.lists == 1
    tasks = list_tasks(db)
    assert [(t["id"], t["status"], t["outcome"]) for t in tasks] == [
        ("claude:sess-c:1", "in_progress", None)
    ]


def test_cli_tasks_sync_list_and_show(db: Any, tmp_path: Path) -> None:
    session(db, "sess-d")
    root = tmp_path / "t"
    _write_task(root, "sess-d", {"id": "7", "subject": "Deploy", "status": "completed"})
    runner = CliRunner()
    synced = runner.invoke(cli, ["tasks", "sync", "--tasks-dir", str(root), "--json"])
    assert synced.exit_code == 0, synced.output
    assert len(json.loads(synced.output)["applied"]) == 1
    listed = runner.invoke(cli, ["tasks", "list", "--json"])
    assert json.loads(listed.output)[0]["outcome"] == "success"
    shown = runner.invoke(cli, ["tasks", "show", "7"])
    assert shown.exit_code == 0 and "Deploy" in shown.output


def test_cli_outcome_commands(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Pin `node@20` in .nvmrc")
    session(db, "sess-e")
    on_task_signal(db, claude_event("TaskCreated", "sess-e", 0.5, task_id="1"))
    surface(db, mid, "sess-e", 1)
    event(db, "sess-e", 2, tool="Bash", command="echo node@20 > .nvmrc")
    runner = CliRunner()
    worked = runner.invoke(cli, ["outcome", "--task", "1", "--worked"])
    assert worked.exit_code == 0, worked.output
    assert "+0.20" in worked.output
    failed = runner.invoke(cli, ["outcome", "--task", "1", "--failed", "--json"])
    assert json.loads(failed.output)["action"] == "corrected"
    assert get_memory(db, mid).outcome_score == pytest.approx(-0.3)
    undone = runner.invoke(cli, ["outcome", "--task", "1", "--undo"])
    assert undone.exit_code == 0 and get_memory(db, mid).outcome_score == 0.0
    one = runner.invoke(cli, ["outcome", "--memory", mid, "--failed", "--json"])
    credit = json.loads(one.output)
    assert credit["applied"] == pytest.approx(-0.3)
    runner.invoke(cli, ["outcome", "--credit", str(credit["id"]), "--undo"])
    assert get_memory(db, mid).outcome_score == 0.0
    missing = runner.invoke(cli, ["outcome", "--task", "nope", "--worked"])
    assert missing.exit_code == 1 and "tasks list" in missing.output
    usage = runner.invoke(cli, ["outcome", "--task", "1"])
    assert usage.exit_code == 2


# --- a whole session through the real hook process ----------------------------------------


def _hook(name: str, payload: dict[str, Any], env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memory_layer.hooks", name],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def test_full_session_through_the_hooks_credits_exactly_the_used_memories(
    tmp_path: Path, db: Any, cfg: dict[str, Any], user_home: Path
) -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(
        "embedding:\n  enabled: false\nengine:\n  enabled: false\n"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "https://github.com/acme/shop.git"],
        check=True,
    )
    project = "github.com/acme/shop"
    good = add_memory(
        db,
        cfg,
        "ECONNREFUSED 5432 running tests: start postgres with `docker compose up -d db`",
        project=project,
    )
    rival = add_memory(
        db,
        cfg,
        "ECONNREFUSED 5432 running tests: export `PGHOST=127.0.0.1` first",
        project=project,
    )
    elsewhere = add_memory(
        db, cfg, "Restart the queue with `docker compose up -d db`", project="github.com/o/x"
    )
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    env.pop("CLAUDE_CODE_TASK_LIST_ID", None)
    base = {"session_id": "e2e-1", "cwd": str(repo), "transcript_path": ""}
    _hook("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env)
    _hook(
        "UserPromptSubmit",
        {
            **base,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "tests fail: ECONNREFUSED 5432 running tests",
        },
        env,
    )
    _hook(
        "TaskCreated",
        {
            **base,
            "hook_event_name": "TaskCreated",
            "task_id": "1",
            "task_subject": "Fix the test database",
        },
        env,
    )
    _hook(
        "PostToolUse",
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "docker compose up -d db"},
            "tool_response": {
                "stdout": "Started",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            },
        },
        env,
    )
    _hook(
        "TaskCompleted",
        {
            **base,
            "hook_event_name": "TaskCompleted",
            "task_id": "1",
            "task_subject": "Fix the test database",
        },
        env,
    )
    surfaced = {r[0] for r in db.execute("SELECT memory_id FROM usage WHERE session_id = 'e2e-1'")}
    assert {good, rival} <= surfaced and elsewhere not in surfaced
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)
    assert get_memory(db, rival).outcome_score == 0.0  # surfaced, not used
    assert get_memory(db, elsewhere).outcome_score == 0.0  # used, never surfaced
    task = task_detail(db, "claude:e2e-1:1")
    assert task["outcome"] == "success" and task["project"] == project
    # Claude Code may also send the PostToolUse of the TaskUpdate: nothing changes.
    _hook(
        "PostToolUse",
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_name": "TaskUpdate",
            "tool_input": {"taskId": "1", "status": "completed"},
            "tool_response": {"success": True, "taskId": "1"},
        },
        env,
    )
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)
    assert get_memory(db, good).success_count == 1


def test_sinking_memories_are_withheld_from_injection_but_findable(
    tmp_path: Path, db: Any, cfg: dict[str, Any], user_home: Path
) -> None:
    from memory_layer.outcomes import memory_feedback, restore_sinking

    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(
        "embedding:\n  enabled: false\nengine:\n  enabled: false\n"
    )
    repo = tmp_path / "r"
    repo.mkdir()
    project = str(repo.resolve())  # not a git repo: the directory is the project
    good = add_memory(
        db, cfg, "Flaky login test: wait for `networkidle` before asserting", project=project
    )
    bad = add_memory(db, cfg, "Flaky login test: add `sleep(5)` before asserting", project=project)
    for _ in range(2):
        memory_feedback(db, bad, False, actor="t", source="test")  # −0.6 ≤ −0.5
    env = {**os.environ}
    env.pop("CLAUDE_CODE_TASK_LIST_ID", None)
    base = {"session_id": "sink-1", "cwd": str(repo), "transcript_path": ""}
    out = _hook(
        "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env
    )
    assert "networkidle" in out and "sleep(5)" not in out
    runner = CliRunner()
    plain = runner.invoke(cli, ["recall", "flaky login test", "-p", project, "--json"])
    assert [r["id"] for r in json.loads(plain.output)] == [good]
    found = runner.invoke(
        cli, ["recall", "flaky login test", "-p", project, "--include-sinking", "--json"]
    )
    rows = {r["id"]: r for r in json.loads(found.output)}
    assert rows[bad]["sinking"] is True and rows[good]["sinking"] is False
    text = runner.invoke(cli, ["recall", "flaky login test", "-p", project, "--include-sinking"])
    assert "sinking: outcome -0.60" in text.output
    restore_sinking(db, bad, actor="t")
    out = _hook(
        "SessionStart",
        {**base, "session_id": "sink-2", "hook_event_name": "SessionStart", "source": "startup"},
        env,
    )
    assert "sleep(5)" in out


def test_reconcile_does_not_log_tasks_already_in_their_state(db: Any, tmp_path: Path) -> None:
    session(db, "sess-f")
    on_task_signal(db, claude_event("TaskCreated", "sess-f", 1, task_id="2"))
    on_task_signal(db, claude_event("TaskCompleted", "sess-f", 2, task_id="2"))
    root = tmp_path / "tasks"
    _write_task(root, "sess-f", {"id": "2", "subject": "s", "status": "completed"})
    before = db.execute("SELECT count(*) FROM task_events").fetchone()[0]
    for _ in range(3):
        reconcile(db, directory=root)
    assert db.execute("SELECT count(*) FROM task_events").fetchone()[0] == before


def test_task_update_with_an_odd_result_shape_still_counts(db: Any) -> None:
    on_task_signal(db, claude_event("TaskCreated", "s7", 1, task_id="3"))
    result = on_task_signal(
        db,
        claude_event(
            "PostToolUse",
            "s7",
            2,
            tool_name="TaskUpdate",
            tool_input={"taskId": "3", "status": "completed"},
            tool_response="Updated task #3 status",
        ),
    )
    assert result.outcome == "success"
