"""Issue 13's Beads + MCP case, end to end: an MCP agent searches a project (a real MCP
client session against `memory-layer mcp`), then bd closes an unrelated issue through
the installed `.beads/hooks/on_close` (a real subprocess fed bd's payload shape). The
close must credit none of the memories the agent merely searched."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from memory_layer.config import load_config
from memory_layer.memories import remember
from memory_layer.outcomes import beads, task_detail
from memory_layer.storage.db import open_db
from memory_layer.storage.records import get_memory
from tests.conftest import FIXTURES

PROJECT = "github.com/acme/redis-demo"
UNRELATED = [
    "Prefer httpx over requests for new HTTP clients",
    "Release notes live in docs/CHANGELOG.md",
    "Deploy the api with fly deploy --strategy rolling",
    "Run the linters with make lint before pushing",
    "Feature flags are read from config/flags.yaml",
    "The staging database is refreshed every Monday night",
    "Use structlog for logging, never print",
    "Frontend builds need Node 20 (see .nvmrc)",
    "Store money as integer cents, never floats",
    "Translations go through the i18n team before release",
    "Background jobs run on Celery with the redis broker URL from settings",
    "API pagination uses cursor tokens, not page numbers",
    "Commit messages follow Conventional Commits",
]
QUERIES = [
    "http client library",
    "release notes changelog",
    "deploy api",
    "lint before pushing",
    "feature flags config",
    "staging database refresh",
    "logging library",
    "node version frontend",
    "money floats cents",
    "translations release",
    "celery background jobs broker",
    "api pagination",
    "commit message style",
]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "redis-demo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/redis-demo.git"],
        check=True,
    )
    (repo / ".beads").mkdir()
    return repo


async def _search_everything(cwd: Path) -> list[str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_layer", "mcp"],
        env={**os.environ, "MEMORY_LAYER_HOME": os.environ["MEMORY_LAYER_HOME"]},
        cwd=str(cwd),
    )
    found: list[str] = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write_stream):
            client = types.Implementation(name="codex", version="1.0")
            async with ClientSession(read, write_stream, client_info=client) as session:
                await session.initialize()
                for query in QUERIES:
                    result = await session.call_tool("search", {"query": query, "limit": 3})
                    assert not result.is_error, result.content
                    body = json.loads(result.content[0].text)
                    found.extend(r["id"] for r in body["results"])
    return found


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_bd_close_credits_nothing_an_mcp_agent_only_searched(
    user_home: Path, tmp_path: Path
) -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n", encoding="utf-8")
    cfg = load_config()
    db = open_db()
    ids = [
        remember(db, text, config=cfg, project=PROJECT, source="user", dedupe=False).memory.id
        for text in UNRELATED
    ]
    repo = _repo(tmp_path)
    started = datetime.now(UTC) - timedelta(minutes=5)
    surfaced = set(asyncio.run(_search_everything(repo)))
    assert surfaced == set(ids)  # all 13 were shown to the MCP agent in the project

    beads.install(repo)
    issue = json.loads((FIXTURES / "beads" / "on_close_hook_stdin.json").read_text())
    closed = datetime.now(UTC) + timedelta(seconds=2)
    issue.update(
        id="bd-r3d1",
        title="Fix redis in tests",
        description="The redis fixture leaks connections between tests.",
        created_at=_stamp(started - timedelta(minutes=1)),
        started_at=_stamp(started),
        updated_at=_stamp(closed),
        closed_at=_stamp(closed),
        close_reason="Closed",
    )
    done = subprocess.run(
        [str(repo / ".beads" / "hooks" / "on_close"), "bd-r3d1", "close"],
        input=json.dumps(issue).encode(),
        cwd=repo,
        capture_output=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")

    detail = task_detail(db, "bd-r3d1")
    assert detail["outcome"] == "success" and detail["subject"] == "Fix redis in tests"
    judged = {c["memory_id"]: c for c in detail["credits"]}
    assert set(judged) == set(ids)  # every searched memory was a candidate ...
    assert all(c["weight"] == 0 and c["applied"] == 0 for c in judged.values())  # ... none paid
    for credit in judged.values():
        assert any(e["kind"] == "elsewhere" for e in credit["evidence"]), credit["evidence"]
    for memory in (get_memory(db, mid) for mid in ids):
        assert (memory.outcome_score, memory.success_count) == (0.0, 0), memory.text
    db.close()
