"""Tool-event signals: failure → fix → success stories and project commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_layer.capture.commands import command_key, command_kind, normalise_command
from memory_layer.capture.signals import (
    ToolEvent,
    command_candidates,
    error_line,
    event_from_hook,
    events_from_entries,
    signal_candidates,
    troubleshooting_candidates,
)
from memory_layer.capture.transcript import read_new_entries

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"


def bash(command: str, error: str = "", output: str = "") -> ToolEvent:
    return ToolEvent("Bash", command, ok=not error, error=error, output=output)


def edit(path: str) -> ToolEvent:
    return ToolEvent("Edit", file_path=path)


PYTEST_IMPORT_ERROR = (
    "Exit code 1\nImportError while loading conftest '/p/tests/conftest.py'.\n"
    "tests/conftest.py:3: in <module>\n    import psycopg2\n"
    "E   ModuleNotFoundError: No module named 'psycopg2'"
)


def test_failure_fixed_by_an_install() -> None:
    events = [
        bash("cd /p && python -m pytest tests/ -q 2>&1 | tail -20", PYTEST_IMPORT_ERROR),
        bash("ls"),
        bash("pip install psycopg2-binary"),
        bash("pytest tests/ -q"),
    ]
    (cand,) = troubleshooting_candidates(events)
    assert cand.category == "troubleshooting"
    assert cand.text == (
        "`python -m pytest tests/ -q` failed with `ModuleNotFoundError: No module named "
        "'psycopg2'`; fixed by running `pip install psycopg2-binary`."
    )
    assert "ls" not in cand.text  # trivial commands are not part of the fix
    assert cand.confidence == 0.6


def test_config_edits_count_as_the_fix_with_paths_relative_to_cwd() -> None:
    events = [
        bash("npm test", "Exit code 1\nError: Cannot find module 'express'"),
        edit("/app/package.json"),
        bash("npm install"),
        bash("npm test"),
    ]
    (cand,) = troubleshooting_candidates(events, cwd="/app")
    assert "fixed by running `npm install` and editing package.json" in cand.text


def test_edit_only_fix_of_a_config_file() -> None:
    events = [
        bash(
            "docker build -t api .",
            'Exit code 1\nERROR: failed to solve: "/requirements.txt": not found',
        ),
        edit("/srv/api/Dockerfile"),
        bash("docker build -t api ."),
    ]
    (cand,) = troubleshooting_candidates(events, cwd="/srv/api")
    assert cand.text.endswith("fixed by editing Dockerfile.")
    assert cand.confidence == 0.5


@pytest.mark.parametrize(
    "error",
    [
        "Exit code 1\nE       AssertionError: assert 1 == 2",
        "Exit code 1\nsrc/a.py:1:1: F401 `os` imported but unused",
        "Exit code 1\nKeyError: 'total'",
    ],
)
def test_editing_source_code_to_pass_is_ordinary_work(error: str) -> None:
    events = [bash("pytest -q", error), edit("/p/src/a.py"), bash("pytest -q")]
    assert troubleshooting_candidates(events, cwd="/p") == []


def test_a_plain_retry_is_a_flake_not_a_lesson() -> None:
    events = [bash("pytest -q", "Exit code 1\nConnectionError: reset by peer"), bash("pytest -q")]
    assert troubleshooting_candidates(events) == []


def test_a_different_successful_variant_is_the_fix() -> None:
    events = [
        bash("pytest tests/", "Exit code 4\nERROR: usage: unrecognized arguments: --cov"),
        bash("pytest tests/ -p no:cov"),
    ]
    (cand,) = troubleshooting_candidates(events)
    assert "fixed by running `pytest tests/ -p no:cov` instead" in cand.text


def test_never_fixed_means_no_candidate() -> None:
    events = [
        bash("cargo build", "Exit code 101\nerror: linker `cc` not found"),
        bash("sudo apt-get install -y clang"),
        bash("cargo build", "Exit code 101\nerror: linker `cc` not found"),
    ]
    assert troubleshooting_candidates(events) == []


def test_partial_progress_counts_when_the_chain_ends_in_success() -> None:
    events = [
        bash("make", "Exit code 2\nfatal error: openssl/ssl.h: No such file or directory"),
        bash("sudo apt-get install -y libssl-dev"),
        bash("make", "Exit code 2\nerror: zlib.h: No such file or directory"),
        bash("sudo apt-get install -y zlib1g-dev"),
        bash("make"),
    ]
    texts = [c.text for c in troubleshooting_candidates(events)]
    assert len(texts) == 2
    assert "openssl/ssl.h" in texts[0] and "libssl-dev" in texts[0]
    assert "zlib.h" in texts[1] and "zlib1g-dev" in texts[1]


def test_same_target_counts_as_similar() -> None:
    events = [
        bash(
            "python scripts/migrate.py", "Exit code 1\nModuleNotFoundError: No module named 'yaml'"
        ),
        bash("pip install pyyaml"),
        bash("uv run python scripts/migrate.py --dry-run"),
    ]
    (cand,) = troubleshooting_candidates(events)
    assert "pyyaml" in cand.text


def test_new_from_reports_each_story_and_command_once() -> None:
    log = [
        bash("pytest -q", PYTEST_IMPORT_ERROR),
        bash("pip install psycopg2-binary"),
    ]
    assert signal_candidates(log) == []  # not fixed yet
    seen = len(log)
    log += [bash("pytest -q"), bash("git status")]
    first = signal_candidates(log, new_from=seen)
    assert sorted(c.category for c in first) == ["command", "troubleshooting"]
    seen = len(log)
    log += [bash("echo hi")]
    assert signal_candidates(log, new_from=seen) == []


def test_reading_the_failing_file_is_not_a_retry() -> None:
    events = [
        bash("python app.py", "Exit code 1\nModuleNotFoundError: No module named 'flask'"),
        bash("cat app.py"),
        bash("git add app.py"),
        bash("pip install flask"),
    ]
    assert troubleshooting_candidates(events) == []


def test_trivial_or_interrupted_failures_are_ignored() -> None:
    events = [
        bash("grep -rn cache .", "Exit code 1\ngrep: ./x: Permission denied"),
        bash("chmod +r x"),
        bash("grep -rn cache src/"),
        bash("pytest", "[Request interrupted by user for tool use]"),
        bash("pip install -e ."),
        bash("pytest"),
    ]
    assert troubleshooting_candidates(events) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PYTEST_IMPORT_ERROR, "ModuleNotFoundError: No module named 'psycopg2'"),
        (
            "Exit code 1\nError: Cannot find module 'express'\nRequire stack:\n- /a/server.js",
            "Error: Cannot find module 'express'",
        ),
        (
            "   Compiling x v0.1.0\nerror[E0432]: unresolved import `foo`\n"
            "error: could not compile `x` due to 1 previous error",
            "error[E0432]: unresolved import `foo`",
        ),
        (
            "internal/db/q.go:12:2: undefined: pgtype\nFAIL\tshop/internal/db [build failed]",
            "internal/db/q.go:12:2: undefined: pgtype",
        ),
        (
            "Exit code 127\nbash: line 1: rg: command not found",
            "bash: line 1: rg: command not found",
        ),
        (
            "Exit code 1\nnpm ERR! code E404\nnpm ERR! 404 Not Found - GET x",
            "404 Not Found - GET x",
        ),
        ("Exit code 1", ""),
    ],
)
def test_error_line(text: str, expected: str) -> None:
    assert error_line(text) == expected


@pytest.mark.parametrize(
    ("command", "normalised"),
    [
        ("cd /p && pytest -x 2>&1 | tail -n 30", "pytest -x"),
        ("cd a && cd b && npm test; echo exit=$?", "npm test"),
        ("timeout 600 cargo test || true", "cargo test"),
        ("make lint   2>&1 | head -50", "make lint"),
    ],
)
def test_normalise_command(command: str, normalised: str) -> None:
    assert normalise_command(command) == normalised


@pytest.mark.parametrize(
    ("command", "key", "kind"),
    [
        ("pytest -q", "pytest", "test"),
        (".venv/bin/python -m pytest tests/", "pytest", "test"),
        ("uv run pytest", "pytest", "test"),
        ("DB=1 make test", "make test", "test"),
        ("make", "make", "build"),
        ("npm test", "npm test", "test"),
        ("npm run test:unit", "npm run test:unit", "test"),
        ("pnpm --filter web build", "pnpm build", "build"),
        ("npm run lint -- --max-warnings=0", "npm run lint", "lint"),
        ("npx tsc --noEmit", "tsc", "typecheck"),
        ("mypy src", "mypy", "typecheck"),
        ("ruff check .", "ruff check", "lint"),
        ("ruff format --check .", "ruff format", "format"),
        ("cargo clippy -- -D warnings", "cargo clippy", "lint"),
        ("cargo build --release", "cargo build", "build"),
        ("go test ./...", "go test", "test"),
        ("go vet ./...", "go vet", "lint"),
        ("./gradlew build", "gradlew build", "build"),
        ("mvn -q package", "mvn package", "build"),
        ("docker build -t api .", "docker build", "build"),
        ("docker compose build web", "docker compose", "build"),
        ("eslint src", "eslint", "lint"),
        ("git commit -m x", "git commit", ""),
        ("npm install", "npm install", ""),
        ("pnpm dev", "pnpm dev", ""),
        ("python app.py", "python app.py", ""),
    ],
)
def test_command_key_and_kind(command: str, key: str, kind: str) -> None:
    assert command_key(command) == key
    assert command_kind(command) == kind


def test_command_candidates_pick_the_general_form_and_skip_trivia() -> None:
    events = [
        bash("ls -la"),
        bash("cat README.md"),
        bash("git status"),
        bash("echo hi"),
        bash("cd /p && pytest tests/test_db.py::test_insert -q"),
        bash("pytest tests/ -k slow"),
        bash("python -m pytest tests/ -q 2>&1 | tail -5"),
        bash("pytest -q"),
        bash("ruff check . --fix"),
        bash("ruff check ."),
        bash("npm test", "Exit code 1\nboom"),  # failed: not a command memory
    ]
    found = command_candidates(events)
    assert [(c.text, c.category) for c in found] == [
        ("Run the tests with `pytest -q`.", "command"),
        ("Lint with `ruff check .`.", "command"),
    ]
    assert all(c.extractor.startswith("signals.command.") for c in found)


def test_event_from_hook_payloads() -> None:
    # Shapes from the hooks reference (PostToolUseFailure) and a captured PostToolUse.
    failure = event_from_hook(
        "Bash",
        {"command": "npm test", "description": "Run test suite"},
        error="Exit code 1\nError: Cannot find module 'express'",
    )
    assert (failure.ok, failure.command) == (False, "npm test")
    assert error_line(failure.error) == "Error: Cannot find module 'express'"
    success = event_from_hook(
        "Bash",
        {"command": "echo probe"},
        {"stdout": "probe", "stderr": "", "interrupted": False, "isImage": False},
    )
    assert (success.ok, success.output) == (True, "probe")
    interrupted = event_from_hook("Bash", {"command": "sleep 99"}, {"interrupted": True})
    assert interrupted.ok is False
    edited = event_from_hook(
        "Edit",
        {"file_path": "/p/src/db.py", "old_string": "a", "new_string": "b"},
        {"filePath": "/p/src/db.py", "oldString": "a", "newString": "b"},
    )
    assert edited.is_edit and edited.file_path == "/p/src/db.py"


def test_events_are_cleaned_and_round_trip() -> None:
    event = event_from_hook(
        "Bash",
        {"command": "DB_PASSWORD=hunter2 psql -c 'select 1'"},
        error="Exit code 2\npsql: error: password authentication failed; pw was hunter2? "
        + "x" * 5000,
    )
    assert "hunter2" not in event.command
    assert len(event.error) < 2100
    data = json.loads(json.dumps(event.to_dict()))
    assert ToolEvent.from_dict(data) == event
    assert ToolEvent.from_dict({"tool": "Bash", "ok": "weird", "command": 3}).command == ""


def test_events_from_fixture_transcript() -> None:
    entries, _ = read_new_entries(FIXTURES / "py_missing_dependency.jsonl")
    events = events_from_entries(entries)
    assert [e.tool for e in events][:3] == ["Bash", "Read", "Bash"]
    assert events[0].ok is False and "psycopg2" in events[0].error
    assert events[3].tool == "Edit" and events[3].file_path.endswith("requirements-dev.txt")
    texts = [c.text for c in signal_candidates(events, cwd="/home/dev/shop")]
    assert any("psycopg2-binary" in t and t.startswith("`python -m pytest") for t in texts)
    assert "Run the tests with `python -m pytest tests/ -q`." in texts


def test_single_test_file_runs_do_not_become_command_memories():
    from memory_layer.capture.signals import ToolEvent, command_candidates

    events = [
        ToolEvent(
            tool="Bash",
            command=f"uv run pytest tests/test_{n}.py",
            ok=True,
            error="",
            output="1 passed",
            file_path="",
            ts=f"2026-01-01T00:00:0{n}Z",
        )
        for n in range(5)
    ]
    assert command_candidates(events) == []
    events.append(
        ToolEvent(
            tool="Bash",
            command="uv run pytest -q",
            ok=True,
            error="",
            output="50 passed",
            file_path="",
            ts="2026-01-01T00:00:09Z",
        )
    )
    texts = [c.text for c in command_candidates(events)]
    assert texts == ["Run the tests with `uv run pytest -q`."]


# --- failures behind a success status (issue 12) --------------------------------------


@pytest.mark.parametrize(
    "command, output",
    [
        ("bun run typecheck 2>&1 | head -50", 'error: Script not found "typecheck"'),
        ("npm test || true", "FAIL src/app.test.js\n  ● sums\nTests: 1 failed, 3 total"),
        ("uv run pytest -q; echo done", "E   ModuleNotFoundError: No module named 'redis'\ndone"),
        ("bundle install 2>&1 | tail -5", "Could not locate Gemfile"),
        ("npx create-thing app", "\x1b[1m\x1b[31merror\x1b[0m: IO error: not a terminal"),
    ],
)
def test_a_failure_printed_behind_a_success_status_is_a_failure(command, output):
    from memory_layer.capture.signals import output_failure

    assert output_failure(command, output)
    event = event_from_hook("Bash", {"command": command}, {"stdout": output, "stderr": ""})
    assert not event.ok and event.error


@pytest.mark.parametrize(
    "command, output",
    [
        ("cat src/errors.py", "error: Script not found is what we print\nraise ValueError()"),
        ("grep -rn 'ERROR:' logs/", "logs/a.log:3:ERROR: disk full"),
        ("uv run pytest -q", "12 passed in 0.4s"),
        ("cargo test", "running 3 tests\ntest result: ok. 3 passed; 0 failed"),
        ("ls -la", "error: not a real file name"),
    ],
)
def test_output_of_readers_and_passing_runs_is_no_failure(command, output):
    from memory_layer.capture.signals import output_failure

    assert not output_failure(command, output)


def test_a_masked_failure_then_the_right_command_is_a_story():
    events = [
        ToolEvent(
            "Bash",
            "bun run typecheck | head -50",
            ok=False,
            error='error: Script not found "typecheck"',
        ),
        ToolEvent("Bash", "bun tsc --noEmit -p apps/web/tsconfig.json", ok=True),
    ]
    assert command_candidates(events[1:])[0].text.startswith("Type-check with `bun tsc")
    # The same command read through another pipe is not a fix.
    again = [
        ToolEvent(
            "Bash",
            "curl -s https://api.example.com/x | python3 -c 'import json'",
            ok=False,
            error="AttributeError: 'str' object has no attribute 'get'",
        ),
        ToolEvent("Bash", "curl -s https://api.example.com/x | head -c 500", ok=True),
    ]
    assert troubleshooting_candidates(again) == []


def test_a_fail_then_fix_story_carries_the_tool_output_origin():
    events = [
        ToolEvent("Bash", "pytest", ok=False, error="E   ModuleNotFoundError: No module named 'x'"),
        ToolEvent("Bash", "uv add x", ok=True),
        ToolEvent("Bash", "pytest", ok=True),
    ]
    (story,) = troubleshooting_candidates(events)
    assert story.origin == "tool_output"


def test_command_memories_skip_file_lists_and_compound_tails():
    events = [
        ToolEvent("Bash", "bundle exec rubocop app/models/user.rb app/models/post.rb", ok=True),
        ToolEvent(
            "Bash", 'bundle exec rubocop 2>&1 | tail -10; echo "---"; git status --short', ok=True
        ),
        ToolEvent("Bash", 'source "$HOME/.cargo/env" && cargo build', ok=True),
        ToolEvent("Bash", "bundle exec rubocop", ok=True),
    ]
    texts = sorted(c.text for c in command_candidates(events))
    assert texts == ["Build with `cargo build`.", "Lint with `bundle exec rubocop`."]
