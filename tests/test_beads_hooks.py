"""Beads: the installed hooks as bd runs them, the payload shapes, and sync."""

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
from memory_layer.outcomes import beads, list_tasks, task_detail
from memory_layer.outcomes.beads import HookConflict, on_beads_hook
from memory_layer.outcomes.beads_issue import BeadsIssue, parse_issue
from memory_layer.storage.db import open_db
from memory_layer.storage.records import get_memory
from tests.conftest import FIXTURES
from tests.test_outcomes_support import add_memory, event, surface

BEADS = FIXTURES / "beads"
# The fixtures' issue bd-a3f8 was worked on 2026-06-01 09:05 → closed 11:42:10.
WORK = "2026-06-01T10:00:00.000000+00:00"


def _git_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:Acme/Beads-Demo.git"],
        check=True,
    )
    (repo / ".beads").mkdir()  # what `bd init` leaves behind
    return repo


PROJECT = "github.com/acme/beads-demo"


def _surface_and_act(db: Any, cfg: dict[str, Any]) -> tuple[str, str]:
    good = add_memory(
        db,
        cfg,
        "Flaky auth refresh: serialize refresh behind a mutex with `refresh_lock`",
        project=PROJECT,
    )
    bad = add_memory(
        db, cfg, "Flaky auth refresh: add `time.sleep(1)` before the retry", project=PROJECT
    )
    db.execute(
        "INSERT INTO usage(memory_id, session_id, project, kind, at) VALUES (?, 'sb', ?, "
        "'injected', ?), (?, 'sb', ?, 'injected', ?)",
        [good, PROJECT, WORK, bad, PROJECT, WORK],
    )
    db.execute(
        "INSERT INTO session_events(session_id, project, at, kind, tool, file_path, text) "
        "VALUES ('sb', ?, '2026-06-01T10:30:00.000000+00:00', 'tool', 'Edit', '/r/auth.py', ?)",
        [PROJECT, "with refresh_lock:\n    token = refresh()"],
    )
    return good, bad


def _keyword_only_home() -> None:
    home = Path(os.environ["MEMORY_LAYER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text("embedding:\n  enabled: false\n", encoding="utf-8")


def test_on_close_hook_installed_and_run_as_bd_runs_it(
    tmp_path: Path, db: Any, cfg: dict[str, Any]
) -> None:
    repo = _git_repo(tmp_path)
    good, bad = _surface_and_act(db, cfg)
    _keyword_only_home()
    written = beads.install(repo)
    assert [p.name for p in written] == ["on_close", "on_update"]
    hook = repo / ".beads" / "hooks" / "on_close"
    assert os.access(hook, os.X_OK)
    assert sys.executable in hook.read_text()

    stdin = (BEADS / "on_close_hook_stdin.json").read_bytes()
    done = subprocess.run(
        [str(hook), "bd-a3f8", "close"], input=stdin, cwd=repo, capture_output=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)
    assert get_memory(db, bad).outcome_score == 0.0
    task = list_tasks(db)[0]
    assert task["id"] == f"beads:{PROJECT}:bd-a3f8"
    assert (task["outcome"], task["subject"]) == ("success", "Fix flaky auth refresh test")

    # bd replays the hook (or runs it for `bd update --status closed` too): no change.
    subprocess.run([str(hook), "bd-a3f8", "close"], input=stdin, cwd=repo, timeout=60, check=True)
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)

    # `bd reopen` fires on_update with the issue open again: the credit is reversed.
    reopened = json.loads(stdin)
    reopened.update(status="open", updated_at="2026-06-01T13:00:00Z", closed_at=None)
    update_hook = repo / ".beads" / "hooks" / "on_update"
    done = subprocess.run(
        [str(update_hook), "bd-a3f8", "update"],
        input=json.dumps(reopened).encode(),
        cwd=repo,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert get_memory(db, good).outcome_score == 0.0
    assert list_tasks(db)[0]["outcome"] is None


def test_hook_never_fails_bd_on_garbage(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path)
    _keyword_only_home()
    beads.install(repo)
    hook = repo / ".beads" / "hooks" / "on_close"
    done = subprocess.run(
        [str(hook), "bd-zz", "close"], input=b"\xff not json", capture_output=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    log = Path(os.environ["MEMORY_LAYER_HOME"]) / "logs" / "beads.log"
    assert "not valid JSON" in log.read_text()


def test_hook_falls_back_to_path_when_the_interpreter_is_gone(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path)
    beads.install(repo, python=str(tmp_path / "gone" / "python"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "called"
    fake = bin_dir / "memory-layer"
    fake.write_text(f'#!/bin/sh\necho "$@" > {marker}\nexit 3\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin"}
    hook = repo / ".beads" / "hooks" / "on_close"
    done = subprocess.run([str(hook), "bd-1", "close"], input=b"{}", env=env, timeout=30)
    assert done.returncode == 0  # even though memory-layer exited 3
    assert marker.read_text().split() == ["beads", "hook", "--repo", str(repo), "bd-1", "close"]
    # And with neither available the hook is a silent no-op.
    empty = {**os.environ, "PATH": "/usr/bin:/bin"}
    assert subprocess.run([str(hook), "bd-1", "close"], input=b"{}", env=empty).returncode == 0


def test_install_keeps_foreign_hooks_unless_forced(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path)
    hooks = repo / ".beads" / "hooks"
    hooks.mkdir()
    (hooks / "on_close").write_text("#!/bin/sh\necho mine\n")
    with pytest.raises(HookConflict, match="--force"):
        beads.install(repo)
    beads.install(repo, force=True)
    assert (hooks / "on_close.bak").read_text() == "#!/bin/sh\necho mine\n"
    beads.install(repo)  # ours now: upgrading in place is fine


def test_install_needs_a_beads_repo(tmp_path: Path) -> None:
    with pytest.raises(beads.BeadsNotFound, match="bd init"):
        beads.install(tmp_path)


def test_cli_install_finds_the_repo_from_cwd(tmp_path: Path, monkeypatch: Any) -> None:
    repo = _git_repo(tmp_path)
    (repo / "src").mkdir()
    monkeypatch.chdir(repo / "src")
    result = CliRunner().invoke(cli, ["beads", "install"])
    assert result.exit_code == 0, result.output
    assert "on_close" in result.output and "on_update" in result.output


# --- payload shapes ---------------------------------------------------------------------


def test_parse_issue_shapes() -> None:
    obj = parse_issue((BEADS / "on_close_hook_stdin.json").read_text(), "bd-a3f8")
    legacy = parse_issue((BEADS / "bd_show_json_legacy.json").read_text(), "bd-a3f8")
    envelope = parse_issue((BEADS / "bd_list_json_envelope.json").read_text(), "bd-a3f8")
    assert obj.id == legacy.id == envelope.id == "bd-a3f8"
    assert legacy.close_reason is not None and legacy.close_reason.startswith("Fixed:")
    assert parse_issue("", "bd-9") == BeadsIssue(id="bd-9")


def test_failure_close_reason_penalises(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(
        db, cfg, "Cache in Redis with `redis-cli CONFIG SET maxmemory`", project=PROJECT
    )
    issue = json.loads((BEADS / "export_issue_closed_failure.jsonl").read_text())
    surface(db, mid, "sx", 0, project=PROJECT)
    db.execute("UPDATE usage SET at = '2026-06-02T09:00:00.000000+00:00'")
    event(db, "sx", 0, tool="Bash", command="redis-cli CONFIG SET maxmemory 2gb", project=PROJECT)
    db.execute("UPDATE session_events SET at = '2026-06-02T09:10:00.000000+00:00'")
    result = on_beads_hook(db, "bd-7f3a8.1", "close", json.dumps(issue), project=PROJECT)
    assert result is not None and result.outcome == "failure"
    assert get_memory(db, mid).outcome_score == pytest.approx(-0.3)
    detail = task_detail(db, "bd-7f3a8.1")
    assert detail["reason"].startswith("Abandoned")
    assert detail["session_id"] == "3f0c1e2a-0000-4000-8000-000000000002"


def test_fixed_error_handling_is_a_success(db: Any, cfg: dict[str, Any]) -> None:
    issue = {
        "id": "bd-e1",
        "status": "closed",
        "close_reason": "Fixed error handling",
        "closed_at": "2026-06-03T10:00:00Z",
    }
    result = on_beads_hook(db, "bd-e1", "close", json.dumps(issue), project=PROJECT)
    assert result is not None and result.outcome == "success"


def test_in_progress_update_starts_and_stays_open(db: Any) -> None:
    issue = {
        "id": "bd-s1",
        "status": "in_progress",
        "updated_at": "2026-06-03T09:00:00Z",
        "created_at": "2026-06-03T08:00:00Z",
    }
    on_beads_hook(db, "bd-s1", "update", json.dumps(issue), project=PROJECT)
    task = task_detail(db, "bd-s1")
    assert (task["status"], task["outcome"]) == ("in_progress", None)
    assert task["started_at"].startswith("2026-06-03T09:00:00")


# --- sync -------------------------------------------------------------------------------


def _sync_repo(tmp_path: Path) -> Path:
    repo = _git_repo(tmp_path)
    (repo / ".beads" / "issues.jsonl").write_text(
        (BEADS / "export_issue_closed_success.jsonl").read_text()
        + (BEADS / "export_memory.jsonl").read_text()
    )
    (repo / ".beads" / "interactions.jsonl").write_text(
        (BEADS / "interactions_close.jsonl").read_text()
    )
    return repo


def test_sync_from_files_is_idempotent(tmp_path: Path, db: Any, cfg: dict[str, Any]) -> None:
    good, bad = _surface_and_act(db, cfg)
    repo = _sync_repo(tmp_path)
    report = beads.sync(db, repo, use_bd=False)
    assert (report.issues, report.interactions, report.bd) == (1, 2, "not used")
    assert len(report.applied) == 1
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)
    assert get_memory(db, bad).outcome_score == 0.0
    again = beads.sync(db, repo, use_bd=False)
    assert again.applied == []
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)


def test_sync_replays_reopen_and_bad_label(tmp_path: Path, db: Any, cfg: dict[str, Any]) -> None:
    good, _ = _surface_and_act(db, cfg)
    repo = _sync_repo(tmp_path)
    lines = (BEADS / "interactions_close.jsonl").read_text().splitlines()
    close = json.loads(lines[0])
    reopen = {
        "id": "int-r1",
        "kind": "field_change",
        "created_at": "2026-06-01T12:30:00Z",
        "actor": "dev",
        "issue_id": "bd-a3f8",
        "extra": {"field": "status", "old_value": "closed", "new_value": "open"},
    }
    close2 = {
        **close,
        "id": "int-c2",
        "created_at": "2026-06-01T14:00:00Z",
        "extra": {**close["extra"], "old_value": "open", "reason": "Done for real"},
    }
    bad_label = {
        "id": "int-l2",
        "kind": "label",
        "created_at": "2026-06-01T15:00:00Z",
        "actor": "reviewer",
        "parent_id": "int-c2",
        "label": "bad",
        "reason": "regressed in CI",
    }
    (repo / ".beads" / "interactions.jsonl").write_text(
        "\n".join([lines[0], json.dumps(reopen), json.dumps(close2), json.dumps(bad_label)]) + "\n"
    )
    (repo / ".beads" / "issues.jsonl").write_text("")
    beads.sync(db, repo, use_bd=False)
    memory = get_memory(db, good)
    # close (+0.2) → reopen (reversed) → close (+0.2) → labelled bad (→ −0.3)
    assert memory.outcome_score == pytest.approx(-0.3)
    assert (memory.success_count, memory.failure_count) == (0, 1)
    assert beads.sync(db, repo, use_bd=False).applied == []


def test_sync_uses_bd_list_when_installed(
    tmp_path: Path, db: Any, cfg: dict[str, Any], monkeypatch: Any
) -> None:
    good, _ = _surface_and_act(db, cfg)
    repo = _git_repo(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_bd = bin_dir / "bd"
    envelope = (BEADS / "bd_list_json_envelope.json").read_text()
    fake_bd.write_text(
        "#!/bin/sh\n"
        '[ "$*" = "list --status closed --json --limit 0" ] || exit 9\n'
        f"cat <<'EOF'\n{envelope}\nEOF\n"
    )
    fake_bd.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    report = beads.sync(db, repo)
    assert report.bd == "used" and len(report.applied) == 1
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)


def test_cli_sync_json(tmp_path: Path, db: Any, cfg: dict[str, Any]) -> None:
    _surface_and_act(db, cfg)
    repo = _sync_repo(tmp_path)
    result = CliRunner().invoke(cli, ["beads", "sync", "--repo", str(repo), "--no-bd", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["applied"]) == 1


def test_open_db_in_hook_home(tmp_path: Path) -> None:
    # The hook opens the same store the tests' MEMORY_LAYER_HOME points at.
    conn = open_db()
    assert conn.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


def test_a_persons_outcome_outranks_later_bd_events(db: Any, cfg: dict[str, Any]) -> None:
    """As for Claude tasks: a reopen or another close from bd after a person set the
    outcome is recorded as ignored until the person undoes it."""
    from memory_layer.outcomes import record_outcome, undo_outcome

    closed = {"id": "bd-m1", "status": "closed", "close_reason": "Abandoned: wrong approach",
              "closed_at": "2026-06-03T10:00:00Z", "created_at": "2026-06-03T08:00:00Z"}
    on_beads_hook(db, "bd-m1", "close", json.dumps(closed), project=PROJECT)
    assert task_detail(db, "bd-m1")["outcome"] == "failure"
    record_outcome(db, "bd-m1", True, source="cli", actor="me", project=PROJECT)
    assert task_detail(db, "bd-m1")["outcome"] == "success"
    reopened = {**closed, "status": "open", "updated_at": "2099-01-01T00:00:00Z"}
    result = on_beads_hook(db, "bd-m1", "update", json.dumps(reopened), project=PROJECT)
    assert result is not None and result.action == "unchanged" and "by hand" in result.message
    assert task_detail(db, "bd-m1")["outcome"] == "success"
    undo_outcome(db, "bd-m1", actor="me", source="cli")
    result = on_beads_hook(db, "bd-m1", "update", json.dumps(reopened), project=PROJECT)
    assert result is not None and result.action != "unchanged"
