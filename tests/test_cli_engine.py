"""`memory-layer recall` and `remember` answered by the warm engine when one runs.

Real processes: the engine started by `memory-layer engine start`, the CLI as a fresh
`python -m memory_layer` in a git project. The engine counts the requests it answers,
so each test can tell who answered.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_layer.engine import lifecycle
from memory_layer.engine.client import request
from memory_layer.paths import SESSION_ENV
from tests.test_hooks_support import engine_pids, make_project, write_config

ENGINE_KEYWORD = "embedding:\n  enabled: false\nengine:\n  enabled: true\n  idle_timeout_s: 60\n"


@pytest.fixture
def project(user_home: Path, tmp_path: Path) -> Iterator[Path]:
    write_config(user_home, ENGINE_KEYWORD)
    yield make_project(tmp_path / "shop")
    lifecycle.stop(timeout=5.0)
    for pid in engine_pids(user_home):
        os.kill(pid, signal.SIGKILL)


def cli(project: Path, *args: str, env: dict[str, str] | None = None, stdin: str | None = None):
    base = {k: v for k, v in os.environ.items() if k != SESSION_ENV}
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        cwd=project,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        input=stdin,
        timeout=120,
    )


def start_engine(project: Path) -> None:
    done = cli(project, "engine", "start")
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and request({"op": "ping"}, 1.0) is None:
        time.sleep(0.1)


def engine_requests() -> int:
    reply = request({"op": "status"}, 5.0)
    assert reply and reply["ok"]
    return int(reply["status"]["requests"])


def test_remember_and_recall_are_answered_by_the_engine(project: Path, user_home: Path) -> None:
    start_engine(project)
    before = engine_requests()
    stored = cli(project, "remember", "Run the API tests with make test-api", "-c", "command", "--json")
    assert stored.returncode == 0, stored.stderr
    record = json.loads(stored.stdout)
    # The engine's write went through the trust policy: the CLI is trusted, so stamped.
    assert record["status"] == "active" and record["approved_by"] == "cli"
    assert record["project"] == "github.com/acme/shop"  # the CLI's cwd, resolved there
    found = cli(project, "recall", "how to run the API tests", "--json")
    assert found.returncode == 0, found.stderr
    assert [r["id"] for r in json.loads(found.stdout)] == [record["id"]]
    # Both answered by the engine (plus this status request), not by the CLI itself.
    assert engine_requests() == before + 3
    again = cli(project, "remember", "Run the API tests with make test-api", "-c", "command")
    assert again.returncode == 0 and again.stdout.strip() == record["id"]
    assert "Reinforced existing memory" in again.stderr


def test_recall_through_the_engine_records_the_session(project: Path, user_home: Path) -> None:
    start_engine(project)
    stored = cli(project, "remember", "The staging DB restore needs pg_restore --no-owner")
    memory_id = stored.stdout.strip()
    found = cli(project, "recall", "staging restore", env={SESSION_ENV: "sess-42"})
    assert found.returncode == 0 and memory_id in found.stdout
    import sqlite3

    conn = sqlite3.connect(user_home / "memories.db")
    rows = conn.execute("SELECT memory_id, session_id, kind FROM usage").fetchall()
    conn.close()
    assert rows == [(memory_id, "sess-42", "recalled")]


def test_bad_input_is_refused_with_the_same_message_either_way(project: Path) -> None:
    def errors() -> list[tuple[int, str]]:
        return [
            (done.returncode, done.stderr.strip().splitlines()[-1])
            for done in (
                cli(project, "remember", "   "),
                cli(project, "recall", ""),
                cli(project, "recall", "x", "-c", "nonsense"),
                cli(project, "remember", "x" * 20_000),
            )
        ]

    alone = errors()
    start_engine(project)
    assert errors() == alone
    assert [code for code, _ in alone] == [1, 1, 1, 1]
    assert "empty" in alone[0][1] and "Unknown category" in alone[2][1]
    assert "limit is 10000" in alone[3][1]
    # Options that exclude each other are click's usage error (exit 2) either way.
    for args in (["recall", "x", "-p", "a", "--all-projects"], ["remember", "x", "-p", "a", "-g"]):
        done = cli(project, *args)
        assert done.returncode == 2 and "not both" in done.stderr


def test_stdin_text_reaches_the_engine(project: Path) -> None:
    start_engine(project)
    done = cli(project, "remember", "-", "--global", "--json", stdin="Deploys freeze on Fridays\n")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"] == "Deploys freeze on Fridays"


def test_without_an_engine_the_cli_answers_and_starts_none(project: Path, user_home: Path) -> None:
    stored = cli(project, "remember", "Use ruff for linting, not flake8", "--global")
    assert stored.returncode == 0, stored.stderr
    found = cli(project, "recall", "linting with ruff")
    assert found.returncode == 0 and "ruff" in found.stdout
    assert list(engine_pids(user_home)) == []
