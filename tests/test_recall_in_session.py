"""`memory-layer recall` run inside a Claude Code session is a surfacing like an injection.

Through the real processes: hooks spawned as Claude Code spawns them, and the CLI run
as the agent's Bash tool runs it (the session's CLAUDE_ENV_FILE sourced first). A
memory found only through `recall` and then applied is credited when the task closes;
one that was never surfaced is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_layer.paths import SESSION_ENV
from tests.test_hooks_support import Claude, make_project, memories, write_config

# No injection at all: whatever reaches the agent here comes through `recall`.
NO_INJECTION = (
    "embedding:\n  enabled: false\nengine:\n  enabled: false\n"
    "hooks:\n  session_start_limit: 0\n  inject_limit: 0\n"
)
FIX = "psycopg2 connection refused on 5432: run `docker compose up -d db` first."
OTHER = "Node 20 is required for the frontend build: run `nvm use 20` before `npm ci`."


def seed(home: Path, text: str) -> str:
    from memory_layer import api
    from memory_layer.config import load_config
    from memory_layer.storage.db import open_db

    conn = open_db(home / "memories.db")
    try:
        done = api.remember(
            conn,
            text,
            config=load_config(),
            category="troubleshooting",
            project="github.com/acme/shop",
        )
        return done.memory.id
    finally:
        conn.close()


def bash(claude: Claude, env_file: Path, command: str) -> subprocess.CompletedProcess[str]:
    """What Claude Code's Bash tool does: source the session's env file, then run."""
    cli = f"{sys.executable} -m memory_layer"
    script = f'. "{env_file}"\n{command.replace("memory-layer", cli, 1)}'
    env = {k: v for k, v in claude.env.items() if k != SESSION_ENV}
    return subprocess.run(
        ["/bin/sh", "-c", script],
        cwd=claude.project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def claude(user_home: Path, tmp_path: Path) -> Claude:
    write_config(user_home, NO_INJECTION)
    return Claude(user_home, make_project(tmp_path / "shop"))


def usage_rows(claude: Claude) -> list[tuple[str, str, str]]:
    conn = claude.db()
    try:
        return conn.execute("SELECT memory_id, session_id, kind FROM usage ORDER BY id").fetchall()
    finally:
        conn.close()


def test_session_start_tells_bash_commands_their_session(claude: Claude, tmp_path: Path) -> None:
    env_file = tmp_path / "session.env"
    for _ in range(2):  # resume and /clear start it again: one line, not two
        done = claude.raw(
            "SessionStart",
            json.dumps(claude.payload("SessionStart", source="startup")).encode(),
            env={"CLAUDE_ENV_FILE": str(env_file)},
        )
        assert done.returncode == 0
    assert env_file.read_text() == f"export {SESSION_ENV}={claude.session_id}\n"
    echoed = bash(claude, env_file, f'echo "${SESSION_ENV}"')
    assert echoed.stdout.strip() == claude.session_id


def test_a_recalled_memory_that_is_applied_is_credited(claude: Claude, tmp_path: Path) -> None:
    fix, other = seed(claude.home, FIX), seed(claude.home, OTHER)
    env_file = tmp_path / "session.env"
    start = claude.payload("SessionStart", source="startup")
    claude.raw("SessionStart", json.dumps(start).encode(), env={"CLAUDE_ENV_FILE": str(env_file)})
    task = {"task_id": "1", "task_subject": "Fix the failing db tests"}
    claude.hook("TaskCreated", **task)
    assert claude.context("UserPromptSubmit", prompt="psycopg2 connection refused on 5432") == ""

    found = bash(claude, env_file, "memory-layer recall 'psycopg2 connection refused 5432' --json")
    assert found.returncode == 0, found.stderr
    assert [r["id"] for r in json.loads(found.stdout)] == [fix]
    assert usage_rows(claude) == [(fix, claude.session_id, "recalled")]

    time.sleep(0.01)  # the fix is applied after it was surfaced
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "docker compose up -d db"},
        tool_response={"stdout": "Container db Started", "stderr": "", "interrupted": False},
    )
    claude.hook("TaskCompleted", **task)
    rows = {m["id"]: m for m in memories(claude.home)}
    assert rows[fix]["success_count"] == 1 and rows[fix]["outcome_score"] > 0
    assert rows[other]["success_count"] == 0 and rows[other]["outcome_score"] == 0


def test_recall_outside_a_session_records_nothing(claude: Claude, tmp_path: Path) -> None:
    seed(claude.home, FIX)
    env_file = tmp_path / "empty.env"
    env_file.write_text("")
    found = bash(claude, env_file, "memory-layer recall 'psycopg2 connection refused'")
    assert found.returncode == 0 and "docker compose" in found.stdout
    assert usage_rows(claude) == []


def test_a_bad_session_id_is_refused_before_anything_loads(
    claude: Claude, tmp_path: Path
) -> None:
    env_file = tmp_path / "bad.env"
    env_file.write_text(f"export {SESSION_ENV}='a\tb'\n")
    done = bash(claude, env_file, "memory-layer recall 'psycopg2'")
    assert done.returncode == 1 and "not a Claude Code session id" in done.stderr
    assert not os.path.exists(claude.home / "memories.db")
