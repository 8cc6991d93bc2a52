"""memory-layer backfill on real-shaped Claude Code transcripts (tests/fixtures/transcripts,
the line shapes of ~/.claude/projects/<project>/<session>.jsonl): through the hooks'
capture, idempotent, a dry run that writes nothing, and no second reading of what the
Stop hook (a real subprocess) already read."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from memory_layer.cli.app import cli
from tests.conftest import FIXTURES
from tests.test_hooks_support import KEYWORD_ONLY, keyword_claude, write_config

TRANSCRIPTS = FIXTURES / "transcripts"
SESSIONS = ("py_missing_dependency", "go_sqlc_decisions", "rust_linker_clippy")


def projects_dir(tmp_path: Path) -> Path:
    """A ~/.claude/projects tree: one directory per project, one file per session."""
    root = tmp_path / "claude-projects"
    for name in SESSIONS:
        folder = root / f"-home-dev-{name}"
        folder.mkdir(parents=True)
        shutil.copy(TRANSCRIPTS / f"{name}.jsonl", folder / f"{name}.jsonl")
    return root


def backfill(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["backfill", *args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def table(home: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(str(home / "memories.db"))
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_backfill_keeps_what_the_dry_run_showed_and_a_rerun_changes_nothing(
    tmp_path: Path, user_home: Path
) -> None:
    root = projects_dir(tmp_path)
    preview = backfill("--path", str(root), "--dry-run")
    shown = {k["text"] for t in preview["transcripts"] for k in t["kept"]}
    assert len(preview["transcripts"]) == 3 and len(shown) >= 10
    assert not (user_home / "memories.db").exists() or table(
        user_home, "SELECT count(*) FROM memories"
    ) == [(0,)]

    done = backfill("--path", str(root))
    stored = table(user_home, "SELECT text, source, status, project FROM memories")
    assert {row[0] for row in stored} == shown
    assert {row[1] for row in stored} == {"hook:backfill"}
    # The project comes from the session's cwd, as the hooks compute it.
    assert {row[3] for row in stored} >= {"/home/dev/shop", "/home/kim/go/src/shop"}
    # Tool-event signals (fail -> fix, commands) come through too, not only prose.
    categories = {k["category"] for t in done["transcripts"] for k in t["kept"]}
    assert {"troubleshooting", "command", "decision"} <= categories

    snapshot = table(user_home, "SELECT * FROM memories ORDER BY id")
    ops = table(user_home, "SELECT count(*) FROM operations")
    again = backfill("--path", str(root))
    assert all(t["read_bytes"] == 0 and t["kept"] == [] for t in again["transcripts"])
    assert table(user_home, "SELECT * FROM memories ORDER BY id") == snapshot
    assert table(user_home, "SELECT count(*) FROM operations") == ops


def test_appended_lines_are_read_on_from_the_bookmark(tmp_path: Path, user_home: Path) -> None:
    root = projects_dir(tmp_path)
    path = root / "-home-dev-py_missing_dependency" / "py_missing_dependency.jsonl"
    # Every line complete (a last line without its newline is still being written).
    lines = [line + "\n" for line in path.read_text().splitlines()]
    path.write_text("".join(lines[: len(lines) // 2]))
    first = backfill("--path", str(path))["transcripts"][0]
    with path.open("a") as f:
        f.write("".join(lines[len(lines) // 2 :]))
    second = backfill("--path", str(path))["transcripts"][0]
    assert second["start"] == first["end"] and second["end"] == path.stat().st_size
    total = table(user_home, "SELECT count(*) FROM memories")[0][0]
    assert total == len(first["kept"]) + len([k for k in second["kept"] if not k["already_stored"]])


def test_project_and_since_filters(tmp_path: Path, user_home: Path) -> None:
    root = projects_dir(tmp_path)
    only = backfill("--path", str(root), "--project", "/home/kim/*", "--dry-run")
    assert [Path(t["path"]).stem for t in only["transcripts"]] == ["go_sqlc_decisions"]
    future = backfill("--path", str(root), "--since", "2999-01-01T00:00Z", "--dry-run")
    assert future["transcripts"] == []


def test_what_the_stop_hook_read_is_not_read_again(tmp_path: Path, user_home: Path) -> None:
    claude = keyword_claude(user_home, tmp_path)
    shutil.copy(TRANSCRIPTS / "go_sqlc_decisions.jsonl", claude.transcript)
    claude.hook("Stop", stop_hook_active=False, last_assistant_message="Done.")
    by_hook = table(user_home, "SELECT id, source, use_count FROM memories ORDER BY id")
    assert by_hook and {row[1] for row in by_hook} == {"hook:Stop"}
    write_config(user_home, KEYWORD_ONLY)
    run = backfill("--path", str(claude.transcript))["transcripts"][0]
    assert run["read_bytes"] == 0 and run["kept"] == []
    assert table(user_home, "SELECT id, source, use_count FROM memories ORDER BY id") == by_hook


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["backfill", "--path", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "No such file or directory" in result.output and "--path" in result.output
