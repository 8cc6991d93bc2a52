"""SessionStart chooses: through the real hook subprocess, only memories that cleared
the bar (api.session_start_withheld) are injected, however small the store."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from memory_layer.config import load_config
from memory_layer.models import iso, utcnow
from tests.test_hooks_support import Claude, keyword_claude

PROJECT = "github.com/acme/shop"


@pytest.fixture
def claude(user_home: Path, tmp_path: Path) -> Claude:
    return keyword_claude(user_home, tmp_path)


def seed(claude: Claude, text: str, category: str, source: str, confidence: float, **changes):
    from memory_layer.memories import remember
    from memory_layer.storage.db import open_db
    from memory_layer.storage.records import update_memory

    conn = open_db(claude.home / "memories.db")
    try:
        memory = remember(
            conn,
            text,
            config=load_config(),
            category=category,
            project=PROJECT,
            source=source,
            confidence=confidence,
        ).memory
        if changes:
            memory = update_memory(conn, memory.id, changes, actor="test", action="test")
        return memory
    finally:
        conn.close()


def test_a_small_store_injects_only_what_earned_a_place(claude: Claude) -> None:
    seed(claude, "Never edit a migration that was merged; add a new one.", "convention", "cli", 0.9)
    seed(
        claude,
        "Always run `cargo clippy -- -D warnings` before pushing.",
        "convention",
        "hook:Stop",
        0.9,
    )
    seed(
        claude,
        "Run the tests with `pnpm -r test`.",
        "command",
        "hook:PostToolUse",
        0.6,
        use_count=2,
    )
    seed(claude, "Be careful with stuff around the thing.", "gotcha", "cli", 0.9)
    seed(
        claude,
        "Lint with `rubocop app/models/user.rb app/models/order.rb`.",
        "command",
        "hook:PostToolUse",
        0.6,
    )
    seed(
        claude,
        "`docker build -t api:test .` failed with `exec format error`; fixed by rebuilding.",
        "troubleshooting",
        "hook:PostToolUse",
        0.5,
    )
    old = iso(utcnow() - timedelta(days=120))
    seed(
        claude,
        "We decided to pin Node 18 because the CI image ships it.",
        "decision",
        "hook:Stop",
        0.75,
        created_at=old,
        updated_at=old,
    )

    text = claude.context("SessionStart", source="startup", model="claude-sonnet-5")

    assert "Never edit a migration that was merged" in text  # stated by a person
    assert "cargo clippy" in text  # a confident capture (an explicit user rule)
    assert "pnpm -r test" in text  # a command seen again
    assert "Be careful with stuff" not in text  # vague, whoever said it
    assert "rubocop" not in text  # one sighting of a one-off command
    assert "api:test" not in text  # a low-confidence fail -> fix story
    assert "Node 18" not in text  # an unused capture four months old


def test_nothing_that_clears_the_bar_injects_nothing(claude: Claude) -> None:
    seed(claude, "Lint with `rubocop app/models/user.rb`.", "command", "hook:PostToolUse", 0.6)
    assert claude.context("SessionStart", source="startup") == ""
    # The capture is still there for a prompt it answers.
    assert "rubocop" in claude.context("UserPromptSubmit", prompt="how do I lint with rubocop here")


def test_imported_claude_md_is_not_repeated_but_agents_md_is(claude: Claude) -> None:
    from tests.conftest import FIXTURES

    rules = FIXTURES / "instructions" / "cursorrules-fastapi" / ".cursorrules"
    (claude.project / "CLAUDE.md").write_text(
        "## Testing\n\n- Run the tests with `make test` before pushing.\n"
    )
    (claude.project / "AGENTS.md").write_text(rules.read_text())
    env = {**claude.env, "PATH": str(Path(sys.executable).parent) + ":" + claude.env["PATH"]}
    done = subprocess.run(
        [sys.executable, "-m", "memory_layer", "import-instructions", str(claude.project)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = claude.context("SessionStart", source="startup")
    assert "Never time.sleep() in async. Use asyncio.sleep()." in text  # from AGENTS.md
    assert "make test" not in text  # Claude Code reads CLAUDE.md itself
