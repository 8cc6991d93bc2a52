"""Every hook, run as Claude Code runs it: hooks.json's command through a shell, with
the event JSON on stdin, the project as cwd and a temporary MEMORY_LAYER_HOME.

Keyword-only and engine-less config (see test_hooks_support.KEYWORD_ONLY) keeps
each process fast; the engine has its own tests in test_engine_lifecycle.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_hooks_support import (
    KEYWORD_ONLY,
    Claude,
    fixture,
    keyword_claude,
    make_project,
    memories,
    write_config,
)


@pytest.fixture
def claude(user_home: Path, tmp_path: Path) -> Claude:
    return keyword_claude(user_home, tmp_path)


def seed(claude: Claude, text: str, category: str, *, project: str | None = "github.com/acme/shop"):
    from memory_layer.config import load_config
    from memory_layer.memories import remember
    from memory_layer.storage.db import open_db

    conn = open_db(claude.home / "memories.db")
    try:
        return remember(
            conn, text, config=load_config(), category=category, project=project, source="cli"
        ).memory
    finally:
        conn.close()


def usage(claude: Claude) -> list[tuple[str, str, str, int]]:
    conn = claude.db()
    try:
        return conn.execute(
            "SELECT memory_id, session_id, kind, rank FROM usage ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


def events(claude: Claude) -> list[tuple]:
    conn = claude.db()
    try:
        return conn.execute(
            "SELECT kind, tool, command, ok, error, file_path, text FROM session_events ORDER BY id"
        ).fetchall()
    finally:
        conn.close()


# --- one subprocess test per event --------------------------------------------------


def test_session_start_injects_grouped_block_and_records_usage(claude: Claude) -> None:
    gotcha = seed(claude, "The staging database only accepts connections over the VPN.", "gotcha")
    command = seed(claude, "Run the tests with `uv run pytest -x`.", "command")
    everywhere = seed(
        claude, "Prefer ruff over flake8 for linting.", "tool_preference", project=None
    )
    seed(claude, "Unrelated project memory about billing.", "context", project="github.com/x/y")

    text = claude.context("SessionStart", source="startup", model="claude-sonnet-5")

    assert text.startswith("Memories from earlier sessions in this project (memory-layer):")
    assert "Gotchas:\n- The staging database only accepts connections over the VPN." in text
    assert "Commands:\n- Run the tests with `uv run pytest -x`." in text
    assert "Prefer ruff over flake8 for linting. (all projects)" in text
    assert "billing" not in text
    kinds = {(m, k) for m, _s, k, _r in usage(claude)}
    assert kinds == {
        (gotcha.id, "session_start"),
        (command.id, "session_start"),
        (everywhere.id, "session_start"),
    }
    conn = claude.db()
    row = conn.execute("SELECT project, cwd, transcript_path FROM sessions").fetchone()
    conn.close()
    assert row == ("github.com/acme/shop", str(claude.project), str(claude.transcript))


def test_user_prompt_submit_injects_relevant_once_per_session(claude: Claude) -> None:
    fix = seed(
        claude,
        "psycopg2 OperationalError connection refused on port 5432: start the db with "
        "`docker compose up -d db` first.",
        "troubleshooting",
    )
    seed(claude, "Release notes are written in CHANGELOG.md by hand.", "convention")

    prompt = "psycopg2 says connection refused on port 5432 when I run the tests"
    first = claude.context("UserPromptSubmit", prompt=prompt)
    assert first.startswith("Memories from earlier sessions related to this prompt")
    assert "docker compose up -d db" in first
    assert "CHANGELOG" not in first
    assert claude.context("UserPromptSubmit", prompt=prompt) == ""  # already in context
    assert [(m, k) for m, _s, k, _r in usage(claude)] == [(fix.id, "injected")]
    assert [e[0] for e in events(claude)] == ["prompt", "prompt"]
    assert events(claude)[0][6] == prompt


def test_chit_chat_injects_nothing(claude: Claude) -> None:
    seed(claude, "Thanks to the retry decorator, flaky network tests pass.", "pattern")
    seed(claude, "Run the tests with `uv run pytest -x`.", "command")
    for prompt in ("thanks!", "ok", "great, that works", "yes please"):
        assert claude.context("UserPromptSubmit", prompt=prompt) == "", prompt
    assert usage(claude) == []


def test_post_tool_use_bash_records_event_and_command_memory(claude: Claude) -> None:
    response = fixture("post_tool_use_bash.tool_response.captured.json")["template"]
    assert (
        claude.hook(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "cd /srv/shop && uv run pytest -x 2>&1 | tail -20"},
            tool_response=response,
            tool_use_id="toolu_1",
            duration_ms=900,
        )
        == ""
    )
    assert events(claude) == [
        ("tool", "Bash", "cd /srv/shop && uv run pytest -x 2>&1 | tail -20", 1, None, None, None)
    ]
    (memory,) = memories(claude.home)
    assert memory["text"] == "Run the tests with `uv run pytest -x`."
    assert (memory["category"], memory["source"]) == ("command", "hook:PostToolUse")
    assert memory["project"] == "github.com/acme/shop"
    # Written through the one remember: stamped like every trusted write, at once.
    import hashlib

    assert memory["approved_by"] == "hook:PostToolUse" and memory["approved_at"]
    assert memory["checksum"] == hashlib.sha256(memory["text"].encode()).hexdigest()


def test_post_tool_use_failure_records_error(claude: Claude) -> None:
    payload = fixture("post_tool_use_failure_bash.docs.json")
    payload.update(session_id=claude.session_id, cwd=str(claude.project))
    done = claude.raw("PostToolUseFailure", json.dumps(payload).encode())
    assert done.returncode == 0 and done.stdout == b""
    ((kind, tool, command, ok, error, _path, _text),) = events(claude)
    assert (kind, tool, command, ok) == ("tool", "Bash", "npm test", 0)
    assert "Cannot find module 'express'" in error
    assert memories(claude.home) == []  # a failure alone teaches nothing yet


def test_post_tool_use_edits_record_file_paths_and_written_text(claude: Claude) -> None:
    edit = fixture("post_tool_use_edit.tool_response.captured.json")
    claude.hook(
        "PostToolUse",
        tool_name="Edit",
        tool_input={
            "file_path": edit["filePath"],
            "old_string": edit["oldString"],
            "new_string": edit["newString"],
        },
        tool_response=edit,
    )
    write = fixture("post_tool_use_write.docs.json")
    write.update(session_id=claude.session_id, cwd=str(claude.project))
    assert claude.raw("PostToolUse", json.dumps(write).encode()).returncode == 0
    claude.hook(
        "PostToolUse",
        tool_name="MultiEdit",
        tool_input={
            "file_path": "/srv/app/.env.example",
            "edits": [
                {"old_string": "A=1", "new_string": "TIMEOUT=30"},
                {"old_string": "B=2", "new_string": f"GITHUB_TOKEN={SECRET}"},
            ],
        },
        tool_response={"filePath": "/srv/app/.env.example"},
    )
    rows = [(e[1], e[5], e[6]) for e in events(claude)]
    assert rows[:2] == [
        ("Edit", edit["filePath"], edit["newString"]),
        ("Write", "/path/to/file.txt", "file content"),
    ]
    tool, path, text = rows[2]
    assert (tool, path) == ("MultiEdit", "/srv/app/.env.example")
    assert "TIMEOUT=30" in text and SECRET not in text and "[REDACTED" in text


def test_task_events_are_recorded_and_reach_outcomes(claude: Claude) -> None:
    update = fixture("post_tool_use_taskupdate_completed.ASSEMBLED.json")
    update.update(session_id=claude.session_id, cwd=str(claude.project))
    for name, payload in (
        ("TaskCreated", fixture("task_created.docs.json")),
        ("PostToolUse", update),
        ("TaskCompleted", fixture("task_completed.docs.json")),
    ):
        payload.update(session_id=claude.session_id, cwd=str(claude.project))
        done = claude.raw(name, json.dumps(payload).encode())
        assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert [(e[0], e[1]) for e in events(claude)] == [("tool", "TaskUpdate")]
    assert "Traceback" not in claude.log()
    try:
        import memory_layer.outcomes.claude  # noqa: F401
    except ImportError:
        return
    conn = claude.db()
    tasks = conn.execute("SELECT count(*) FROM tasks").fetchone()[0]
    conn.close()
    assert tasks >= 1


def test_stop_extracts_transcript_incrementally_and_records_last_message(
    claude: Claude,
) -> None:
    claude.say("user", "Remember that the integration tests need the docker compose stack up.")
    claude.say("assistant", "Understood, I will start it before running them.")
    claude.hook("Stop", stop_hook_active=False, last_assistant_message="Done: tests pass.")
    (memory,) = memories(claude.home)
    assert memory["text"] == "The integration tests need the docker compose stack up."
    assert memory["source"] == "hook:Stop"

    claude.say(
        "assistant",
        "The root cause was that the connection pool was exhausted because sessions were "
        "never closed in the worker.",
    )
    claude.hook("Stop", last_assistant_message="Fixed the pool leak.")
    texts = [m["text"] for m in memories(claude.home)]
    assert len(texts) == 2 and "connection pool was exhausted" in texts[1]
    # The first line was not read twice, so its memory was not reinforced.
    assert memories(claude.home)[0]["use_count"] == 0
    assert [e[6] for e in events(claude) if e[0] == "assistant"] == [
        "Done: tests pass.",
        "Fixed the pool leak.",
    ]
    conn = claude.db()
    offset = conn.execute("SELECT transcript_offset FROM sessions").fetchone()[0]
    conn.close()
    assert offset == claude.transcript.stat().st_size


def test_subagent_stop_reads_the_agent_transcript(claude: Claude, tmp_path: Path) -> None:
    agent = Claude(claude.home, claude.project, session_id=claude.session_id)
    agent.transcript = tmp_path / "agent-def456.jsonl"
    agent.say("user", "Always use tabs. Find why the build fails.")  # the main agent speaking
    agent.say(
        "assistant",
        "The root cause was that the linker flag -lssl was missing from build.rs on Alpine.",
    )
    claude.hook(
        "SubagentStop",
        agent_id="def456",
        agent_type="Explore",
        agent_transcript_path=str(agent.transcript),
        last_assistant_message="Analysis complete.",
    )
    texts = [m["text"] for m in memories(claude.home)]
    assert texts == [
        "The root cause was that the linker flag -lssl was missing from build.rs on Alpine."
    ]


def test_pre_compact_extracts(claude: Claude) -> None:
    claude.say("user", "We use pnpm, not npm, in this monorepo.")
    claude.hook("PreCompact", trigger="auto", custom_instructions="")
    assert [m["text"] for m in memories(claude.home)] == ["We use pnpm, not npm, in this monorepo."]


def test_session_end_only_marks_pending_and_next_start_does_the_work(claude: Claude) -> None:
    claude.say("user", "Remember that releases are cut from the release branch, never main.")
    claude.hook("SessionEnd", reason="prompt_input_exit")
    assert memories(claude.home) == []  # no transcript reading within the 1.5 s budget
    conn = claude.db()
    row = conn.execute("SELECT end_reason, pending, ended_at IS NOT NULL FROM sessions").fetchone()
    conn.close()
    assert row == ("prompt_input_exit", 1, 1)

    later = Claude(claude.home, claude.project)
    later.hook("SessionStart", source="startup")
    assert [m["text"] for m in memories(claude.home)] == [
        "Releases are cut from the release branch, never main."
    ]
    conn = claude.db()
    assert conn.execute(
        "SELECT pending FROM sessions WHERE session_id = ?", [claude.session_id]
    ).fetchone() == (0,)
    conn.close()


def test_a_long_ended_session_is_read_in_bounded_runs_and_never_cut_short(
    claude: Claude,
) -> None:
    """Without the engine a hook reads at most hooks.in_process_transcript_max_bytes per
    run (Claude Code waits for it); an ended session stays pending until its transcript
    is read to the end, so what was said last is still captured."""
    from tests.test_hooks_support import KEYWORD_ONLY, write_config

    write_config(claude.home, KEYWORD_ONLY + "hooks:\n  in_process_transcript_max_bytes: 3000\n")
    for n in range(20):
        claude.say("assistant", f"Step {n}: looked at the logs, nothing unusual yet. " * 3)
    claude.say("user", "Remember that releases are cut from the release branch, never main.")
    claude.hook("SessionEnd", reason="prompt_input_exit")
    conn = claude.db()
    for _ in range(30):  # each new session's start goes on with the pending one
        Claude(claude.home, claude.project).hook("SessionStart", source="startup")
        pending = conn.execute(
            "SELECT pending FROM sessions WHERE session_id = ?", [claude.session_id]
        ).fetchone()
        if pending == (0,):
            break
    conn.close()
    assert pending == (0,)
    assert "Releases are cut from the release branch, never main." in [
        m["text"] for m in memories(claude.home)
    ]


# --- fail-open -------------------------------------------------------------------


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"not json at all",
        b'{"session_id": "s1", "prompt": "how do I',
        b"[1, 2, 3]",
        b'{"session_id": 42, "cwd": ["x"], "prompt": {"a": 1}, "transcript_path": 7}',
        b'{"session_id": "s1", "prompt": "caf\xc3\xa9 \xff\xfe broken utf-8 psycopg2"}',
        b"\xff\xfe\x00\x00",
    ],
    ids=["empty", "not-json", "truncated", "array", "wrong-types", "bad-utf8-field", "binary"],
)
@pytest.mark.parametrize("event", ["UserPromptSubmit", "PostToolUse", "Stop", "SessionStart"])
def test_malformed_input_fails_open(claude: Claude, stdin: bytes, event: str) -> None:
    done = claude.raw(event, stdin)
    assert done.returncode == 0
    out = done.stdout.decode("utf-8")
    assert out == "" or json.loads(out)["hookSpecificOutput"]["hookEventName"] == event
    assert "Traceback" not in done.stderr.decode("utf-8", "replace")


def test_malformed_input_is_logged(claude: Claude) -> None:
    claude.raw("UserPromptSubmit", b"not json at all")
    assert "UserPromptSubmit: ignored: stdin is not JSON" in claude.log()


def test_multi_megabyte_prompt(claude: Claude) -> None:
    seed(
        claude,
        "psycopg2 connection refused on 5432: run `docker compose up -d db`.",
        "troubleshooting",
    )
    # A pasted blob after the question: only the prompt's head is the query.
    prompt = "psycopg2 connection refused on port 5432 again " + "0x1f " * 1_100_000
    assert len(prompt) > 5_000_000
    out = claude.context("UserPromptSubmit", prompt=prompt)
    assert "docker compose up -d db" in out
    assert len(out) <= 10_000
    stored = events(claude)[0][6]
    assert len(stored) <= 4000


def test_missing_transcript_fails_open(claude: Claude) -> None:
    out = claude.hook("Stop", transcript_path=str(claude.project / "nope.jsonl"))
    assert out == ""
    assert "does not exist" in claude.log()
    assert claude.hook("PreCompact", transcript_path="/nonexistent/dir/t.jsonl") == ""


def test_unwritable_home_fails_open(claude: Claude, tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    done = claude.raw(
        "UserPromptSubmit",
        json.dumps(claude.payload("UserPromptSubmit", prompt="hello there")).encode(),
        env={"MEMORY_LAYER_HOME": str(blocker / "home")},
    )
    assert done.returncode == 0 and done.stdout == b""


def test_output_is_capped_at_ten_thousand_characters(claude: Claude) -> None:
    for i in range(40):
        seed(
            claude,
            f"Gotcha {i}: " + "the deploy script needs the VPN and a fresh token " * 9,
            "gotcha",
        )
    write_config(
        claude.home,
        KEYWORD_ONLY + "hooks:\n  session_start_tokens: 100000\n"
        "  session_start_limit: 200\n  item_chars: 5000\n",
    )
    out = claude.hook("SessionStart", source="startup")
    assert len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) <= 10_000


# --- privacy and opt-out -------------------------------------------------------------


SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_secrets_and_private_spans_never_stored(claude: Claude) -> None:
    claude.context(
        "UserPromptSubmit",
        prompt=f"use token {SECRET} <private>my home address is 1 Elm St</private> to deploy",
    )
    claude.hook(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": f"curl -H 'Authorization: Bearer {SECRET}' https://api.example.com"},
        error=f"Exit code 22\ncurl: (22) 401 for token {SECRET}",
    )
    claude.say(
        "user",
        f"Remember that the deploy token lives in GITHUB_TOKEN={SECRET} on the CI box. "
        "<private>Remember that my bank PIN is 4321.</private>",
    )
    claude.hook("Stop", last_assistant_message=f"Set GITHUB_TOKEN={SECRET} and it worked.")
    conn = claude.db()
    dump = "\n".join(conn.iterdump())
    conn.close()
    assert SECRET not in dump
    assert "Elm St" not in dump and "4321" not in dump
    assert "[REDACTED" in dump


def test_ignore_file_opts_the_project_out(claude: Claude) -> None:
    seed(claude, "The staging database only accepts connections over the VPN.", "gotcha")
    (claude.project / ".memory-layer-ignore").write_text("")
    sub = claude.project / "src"
    sub.mkdir()
    assert claude.hook("SessionStart", source="startup") == ""
    assert claude.hook("UserPromptSubmit", prompt="staging database VPN", cwd=str(sub)) == ""
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "uv run pytest"},
        tool_response={"stdout": "ok"},
    )
    claude.say("user", "Remember that the integration tests need the stack up.")
    claude.hook("Stop")
    conn = claude.db()
    counts = [
        conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("usage", "session_events", "sessions")
    ]
    conn.close()
    assert counts == [0, 0, 0]
    assert len(memories(claude.home)) == 1


def test_config_ignore_projects(claude: Claude) -> None:
    seed(claude, "The staging database only accepts connections over the VPN.", "gotcha")
    write_config(
        claude.home, KEYWORD_ONLY + "hooks:\n  ignore_projects:\n    - github.com/acme/*\n"
    )
    assert claude.hook("SessionStart", source="startup") == ""
    write_config(
        claude.home, KEYWORD_ONLY + f"hooks:\n  ignore_projects:\n    - {claude.project}\n"
    )
    assert claude.hook("SessionStart", source="startup") == ""
    write_config(claude.home, KEYWORD_ONLY)
    assert "VPN" in claude.hook("SessionStart", source="startup")


def test_plugin_options_override_limit_and_capture(claude: Claude) -> None:
    seed(
        claude,
        "psycopg2 connection refused on 5432: run `docker compose up -d db`.",
        "troubleshooting",
    )
    off = {"CLAUDE_PLUGIN_OPTION_INJECT_LIMIT": "0", "CLAUDE_PLUGIN_OPTION_CAPTURE": "false"}
    payload = claude.payload("UserPromptSubmit", prompt="psycopg2 connection refused 5432")
    assert claude.raw("UserPromptSubmit", json.dumps(payload).encode(), env=off).stdout == b""
    tool = claude.payload(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "make test"},
        tool_response={"stdout": "ok"},
    )
    claude.raw("PostToolUse", json.dumps(tool).encode(), env=off)
    assert len(memories(claude.home)) == 1  # recorded as an event, nothing captured
    assert len(events(claude)) == 2


# --- a whole session -------------------------------------------------------------------


def test_scripted_session_learns_and_later_prompts_get_it(claude: Claude, tmp_path: Path) -> None:
    assert claude.hook("SessionStart", source="startup") == ""  # nothing known yet
    claude.say("user", "The tests fail with ModuleNotFoundError for redis. Please fix.")
    assert (
        claude.context(
            "UserPromptSubmit",
            prompt="The tests fail with ModuleNotFoundError for redis. Please fix.",
        )
        == ""
    )
    bash = {
        "stdout": "",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
        "noOutputExpected": False,
    }
    claude.hook(
        "PostToolUseFailure",
        tool_name="Bash",
        tool_input={"command": "uv run pytest tests/test_cache.py"},
        error="Exit code 1\nE   ModuleNotFoundError: No module named 'redis'",
        is_interrupt=False,
    )
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "uv add --dev redis"},
        tool_response={**bash, "stdout": "Resolved 12 packages"},
    )
    claude.hook(
        "PostToolUse",
        tool_name="Edit",
        tool_input={"file_path": str(claude.project / "pyproject.toml")},
        tool_response={"filePath": str(claude.project / "pyproject.toml")},
    )
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "uv run pytest tests/test_cache.py"},
        tool_response={**bash, "stdout": "5 passed"},
    )
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "uv run ruff check ."},
        tool_response={**bash, "stdout": "All checks passed!"},
    )
    claude.say(
        "assistant",
        "The root cause was that redis was only installed in the CI image, "
        "not declared as a dev dependency.",
    )
    claude.say("user", "Thanks. Remember that we use uv, not pip, for dependencies.")
    claude.hook("Stop", last_assistant_message="Added redis as a dev dependency; tests pass.")
    claude.hook("SessionEnd", reason="prompt_input_exit")

    by_category = {}
    for m in memories(claude.home):
        by_category.setdefault(m["category"], []).append(m["text"])
    trouble = " ".join(by_category["troubleshooting"])
    assert "No module named 'redis'" in trouble and "uv add --dev redis" in trouble
    assert "redis was only installed in the CI image" in trouble
    assert "Lint with `uv run ruff check .`." in by_category["command"]
    assert "We use uv, not pip, for dependencies." in by_category["tool_preference"]
    assert all(m["project"] == "github.com/acme/shop" for m in memories(claude.home))
    # The fail->fix story quotes the tool's error line: it waits for a person (issue 12,
    # provenance); the user's own rule and the assistant's diagnosis are active at once.
    held = [m for m in memories(claude.home) if m["status"] == "pending"]
    assert [(m["category"], m["origin"]) for m in held] == [("troubleshooting", "tool_output")]
    assert "uv add --dev redis" in held[0]["text"]
    accepted = subprocess.run(
        [sys.executable, "-m", "memory_layer", "review", "accept", held[0]["id"]],
        capture_output=True,
        text=True,
        env=claude.env,
        cwd=claude.project,
    )
    assert accepted.returncode == 0, accepted.stderr

    # A new session in the same project: the block at start, then recall per prompt.
    later = Claude(claude.home, claude.project)
    start = later.context("SessionStart", source="startup")
    assert "We use uv, not pip" in start
    shown = {r[0] for r in later.db().execute("SELECT memory_id FROM usage")}
    hidden = [m for m in memories(claude.home) if m["id"] not in shown]
    write_config(claude.home, KEYWORD_ONLY + "hooks:\n  session_start_limit: 1\n")
    other = Claude(claude.home, claude.project)
    other.context("SessionStart", source="startup")
    answer = other.context(
        "UserPromptSubmit", prompt="pytest fails: ModuleNotFoundError No module named redis"
    )
    assert "uv add --dev redis" in answer
    assert hidden or answer
    # The same project under another checkout path, same remote: same memories.
    clone = make_project(tmp_path / "elsewhere" / "shop-clone")
    assert "uv" in Claude(claude.home, clone).context("SessionStart", source="startup")


def test_cli_hook_command_is_the_same_door(claude: Claude) -> None:
    import subprocess
    import sys

    seed(claude, "psycopg2 connection refused on 5432: run `docker compose up -d db`.", "command")
    payload = claude.payload("UserPromptSubmit", prompt="psycopg2 connection refused 5432")
    done = subprocess.run(
        [sys.executable, "-m", "memory_layer", "hook", "UserPromptSubmit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=claude.project,
        env={**claude.env, "PYTHONSAFEPATH": "1"},
        timeout=60,
    )
    assert done.returncode == 0
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert (
        out["hookEventName"] == "UserPromptSubmit" and "docker compose" in out["additionalContext"]
    )
    bad = subprocess.run(
        [sys.executable, "-m", "memory_layer", "hook", "UserPromptSubmit"],
        input=b"garbage",
        capture_output=True,
        env={**claude.env, "PYTHONSAFEPATH": "1"},
        timeout=60,
    )
    assert bad.returncode == 0 and bad.stdout == b""


def test_pending_work_respects_an_opt_out_added_after_the_session(claude: Claude) -> None:
    claude.say("user", "Remember that releases are cut from the release branch, never main.")
    claude.hook("SessionEnd", reason="logout")
    (claude.project / ".memory-layer-ignore").write_text("")
    Claude(claude.home, make_project(claude.project.parent / "other")).hook(
        "SessionStart", source="startup"
    )
    assert memories(claude.home) == []
    conn = claude.db()
    assert conn.execute("SELECT pending FROM sessions").fetchall() == [(0,), (0,)]
    conn.close()


@pytest.mark.parametrize(
    ("name", "content"),
    [("memories.db", b"this is not a database" * 100), ("config.yaml", b"hooks: [unclosed\n")],
)
def test_broken_store_or_config_fails_open_and_is_logged(
    claude: Claude, name: str, content: bytes
) -> None:
    (claude.home / name).write_bytes(content)
    for event, fields in (
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "how do I run the tests"}),
        ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "make test"}}),
        ("SessionEnd", {"reason": "other"}),
    ):
        done = claude.raw(event, json.dumps(claude.payload(event, **fields)).encode())
        if name == "memories.db" and event == "SessionStart":
            # Said once, at the start: memory is off, and how to fix it (tests/test_faults).
            assert done.returncode == 0
            assert "memory is off" in json.loads(done.stdout)["systemMessage"]
            continue
        assert (done.returncode, done.stdout) == (0, b""), event
    log = claude.log()
    assert "failed (fail-open" in log
    assert ("not a memory-layer database" in log) or ("config.yaml" in log)


def test_task_success_credits_the_memory_injected_during_it(claude: Claude) -> None:
    """The hooks feed outcome learning: a memory injected while a task was open, then
    acted on, is credited when the task completes."""
    pytest.importorskip("memory_layer.outcomes.claude")
    memory = seed(
        claude,
        "psycopg2 connection refused on 5432: run `docker compose up -d db` first.",
        "troubleshooting",
    )
    task = {"task_id": "1", "task_subject": "Fix the failing db tests"}
    claude.hook("TaskCreated", **task)
    assert "docker compose up -d db" in claude.context(
        "UserPromptSubmit", prompt="psycopg2 connection refused on 5432 in the tests"
    )
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "docker compose up -d db"},
        tool_response={"stdout": "Container db Started", "stderr": "", "interrupted": False},
    )
    claude.hook("TaskCompleted", **task)
    claude.hook("Stop", last_assistant_message="Started the db with docker compose; tests pass.")
    (row,) = [m for m in memories(claude.home) if m["id"] == memory.id]
    assert row["success_count"] == 1 and row["outcome_score"] > 0


def test_a_locked_store_does_not_hold_the_hook(claude: Claude) -> None:
    """Another process holding the write lock: the hook gives up its writes after its
    short busy timeout and still exits 0 (no assertion on time: the hook must finish)."""
    import sqlite3

    claude.hook("SessionStart", source="startup")  # creates the store
    blocker = sqlite3.connect(str(claude.home / "memories.db"), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        done = claude.raw(
            "SessionEnd", json.dumps(claude.payload("SessionEnd", reason="other")).encode()
        )
        assert (done.returncode, done.stdout) == (0, b"")
        assert "locked" in claude.log()
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
