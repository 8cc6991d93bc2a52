"""The in-process hook path stays light: what a PostToolUse without the engine imports.

Speed itself is measured in benchmarks/hooks_latency.py; this checks the cause that
can regress silently, a heavy module creeping back onto the hook path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.test_hooks_support import KEYWORD_ONLY, make_project, write_config

HEAVY = ("yaml", "git", "sqlite_utils", "numpy", "click", "fastembed", "flask", "typing")

SCRIPT = """
import json, sys
from memory_layer.hooks.main import dispatch
dispatch(sys.argv[1], sys.stdin.buffer.read(), {})
print(json.dumps(sorted(sys.modules)))
"""


def loaded(home: Path, project: Path, event: str, payload: dict) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_LAYER_", "CLAUDE_"))}
    env["MEMORY_LAYER_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, event],
        input=json.dumps({"session_id": "s1", "cwd": str(project), **payload}).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        check=True,
        timeout=60,
    )
    return set(json.loads(done.stdout))


def test_post_tool_use_in_process_imports_nothing_heavy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, KEYWORD_ONLY)  # engine off: the hook does the work itself
    project = make_project(tmp_path / "shop")
    bash = {
        "tool_name": "Bash",
        "tool_input": {"command": "uv run pytest tests/test_api.py"},
        "tool_response": {"stdout": "3 passed", "stderr": "", "interrupted": False},
    }
    first = loaded(home, project, "PostToolUse", bash)
    assert "yaml" in first  # config.yaml parsed once ...
    bash["tool_input"] = {"command": "uv run ruff check ."}  # a new command to capture
    second = loaded(home, project, "PostToolUse", bash)
    assert "memory_layer.memories" in second  # it did capture (a command memory)
    heavy = sorted(m for m in second if m.split(".")[0] in HEAVY)
    assert heavy == []  # ... and then served from run/config-cache.json
    # Outcome learning's database code is not needed for a Bash call, nor relay
    # detection's regexes and window (only where a transcript is read).
    assert "memory_layer.outcomes.lifecycle" not in second
    assert "memory_layer.capture.provenance" not in second


def test_a_tool_call_with_nothing_to_capture_loads_no_dataclasses(tmp_path: Path) -> None:
    """The common PostToolUse (a command already seen) without the engine: no
    ``dataclasses`` (it loads ``inspect``, ~10 ms), no memories storage, and none of the
    failure-reading or redaction patterns a green run never needs compiled."""
    home = tmp_path / "home"
    write_config(home, KEYWORD_ONLY)
    project = make_project(tmp_path / "shop")
    bash = {
        "tool_name": "Bash",
        "tool_input": {"command": "uv run pytest tests/test_api.py"},
        "tool_response": {"stdout": "3 passed", "stderr": "", "interrupted": False},
    }
    loaded(home, project, "PostToolUse", bash)  # parses config.yaml once
    again = loaded(home, project, "PostToolUse", bash)
    assert not {"dataclasses", "inspect", "typing"} & again
    assert "memory_layer.storage.records" not in again
    assert "memory_layer.memories" not in again  # nothing new was captured
