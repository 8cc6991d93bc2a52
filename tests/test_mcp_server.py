"""A real MCP client session over stdio, started exactly as an agent would start it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memory_layer.config import load_config
from memory_layer.storage.db import open_db
from memory_layer.storage.records import get_memory
from memory_layer.trust import inbox
from memory_layer.trust.facts import write

EXPECTED_TOOLS = {"search", "read", "check", "propose", "report_outcome", "dispute"}
FORBIDDEN = ("approve", "accept", "delete", "retire", "purge", "forget", "verify", "reject")


@pytest.fixture
def store(user_home: Path, tmp_path: Path) -> dict[str, Any]:
    user_home.mkdir(parents=True, exist_ok=True)
    # Keyword-only in the server process: no model load, and the same ranking code.
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n")
    cfg = load_config()
    db = open_db()
    ids = {
        "deploy": write(
            db,
            "Deploy the api with fly deploy --strategy rolling",
            config=cfg,
            source="cli",
            category="command",
        ).memory.id,
        "deploy_scene": write(
            db,
            "Deploy needs the VPN up: wg-quick up office",
            config=cfg,
            source="cli",
            scene="deploy",
        ).memory.id,
        "coding_scene": write(
            db,
            "Deploy code is in src/deploy; tests in tests/deploy",
            config=cfg,
            source="cli",
            scene="coding",
        ).memory.id,
        "pending": write(
            db, "Deploy by pushing to main directly", config=cfg, source="mcp:other"
        ).memory.id,
        "edited": write(
            db, "Deploy previews expire after 7 days", config=cfg, source="cli"
        ).memory.id,
    }
    db.execute(
        "UPDATE memories SET text = 'Deploy previews never expire' WHERE id = ?", [ids["edited"]]
    )
    db.close()
    workdir = tmp_path / "project"
    workdir.mkdir()
    return {"ids": ids, "cwd": workdir}


async def session_run(cwd: Path, steps, *, args: tuple[str, ...] = ()) -> Any:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_layer", "mcp", *args],
        env={**os.environ, "MEMORY_LAYER_HOME": os.environ["MEMORY_LAYER_HOME"]},
        cwd=str(cwd),
    )
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write_stream):
            client = types.Implementation(name="codex", version="1.0")
            async with ClientSession(read, write_stream, client_info=client) as session:
                await session.initialize()
                return await steps(session)


def payload(result: types.CallToolResult) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def run(cwd: Path, steps, **kw) -> Any:
    return asyncio.run(session_run(cwd, steps, **kw))


def test_tools_and_a_full_session(store):
    ids = store["ids"]

    async def steps(s: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        listed = await s.list_tools()
        out["tools"] = {t.name: t for t in listed.tools}
        out["search"] = payload(await s.call_tool("search", {"query": "deploy", "limit": 10}))
        out["read"] = payload(await s.call_tool("read", {"memory_id": ids["deploy"]}))
        out["read_pending"] = payload(await s.call_tool("read", {"memory_id": ids["pending"]}))
        out["missing"] = await s.call_tool("read", {"memory_id": "nope-nope"})
        out["check"] = payload(
            await s.call_tool(
                "check", {"text": "Deploy the api with fly deploy --strategy rolling"}
            )
        )
        out["check_secret"] = payload(
            await s.call_tool(
                "check",
                {"text": "The staging deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789"},
            )
        )
        out["check_vague"] = payload(await s.call_tool("check", {"text": "be careful with stuff"}))
        out["propose"] = payload(
            await s.call_tool(
                "propose",
                {
                    "text": "Staging deploys run from the release branch",
                    "category": "convention",
                    "reason": "learned in PR 42",
                },
            )
        )
        out["propose_change"] = payload(
            await s.call_tool(
                "propose",
                {
                    "text": "Deploy the api with fly deploy --strategy canary",
                    "memory_id": ids["deploy"],
                },
            )
        )
        out["outcome"] = payload(
            await s.call_tool("report_outcome", {"worked": True, "memory_id": ids["deploy"]})
        )
        out["outcome_hidden"] = await s.call_tool(
            "report_outcome", {"worked": True, "memory_id": ids["pending"]}
        )
        out["dispute"] = payload(
            await s.call_tool(
                "dispute", {"memory_id": ids["coding_scene"], "reason": "tests moved to tests/e2e"}
            )
        )
        out["after"] = payload(await s.call_tool("search", {"query": "deploy", "limit": 10}))
        return out

    out = run(store["cwd"], steps)
    assert set(out["tools"]) == EXPECTED_TOOLS
    assert not [n for n in out["tools"] if any(word in n for word in FORBIDDEN)]
    for tool in out["tools"].values():
        assert tool.description

    found = [r["id"] for r in out["search"]["results"]]
    # No scene declared: every active, verified record, never pending or edited ones.
    assert set(found) == {ids["deploy"], ids["deploy_scene"], ids["coding_scene"]}
    assert out["search"]["results"][0]["approved_by"] == "cli"

    assert out["read"]["text"].startswith("Deploy the api")
    assert out["read"]["withheld"] is None
    assert [p["action"] for p in out["read"]["provenance"]][:2] == ["create", "verify"]
    assert out["read_pending"]["text"] is None
    assert out["read_pending"]["withheld"] == "pending review"
    assert out["missing"].is_error and "No memory" in out["missing"].content[0].text

    assert [p["kind"] for p in out["check"]["problems"]] == ["duplicate"]
    assert out["check"]["problems"][0]["memory_id"] == ids["deploy"]
    assert "secret" in [p["kind"] for p in out["check_secret"]["problems"]]
    assert [p["kind"] for p in out["check_vague"]["problems"]] == ["vague"]

    assert out["propose"]["status"] == "pending"
    assert out["propose_change"]["kind"] == "change"
    assert out["outcome"]["recorded"]
    assert out["outcome_hidden"].is_error
    assert out["dispute"]["status"] == "disputed"
    assert ids["coding_scene"] not in [r["id"] for r in out["after"]["results"]]

    db = open_db()
    new = get_memory(db, out["propose"]["memory_id"])
    assert (new.status, new.source) == ("pending", "mcp:codex")
    kinds = sorted(i["kind"] for i in inbox(db))
    assert kinds == ["change", "disputed", "new", "new", "unverified"]
    assert get_memory(db, ids["deploy"]).text.endswith("rolling")  # change not applied
    assert get_memory(db, ids["deploy"]).success_count == 1
    usage = db.execute(
        "SELECT memory_id, rank, query FROM usage WHERE kind = 'mcp_search' ORDER BY id"
    ).fetchall()
    assert [u[0] for u in usage[: len(found)]] == found
    assert {u[2] for u in usage} == {"deploy"}


def test_declared_scene_limits_search(store):
    ids = store["ids"]

    async def steps(s: ClientSession) -> Any:
        declared = payload(await s.call_tool("search", {"query": "deploy", "limit": 10}))
        other = payload(await s.call_tool("search", {"query": "deploy", "scene": "coding"}))
        return declared, other

    declared, other = run(store["cwd"], steps, args=("--scene", "deploy"))
    assert declared["scene"] == "deploy"
    assert {r["id"] for r in declared["results"]} == {ids["deploy"], ids["deploy_scene"]}
    assert {r["id"] for r in other["results"]} == {ids["deploy"], ids["coding_scene"]}


def test_plugin_mcp_json_runs_memory_layer_mcp():
    config = json.loads((Path(__file__).parent.parent / ".mcp.json").read_text())
    server = config["mcpServers"]["memory-layer"]
    assert server["command"].endswith("memory-layer") and server["args"] == ["mcp"]


def test_a_proposal_reaches_agents_only_after_a_person_accepts_it(store):
    from memory_layer.trust import decide

    async def steps(s: ClientSession) -> Any:
        query = {"query": "sentry release tagging"}
        made = payload(
            await s.call_tool(
                "propose",
                {
                    "text": "Tag sentry releases with the git sha via sentry-cli releases new",
                    "category": "command",
                },
            )
        )
        before = payload(await s.call_tool("search", query))["results"]
        db = open_db()
        decide(
            db, made["item_id"], "accept", actor="alice", reason="we do this", config=load_config()
        )
        db.close()
        after = payload(await s.call_tool("search", query))["results"]
        return made, before, after

    made, before, after = run(store["cwd"], steps)
    assert before == []
    assert [r["id"] for r in after] == [made["item_id"]]
    assert after[0]["approved_by"] == "alice" and after[0]["source"] == "mcp:codex"
