"""Issue 16's first-run details of the CLI and MCP, each as a new user meets it.

The commands run as subprocesses where the detail depends on the process (no terminal
for `edit`, a lock held by another process for `doctor`, the import path for the
install check); the rest through click's runner against the real store.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from memory_layer.cli import cli
from memory_layer.config import load_config
from memory_layer.storage.db import open_db
from memory_layer.storage.records import get_memory
from memory_layer.trust.facts import write

ROOT = Path(__file__).resolve().parent.parent


def cli_run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def ml(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """`memory-layer ARGS` in its own process, stdin not a terminal."""
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        timeout=120,
        **kw,
    )


def remembered(text: str, **kw) -> str:
    db = open_db()
    try:
        return write(db, text, config=load_config(), source="cli", **kw).memory.id
    finally:
        db.close()


def test_a_short_id_prefix_is_explained():
    memory_id = remembered("Run the api with make dev")
    result = cli_run("show", memory_id[:2])
    assert result.exit_code == 1
    assert "at least 4 characters" in result.output
    # Four characters are enough, and a full miss still says so plainly.
    assert cli_run("show", memory_id[:4]).exit_code == 0
    missing = cli_run("show", "ffffffff")
    assert missing.exit_code == 1 and "No memory with id 'ffffffff'." in missing.output


def test_path_prints_every_path_asked_for(user_home: Path):
    result = cli_run("path", "--db", "--config")
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        str(user_home / "memories.db"),
        str(user_home / "config.yaml"),
    ]
    assert cli_run("path").output.strip() == str(user_home)


def test_counts_read_as_english():
    one = json.dumps({"text": "Use uv for the lockfile", "category": "convention"})
    imported = cli_run("import", "-", input=one + "\n")
    assert imported.exit_code == 0
    assert "Imported 1 memory;" in imported.output
    assert "1 memories" not in cli_run("stats").output
    wrong = cli_run("config", "set", "frequency.saturation_uses", "lots")
    assert wrong.exit_code != 0
    assert "must be a whole number, got 'lots'" in wrong.output
    assert "must be a int" not in wrong.output


def test_edit_without_a_terminal_refuses_instead_of_starting_an_editor(tmp_path: Path):
    memory_id = remembered("Deploy on Fridays is fine")
    marker = tmp_path / "editor-ran"
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\ntouch {marker}\n")
    editor.chmod(0o755)

    result = ml("edit", memory_id, env={"EDITOR": str(editor), "VISUAL": str(editor)})

    assert result.returncode == 2
    assert "no terminal" in result.stderr and "--text" in result.stderr
    assert "\x1b" not in result.stdout + result.stderr
    assert not marker.exists()
    assert get_memory(open_db(), memory_id).text == "Deploy on Fridays is fine"


def test_remember_says_which_secrets_it_replaced():
    text = (
        "CI deploy uses AKIAIOSFODNN7EXAMPLE and the token "
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789 from the vault"
    )
    result = ml("remember", text, "-c", "command", "--json")
    assert result.returncode == 0, result.stderr
    stored = json.loads(result.stdout)
    assert "AKIA" not in stored["text"] and "ghp_" not in stored["text"]
    assert "aws_access_key" in result.stderr and "github_token" in result.stderr
    assert "[REDACTED:" in result.stderr

    private = ml("remember", "Build with <private>my laptop pw</private> make fast", "--json")
    assert "Removed <private> parts" in private.stderr
    plain = ml("remember", "Build with make fast on the CI box", "--json")
    assert "Replaced" not in plain.stderr and "Removed" not in plain.stderr


def test_backup_refuses_a_missing_folder(tmp_path: Path):
    target = tmp_path / "no" / "such" / "dir" / "b.db"
    result = cli_run("backup", "-o", str(target))
    assert result.exit_code == 1
    assert "is not an existing directory" in result.output and "mkdir -p" in result.output
    assert not (tmp_path / "no").exists()
    # The default location is the store's own backups/ folder, created as needed.
    assert cli_run("backup").exit_code == 0


def test_review_revise_and_accept_agree_on_a_memory_outside_the_inbox():
    memory_id = remembered("Staging runs on port 8443")
    accept = cli_run("review", "accept", memory_id, "--reason", "looks right")
    revise = cli_run(
        "review", "revise", memory_id, "--text", "Staging runs on 9443", "--reason", "moved"
    )
    reject = cli_run("review", "reject", memory_id, "--reason", "old")
    for result in (accept, revise, reject):
        assert result.exit_code == 1
        assert "is not waiting for review" in result.output
    assert "memory-layer edit" in revise.output
    assert "memory-layer forget" in reject.output
    memory = get_memory(open_db(), memory_id)
    assert memory.text == "Staging runs on port 8443" and memory.status == "active"


def test_doctor_reports_a_write_locked_database(user_home: Path):
    remembered("Anything, so the store exists")
    holder = sqlite3.connect(user_home / "memories.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, held open
    try:
        result = ml("doctor", "--json")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 1
    checks = {c["name"]: c for c in json.loads(result.stdout)}
    assert checks["database"]["ok"]  # reads still work: that is why it looked fine
    assert not checks["database writes"]["ok"]
    assert "write-locked" in checks["database writes"]["detail"]

    again = ml("doctor", "--json")
    assert {c["name"]: c for c in json.loads(again.stdout)}["database writes"]["ok"]


# The unrelated PyPI package `memory-layer` 0.1.0 (wheel memory_layer-0.1.0-py3-none-any.whl,
# sha256 4c17cbba079db6d32f75c8dd89ebbaff69cb7ff8227d3bcbd7f904f86bf52f83): its dist-info
# fields as published, and a top-level memory_layer package of its own.
FOREIGN_METADATA = """Metadata-Version: 2.4
Name: memory-layer
Version: 0.1.0
Summary: Persistent memory layer for AI coding assistants
Author: Your Name
Requires-Dist: requests>=2.25.0
"""


def foreign_site(root: Path, *, with_module: bool) -> Path:
    site = root / "site"
    info = site / "memory_layer-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(FOREIGN_METADATA)
    (info / "top_level.txt").write_text("memory_layer\n")
    (info / "RECORD").write_text(
        "memory_layer/__init__.py,,\nmemory_layer/client.py,,\n"
        "memory_layer-0.1.0.dist-info/METADATA,,\n"
    )
    if with_module:
        (site / "memory_layer").mkdir()
        (site / "memory_layer" / "__init__.py").write_text("from .client import MemoryClient\n")
        (site / "memory_layer" / "client.py").write_text("class MemoryClient: ...\n")
    return site


def test_doctor_notices_a_foreign_distribution_of_memory_layer(tmp_path: Path):
    """`pip install memory-layer` over this project, then this project reinstalled: the
    stranger's record still claims memory_layer, and the next upgrade of either breaks
    the other. doctor, run as the console script runs, says so and how to fix it."""
    site = foreign_site(tmp_path, with_module=False)
    code = (
        "import sys; sys.path.append(sys.argv[1]); sys.argv = ['memory-layer', 'doctor', "
        "'--json']; from memory_layer.cli.fast import main; main()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(site)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    detail = {c["name"]: c for c in json.loads(result.stdout)}["installation"]
    assert not detail["ok"]
    assert "memory-layer 0.1.0 (an unrelated project)" in detail["detail"]
    assert "pip uninstall memory-layer" in detail["detail"]

    clean = ml("doctor", "--json", cwd=tmp_path)
    installation = {c["name"]: c for c in json.loads(clean.stdout)}["installation"]
    assert installation["ok"], installation["detail"]
    assert installation["detail"].startswith("memory-layer-agents ")


def test_a_second_memory_layer_on_the_path_is_named(tmp_path: Path):
    from memory_layer.install import foreign_modules

    site = foreign_site(tmp_path, with_module=True)
    problems = foreign_modules([*sys.path, str(site)])
    assert any("(an unrelated project)" in p for p in problems)
    assert any(f"another memory_layer at {site / 'memory_layer'}" in p for p in problems)
    assert foreign_modules([str(tmp_path / "empty")]) == []


def test_mcp_search_refuses_a_limit_outside_1_to_50(tmp_path: Path, user_home: Path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    remembered("Deploy with fly deploy", category="command")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_layer", "mcp"],
        env={**os.environ, "MEMORY_LAYER_HOME": str(user_home)},
        cwd=str(tmp_path),
    )

    async def searches() -> list[tuple[bool, str]]:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write_stream):
                async with ClientSession(read, write_stream) as session:
                    await session.initialize()
                    out = []
                    for limit in (-1, 0, 51, 50):
                        got = await session.call_tool("search", {"query": "deploy", "limit": limit})
                        out.append((got.is_error, got.content[0].text))
                    return out

    results = asyncio.run(searches())
    for is_error, text in results[:3]:
        assert is_error and "limit must be a whole number from 1 to 50" in text
    assert results[3][0] is False
