"""Helpers for the hook and engine tests: run hooks exactly as Claude Code spawns them.

(No tests here; the module is imported by tests/test_hooks_*.py and tests/test_engine_*.py.)
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
HOOK_COMMANDS = {
    event: group["hooks"][0]["command"]
    for event, groups in json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"].items()
    for group in groups
}
KEYWORD_ONLY = "embedding:\n  enabled: false\nengine:\n  enabled: false\n"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")


class Claude:
    """Spawns hooks the way Claude Code does: the hooks.json command through a shell,
    with ${CLAUDE_PLUGIN_ROOT} substituted, the event JSON on stdin and the project as cwd."""

    def __init__(self, home: Path, project: Path, session_id: str | None = None) -> None:
        self.home = home
        self.project = project
        self.session_id = session_id or str(uuid.uuid4())
        self.transcript = project.parent / f"{self.session_id}.jsonl"
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("MEMORY_LAYER_", "CLAUDE_"))
        }
        # A home of its own: no ~/.gitconfig, ~/.claude/tasks or other state of the
        # machine's user leaks into what the hooks see.
        fake_home = project.parent / "user-home"
        fake_home.mkdir(exist_ok=True)
        self.env.update(
            HOME=str(fake_home),
            MEMORY_LAYER_HOME=str(home),
            MEMORY_LAYER_PYTHON=sys.executable,
            CLAUDE_PROJECT_DIR=str(project),
            CLAUDE_PLUGIN_ROOT=str(REPO),
            HF_HUB_OFFLINE="1",
        )

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        data = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "permission_mode": "default",
            "hook_event_name": event,
        }
        data.update(fields)
        return data

    def spawn(self, event: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        command = HOOK_COMMANDS[event].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
        return subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(self.project),
            env={**self.env, **(env or {})},
        )

    def raw(
        self, event: str, stdin: bytes, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        proc = self.spawn(event, env)
        # communicate() reads stdout and stderr to EOF: it returns only once every
        # process holding the hook's pipes (an engine it started, too) let go.
        out, err = proc.communicate(stdin, timeout=60)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def hook(self, event: str, **fields: Any) -> str:
        """Run the hook; assert it exited 0; return its stdout."""
        done = self.raw(event, json.dumps(self.payload(event, **fields)).encode())
        assert done.returncode == 0, done.stderr
        return done.stdout.decode("utf-8")

    def context(self, event: str, **fields: Any) -> str:
        """The additionalContext the hook injected ('' when it printed nothing)."""
        out = self.hook(event, **fields).strip()
        if not out:
            return ""
        data = json.loads(out)
        assert data["hookSpecificOutput"]["hookEventName"] == event
        return data["hookSpecificOutput"]["additionalContext"]

    def say(self, role: str, text: str) -> None:
        """Append one line to the transcript in Claude Code's JSONL shape."""
        line: dict[str, Any] = {
            "parentUuid": None,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.project),
            "sessionId": self.session_id,
            "version": "2.1.240",
            "gitBranch": "main",
            "type": role,
            "uuid": str(uuid.uuid4()),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
        }
        if role == "user":
            line["message"] = {"role": "user", "content": text}
        else:
            line["message"] = {
                "id": "msg_" + uuid.uuid4().hex[:16],
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-5",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
            }
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(str(self.home / "memories.db"))

    def log(self) -> str:
        path = self.home / "logs" / "hooks.log"
        return path.read_text(encoding="utf-8") if path.exists() else ""


def make_project(path: Path, remote: str | None = "git@github.com:acme/shop.git") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def keyword_claude(home: Path, tmp_path: Path) -> Claude:
    """A Claude Code stand-in in a fresh git project, with keyword-only, engine-less
    config (fast subprocesses)."""
    write_config(home, KEYWORD_ONLY)
    return Claude(home, make_project(tmp_path / "shop"))


def memories(home: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(str(home / "memories.db"))
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute("SELECT * FROM memories ORDER BY created_at").fetchall()
    finally:
        conn.close()
    return [dict(r) for r in rows]


def engine_pids(home: Path) -> Iterator[int]:
    """Pids of engine processes started for this user directory."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"memory_layer.engine" in cmd and f"MEMORY_LAYER_HOME={home}".encode() in env:
            yield int(entry.name)
