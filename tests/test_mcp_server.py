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

from memory_layer.api import inbox
from memory_layer.config import load_config
from memory_layer.storage.db import open_db
from memory_layer.storage.records import get_memory
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
        out["read_pending"] = await s.call_tool("read", {"memory_id": ids["pending"]})
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
        out["outcome_again"] = await s.call_tool(
            "report_outcome", {"worked": False, "memory_id": ids["deploy"]}
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
    assert "withheld" not in out["read"]
    assert [p["action"] for p in out["read"]["provenance"]][:2] == ["create", "verify"]
    # A withheld record is refused exactly like an id that matches nothing.
    assert out["read_pending"].is_error and out["missing"].is_error
    pending_text = out["read_pending"].content[0].text.replace(ids["pending"], "ID")
    assert pending_text == out["missing"].content[0].text.replace("nope-nope", "ID")
    assert "No memory" in out["missing"].content[0].text

    assert [p["kind"] for p in out["check"]["problems"]] == ["duplicate"]
    assert out["check"]["problems"][0]["memory_id"] == ids["deploy"]
    assert "secret" in [p["kind"] for p in out["check_secret"]["problems"]]
    assert [p["kind"] for p in out["check_vague"]["problems"]] == ["vague"]

    assert out["propose"]["status"] == "pending"
    assert out["propose_change"]["kind"] == "change"
    assert out["outcome"]["recorded"]
    assert out["outcome_hidden"].is_error
    # One report per memory per agent per day: repeating "it failed" cannot sink it.
    assert out["outcome_again"].is_error
    assert "counts once per 24 hours" in out["outcome_again"].content[0].text
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
    from memory_layer.api import decide

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


def test_read_never_returns_pending_or_rejected_text(store):
    """Audit t2: a proposed change's text reached other agents through provenance,
    while open, after rejection, and as the "old" side of a reviewer's revision."""
    from memory_layer.api import decide

    ids = store["ids"]
    made: dict[str, Any] = {}

    async def propose(s: ClientSession) -> Any:
        made["change"] = payload(
            await s.call_tool(
                "propose",
                {
                    "memory_id": ids["deploy"],
                    "text": "Deploy the api with fly deploy --strategy canary UNREVIEWED-CLAIM",
                    "reason": "AGENT-REASON thinks so",
                },
            )
        )
        made["new"] = payload(
            await s.call_tool(
                "propose", {"text": "The cache runs redis 7 on port 6380 PENDING-TEXT"}
            )
        )
        return payload(await s.call_tool("read", {"memory_id": ids["deploy"]}))

    while_open = run(store["cwd"], propose)
    db = open_db()
    cfg = load_config()
    decide(db, made["change"]["item_id"], "reject", actor="alice", reason="wrong", config=cfg)
    decide(
        db,
        made["new"]["item_id"],
        "revise",
        actor="alice",
        reason="port",
        revised_text="The cache runs redis 7 on port 6379",
        config=cfg,
    )
    db.close()

    async def read_both(s: ClientSession) -> Any:
        return [
            payload(await s.call_tool("read", {"memory_id": mid}))
            for mid in (ids["deploy"], made["new"]["item_id"])
        ]

    rejected, revised = run(store["cwd"], read_both)
    for shown in (while_open, rejected, revised):
        dumped = json.dumps(shown)
        for secret in ("UNREVIEWED-CLAIM", "PENDING-TEXT", "AGENT-REASON"):
            assert secret not in dumped
    assert revised["text"] == "The cache runs redis 7 on port 6379"
    revise_op = [p for p in revised["provenance"] if p["action"] == "revise"][0]
    assert "text" in revise_op["changed"] and revise_op["reason"] == "port"


TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


def test_secrets_in_every_agent_field_are_redacted_and_checked(store, user_home):
    """Audit t3: reasons, tags, subject/key and dispute reasons were stored verbatim."""
    ids = store["ids"]

    async def steps(s: ClientSession) -> Any:
        checked = payload(
            await s.call_tool(
                "check",
                {
                    "text": "Staging deploys need the VPN up first",
                    "subject": f"prod {AWS_KEY}",
                    "key": "os",
                    "reason": f"token is {TOKEN}",
                    "tags": [f"tok-{TOKEN}"],
                },
            )
        )
        for args in (
            {"text": "Staging deploys need the VPN", "reason": f"token {TOKEN}", "tags": [TOKEN]},
            {"text": "ubuntu 22.04", "subject": f"prod {AWS_KEY}", "key": f"password={TOKEN}"},
            {"memory_id": ids["deploy"], "text": "fly deploy --strategy canary", "reason": TOKEN},
        ):
            payload(await s.call_tool("propose", args))
        payload(
            await s.call_tool("dispute", {"memory_id": ids["deploy"], "reason": f"key {TOKEN}"})
        )
        return checked

    checked = run(store["cwd"], steps)
    fields = {p.get("field") for p in checked["problems"] if p["kind"] == "secret"}
    assert fields == {"subject", "reason", "tag 1"}
    assert TOKEN not in json.dumps(checked)

    import sqlite3

    db = sqlite3.connect(user_home / "memories.db")
    for table in ("memories", "operations", "proposals"):
        rows = repr(db.execute(f"SELECT * FROM {table}").fetchall())
        assert TOKEN not in rows and AWS_KEY not in rows, table
        assert "REDACTED" in rows.upper(), table
    db.close()


def test_check_withholds_a_sinking_value_like_read_does(store):
    """Audit t11: `check` used a narrower predicate than `read` and showed a sinking value."""
    db = open_db()
    cfg = load_config()
    from memory_layer.project import project_for

    fact = write(
        db,
        "ubuntu 22.04",
        config=cfg,
        source="cli",
        subject="prod-server",
        key="os",
        project=project_for(store["cwd"]),
    ).memory.id
    db.execute("UPDATE memories SET outcome_score = -0.9 WHERE id = ?", [fact])
    db.close()

    async def steps(s: ClientSession) -> Any:
        read = await s.call_tool("read", {"memory_id": fact})
        checked = payload(
            await s.call_tool(
                "check", {"text": "rhel 9.4 on the box", "subject": "prod-server", "key": "os"}
            )
        )
        return read, checked

    read, checked = run(store["cwd"], steps)
    # Withheld (sinking): refused like an unknown id, and not mentioned by check at all.
    assert read.is_error and "is available to agents" in read.content[0].text
    assert "ubuntu" not in json.dumps(checked) and fact not in json.dumps(checked)
    assert not [p for p in checked["problems"] if p["kind"] == "conflict"]


def test_errors_speak_in_tools_and_refuse_dropped_fields(store):
    """Audit, low: CLI-only advice, a 100 KB input echoed back, a silently ignored
    field, and a search description promising more than trust.overdue=flag keeps."""
    ids = store["ids"]
    huge = "x" * 100_000

    async def steps(s: ClientSession) -> Any:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        return (
            tools["search"].description,
            await s.call_tool("read", {"memory_id": "nope-nope"}),
            await s.call_tool("report_outcome", {"worked": True, "task_id": huge}),
            await s.call_tool(
                "propose",
                {"memory_id": ids["deploy"], "text": "fly deploy --strategy canary", "tags": ["a"]},
            ),
        )

    description, missing, task, ignored = run(store["cwd"], steps)
    assert "flag" in description
    for result in (missing, task, ignored):
        assert result.is_error
        assert "`memory-layer" not in result.content[0].text
    assert "search" in missing.content[0].text
    assert len(task.content[0].text) < 600 and "memory_id" in task.content[0].text
    assert "tags" in ignored.content[0].text
