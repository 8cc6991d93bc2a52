"""Key-looking URL query parameters never reach the store (issue 12, point 6).

The issue's finding: an ``?api-key=…`` query parameter reached ``session_events``
unredacted. Every place a hook stores text is fed such URLs through the real hook
processes (documented payload shapes, tests/fixtures/hooks): a Bash command, a
failure's error, a prompt, the assistant's last message, a task's subject, and a
memory, captured and remembered.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_hooks_support import Claude, fixture, keyword_claude, memories

# Built from parts so that secret scanners do not flag this file.
KEY = "Qx7f2Lm" + "Z0aB9cD3e"
TOKEN = "t0k3n-" + "abc-123-xyz"
SIG = "9a8b7c" + "6d5e4f3a2b1c"
URLS = (
    f"https://api.nytimes.com/svc/search/v2/articlesearch.json?q=election&api-key={KEY}",
    f"wss://stream.example.com/ws?channel=ci&token={TOKEN}",
    f"https://bucket.s3.amazonaws.com/build.zip?X-Amz-Date=20260101&X-Amz-Signature={SIG}",
)
SECRETS = (KEY, TOKEN, SIG)


@pytest.fixture
def claude(user_home: Path, tmp_path: Path) -> Claude:
    return keyword_claude(user_home, tmp_path)


def stored_text(home: Path) -> str:
    """Every text column of every table, as one string to search."""
    conn = sqlite3.connect(str(home / "memories.db"))
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        parts: list[str] = []
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):  # noqa: S608 (names from sqlite_master)
                parts.extend(str(value) for value in row if isinstance(value, str))
        return "\n".join(parts)
    finally:
        conn.close()


def test_url_keys_are_redacted_in_session_events_tasks_and_memories(claude: Claude) -> None:
    nyt, ws, s3 = URLS
    failure = fixture("post_tool_use_failure_bash.docs.json")
    failure.update(
        session_id=claude.session_id,
        cwd=str(claude.project),
        tool_input={"command": f"curl -sf '{nyt}'"},
        error=f"Exit code 22\ncurl: (22) The requested URL returned error: 401 for {nyt}",
    )
    assert claude.raw("PostToolUseFailure", json.dumps(failure).encode()).returncode == 0
    ok = fixture("post_tool_use_bash.tool_response.captured.json")["template"]
    claude.hook("PostToolUse", tool_name="Bash", tool_input={"command": f"wscat -c '{ws}'"},
                tool_response=ok)
    claude.hook("UserPromptSubmit", prompt=f"why does {s3} return 403?")
    claude.hook("Stop", stop_hook_active=False,
                last_assistant_message=f"The presigned URL {s3} had expired; I made a new one.")
    task = fixture("task_created.docs.json")
    task.update(session_id=claude.session_id, cwd=str(claude.project),
                task_subject=f"Check the feed at {ws}")
    assert claude.raw("TaskCreated", json.dumps(task).encode()).returncode == 0
    # A person's own memory, through the CLI.
    done = subprocess.run(
        [sys.executable, "-m", "memory_layer", "remember", f"The search API lives at {nyt}"],
        cwd=str(claude.project), env=claude.env, capture_output=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr

    conn = claude.db()
    try:
        rows = conn.execute("SELECT kind, command, error, text FROM session_events").fetchall()
        subjects = [r[0] for r in conn.execute("SELECT subject FROM tasks")]
    finally:
        conn.close()
    events = "\n".join(str(v) for row in rows for v in row if v)
    assert "api-key=[REDACTED:url_param]" in events and "token=[REDACTED:url_param]" in events
    assert "X-Amz-Signature=[REDACTED:url_param]" in events
    assert "q=election" in events and "channel=ci" in events  # the rest of the URL stays
    assert subjects and "token=[REDACTED:url_param]" in subjects[0]
    texts = [m["text"] for m in memories(claude.home)]
    assert any("api-key=[REDACTED:url_param]" in t for t in texts)
    everything = stored_text(claude.home)
    for secret in SECRETS:
        assert secret not in everything
