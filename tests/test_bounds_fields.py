"""Issue 14 point 6: every stored field is bounded, and so is what one client may leave
in the review inbox, with an error naming the limit: through a real MCP client session,
the `memory-layer` CLI, real HTTP to the dashboard, the mirror and import."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from mcp import ClientSession

from memory_layer.storage.db import open_db
from tests.test_mcp_server import run
from tests.test_web_serve import environment, fetch, free_port, serve, stop, wait_for_port

KEYWORD_ONLY = "embedding:\n  enabled: false\n"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
        env={**os.environ},
    )


def _home(user_home: Path, extra: str = "") -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(KEYWORD_ONLY + extra)


def _error(result: Any) -> str:
    assert result.is_error, result.content
    return result.content[0].text


def test_mcp_refuses_oversized_fields_and_caps_open_proposals_per_client(
    user_home: Path, tmp_path: Path
) -> None:
    _home(user_home, "trust:\n  max_open_proposals: 3\n")
    workdir = tmp_path / "project"
    workdir.mkdir()

    async def steps(s: ClientSession) -> dict[str, Any]:
        text = "Staging deploys run from the release branch, number {}"
        out: dict[str, Any] = {
            "subject": await s.call_tool(
                "propose", {"text": "x is y z w", "subject": "s" * 100_000, "key": "k"}
            ),
            "key": await s.call_tool(
                "propose", {"text": "x is y z w", "subject": "box", "key": "k" * 500}
            ),
            "reason": await s.call_tool("propose", {"text": "x is y z w", "reason": "r" * 200_000}),
            "scene": await s.call_tool("propose", {"text": "x is y z w", "scene": "s" * 65}),
            "check": await s.call_tool(
                "check", {"text": "x is y z w", "subject": "s" * 201, "key": "k"}
            ),
            "accepted": [
                await s.call_tool("propose", {"text": text.format(n)}) for n in range(3)
            ],
        }
        out["fourth"] = await s.call_tool("propose", {"text": text.format(4)})
        return out

    out = run(workdir, steps)
    assert "The subject is 100000 characters; the limit is 200" in _error(out["subject"])
    assert "The key is 500 characters; the limit is 100" in _error(out["key"])
    assert "The reason is 200000 characters; the limit is 2000" in _error(out["reason"])
    assert "The scene is 65 characters; the limit is 64" in _error(out["scene"])
    assert "The subject is 201 characters; the limit is 200" in _error(out["check"])
    assert not any(result.is_error for result in out["accepted"])
    fourth = _error(out["fourth"])
    assert "mcp:codex already has 3 proposals waiting for review; the limit is 3" in fourth
    assert "trust.max_open_proposals" in fourth
    db = open_db()
    # Only the three accepted proposals were stored; nothing oversized reached the log.
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 3
    longest = db.execute(
        "SELECT max(length(coalesce(context, ''))) FROM operations"
    ).fetchone()[0]
    assert longest < 5000

    # Another client has its own share; a change proposal counts toward it too.
    async def other(s: ClientSession) -> Any:
        return await s.call_tool("propose", {"text": "Ops tokens rotate on Mondays at 9:00"})

    assert not run(workdir, other, args=("--client", "cursor")).is_error


def test_cli_refuses_oversized_subject_key_and_project(user_home: Path) -> None:
    _home(user_home)
    cases = {
        ("--subject", "s" * 300, "--key", "os"): "The subject is 300 characters; the limit is 200",
        ("--subject", "box", "--key", "k" * 101): "The key is 101 characters; the limit is 100",
        ("--project", "p" * 501): "The project id is 501 characters; the limit is 500",
        ("--source", "s" * 101): "The source is 101 characters; the limit is 100",
    }
    for options, message in cases.items():
        done = cli("remember", "prod-server runs ubuntu 22.04", *options)
        assert done.returncode == 1, (options, done.stdout)
        assert message in done.stderr and "Traceback" not in done.stderr
    long_reason = cli("forget", "nothing-here-1234", "--reason", "r" * 2001)
    assert long_reason.returncode == 1
    assert cli("list", "--json").stdout.strip() == "[]"


def test_import_and_mirror_refuse_oversized_fields(user_home: Path, tmp_path: Path) -> None:
    _home(user_home)
    lines = tmp_path / "in.jsonl"
    lines.write_text(
        json.dumps({"text": "fine record one"}) + "\n"
        + json.dumps({"text": "prod runs ubuntu", "subject": "s" * 300, "fact_key": "os"})
        + "\n"
    )
    done = cli("import", str(lines))
    assert done.returncode == 1
    assert 'Line 2: The "subject" is 300 characters; the limit is 200' in done.stderr
    assert "Nothing was imported" in done.stderr
    bogus = tmp_path / "status.jsonl"
    bogus.write_text(json.dumps({"text": "a record", "status": "bogus"}) + "\n")
    assert "Unknown status 'bogus'" in cli("import", str(bogus)).stderr

    folder = tmp_path / "mirror"
    assert cli("mirror", str(folder)).returncode == 0
    (folder / "note.md").write_text(f"---\nscene: {'s' * 80}\n---\nRun make lint before pushing\n")
    report = json.loads(cli("mirror", str(folder), "--json").stdout)
    assert report["new"] == []
    assert "The scene is 80 characters; the limit is 64" in report["skipped"][0]["why"]


def test_dashboard_refuses_an_oversized_reason(user_home: Path, tmp_path: Path) -> None:
    _home(user_home)
    memory_id = json.loads(cli("remember", "Deploy with fly deploy", "--json").stdout)["id"]
    port = free_port()
    process = serve("--port", str(port), env=environment(user_home))
    try:
        wait_for_port(process, port)
        _, headers, page = fetch(f"http://127.0.0.1:{port}/memories/{memory_id}")
        cookie = headers["Set-Cookie"].split(";", 1)[0]
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        body = urllib.parse.urlencode({"csrf_token": csrf, "reason": "r" * 5000}).encode()
        status, _, answer = fetch(
            f"http://127.0.0.1:{port}/memories/{memory_id}/retire",
            {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie},
            data=body,
        )
    finally:
        stop(process)
    assert status == 400
    assert "The reason is 5000 characters; the limit is 2000" in answer
    shown = json.loads(cli("show", memory_id, "--json").stdout)
    assert shown["status"] == "active"
