"""Optional LLM extraction, with a fake `claude` executable on PATH: off by default, once
per ended session in the engine, capped per day, cost logged, cleaned input, no recursion."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_layer.engine import lifecycle
from memory_layer.hooks.llm import parse_reply
from tests.test_hooks_support import Claude, engine_pids, make_project, memories, write_config

SECRET = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
FAKE_CLAUDE = """#!/bin/sh
# Stands in for `claude -p`: records how it was called, answers like the real CLI.
{{
  printf 'hooks=%s\\n' "${{MEMORY_LAYER_HOOKS:-}}"
  for arg in "$@"; do printf 'arg=%s\\n' "$arg"; done
}} >> "{log}"
cat <<'JSON'
{{"type": "result", "subtype": "success", "is_error": false, "total_cost_usd": 0.0042,
 "result": "Here you go:\\n[{{\\"text\\": \\"The billing service retries Stripe webhooks for 3 days, so handlers must be idempotent.\\", \\"category\\": \\"gotcha\\", \\"confidence\\": 0.95}}, {{\\"text\\": \\"Run the billing tests with make test-billing.\\", \\"category\\": \\"nonsense\\"}}]"}}
JSON
"""


def wait_for(predicate, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(autouse=True)
def no_engine_left(user_home: Path) -> Iterator[None]:
    yield
    lifecycle.stop(timeout=5.0)
    for pid in list(engine_pids(user_home)):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `claude` first on PATH (the engine inherits PATH from whoever starts it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "claude-calls.log"
    script = bin_dir / "claude"
    script.write_text(FAKE_CLAUDE.format(log=calls), encoding="utf-8")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return calls


def session(home: Path, tmp_path: Path, name: str) -> Claude:
    claude = Claude(home, make_project(tmp_path / name))
    claude.env["PATH"] = os.environ["PATH"]
    claude.say(
        "user",
        "The billing webhooks keep firing twice and customers get charged double. "
        f"Our token is {SECRET} <private>and my card ends in 4242</private>.",
    )
    claude.say(
        "assistant",
        "I looked at the webhook handler in billing/webhooks.py. Stripe retries a "
        "webhook for up to three days whenever the endpoint does not answer 2xx in time, "
        "and the handler was not idempotent, so a slow response produced a second charge. "
        "I added an idempotency check on the event id before creating the charge, and the "
        "duplicate charges stopped in the replay test. " * 2,
    )
    return claude


def end_session(claude: Claude) -> None:
    claude.hook("SessionEnd", reason="prompt_input_exit")


def test_off_by_default(user_home: Path, tmp_path: Path, fake_claude: Path) -> None:
    write_config(user_home, "embedding:\n  enabled: false\n")
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    claude = session(user_home, tmp_path, "shop")
    end_session(claude)
    conn = claude.db()
    assert wait_for(lambda: conn.execute("SELECT pending FROM sessions").fetchone() == (0,), 20)
    conn.close()
    assert not fake_claude.exists()
    assert lifecycle.status()["llm_extraction"] == "off"


def test_once_per_session_in_the_engine_capped_and_costed(
    user_home: Path, tmp_path: Path, fake_claude: Path
) -> None:
    first = session(user_home, tmp_path, "shop")
    # Without the engine the next SessionStart finishes the session, never the LLM pass.
    write_config(
        user_home,
        "embedding:\n  enabled: false\nengine:\n  enabled: false\n"
        "hooks:\n  llm:\n    enabled: true\n    max_calls_per_day: 1\n",
    )
    end_session(first)
    Claude(user_home, first.project).hook("SessionStart", source="startup")
    assert not fake_claude.exists()

    write_config(
        user_home,
        "embedding:\n  enabled: false\n"
        "hooks:\n  llm:\n    enabled: true\n    max_calls_per_day: 1\n",
    )
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    second = session(user_home, tmp_path, "shop2")
    end_session(second)
    # The pass writes its memories one by one: wait for all of them, not the first.
    assert wait_for(
        lambda: sum(m["source"] == "hook:llm" for m in memories(user_home)) >= 2
    )
    by_llm = {m["text"]: m for m in memories(user_home) if m["source"] == "hook:llm"}
    gotcha = by_llm[
        "The billing service retries Stripe webhooks for 3 days, so handlers must be idempotent."
    ]
    assert (gotcha["category"], gotcha["confidence"]) == ("gotcha", 0.7)  # capped
    assert by_llm["Run the billing tests with make test-billing."]["category"] == "general"

    calls = fake_claude.read_text(encoding="utf-8")
    assert calls.count("hooks=off") == 1  # once, and our hooks stay out of that session
    assert "arg=--output-format\narg=json" in calls and "arg=claude-haiku-4-5" in calls
    assert "arg=--max-turns\narg=1" in calls
    assert SECRET not in calls and "4242" not in calls
    status = lifecycle.status()
    assert status["llm_calls_today"] == "1 of 1" and status["llm_cost_today_usd"] == 0.0042

    third = session(user_home, tmp_path, "shop3")
    end_session(third)
    conn = third.db()
    assert wait_for(
        lambda: (
            conn.execute(
                "SELECT pending FROM sessions WHERE session_id = ?", [third.session_id]
            ).fetchone()
            == (0,)
        )
    )
    conn.close()
    assert fake_claude.read_text(encoding="utf-8").count("hooks=off") == 1  # capped
    assert "max_calls_per_day" in third.log()


def test_hooks_do_nothing_inside_the_extraction_session(user_home: Path, tmp_path: Path) -> None:
    write_config(user_home, "embedding:\n  enabled: false\nengine:\n  enabled: false\n")
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    payload = claude.payload("UserPromptSubmit", prompt="anything at all")
    done = claude.raw(
        "UserPromptSubmit", json.dumps(payload).encode(), env={"MEMORY_LAYER_HOOKS": "off"}
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert not (user_home / "memories.db").exists()


@pytest.mark.parametrize(
    ("stdout", "texts", "cost"),
    [
        ("not json", [], None),
        ('{"result": "no array here", "total_cost_usd": 0.01}', [], 0.01),
        ('{"result": "[]", "cost_usd": 0.002}', [], 0.002),
        ('{"result": "[{\\"text\\": \\"\\"}, 5, {\\"text\\": 3}]"}', [], None),
        (
            '{"result": "[{\\"text\\": \\"Use uv.\\", \\"confidence\\": \\"high\\"}]"}',
            ["Use uv."],
            None,
        ),
    ],
)
def test_parse_reply_is_defensive(stdout: str, texts: list[str], cost: float | None) -> None:
    found, reported = parse_reply(stdout)
    assert [c.text for c in found] == texts and reported == cost
    assert all(0 <= c.confidence <= 0.7 for c in found)
