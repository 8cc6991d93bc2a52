"""Every door gives the same answer to "may an agent see this?".

One withheld record of each kind (pending, rejected, retired, disputed, edited since
verification, overdue, sinking) and one record agents may see, all about the same
thing, go through each door that hands records to agents: hook injection, MCP
search / read / check, `memory-layer recall --for-agent`, and the dashboard's
"Agents receive this memory" line. Only the visible one may come out anywhere.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from memory_layer import api
from memory_layer.cli import cli
from memory_layer.errors import NotFound
from memory_layer.hooks.events import parse_event
from memory_layer.hooks.handlers import handle
from memory_layer.memories import edit as raw_edit
from memory_layer.models import iso, utcnow
from memory_layer.storage.records import update_memory

PROJECT = "/nonexistent/visibility-shop"  # not a git repo: the project id is the path
TOPIC = "frobnicate widget deploy step"
BASE = "http://127.0.0.1:8080"  # the dashboard answers only its own loopback origin
KINDS = ("pending", "rejected", "retired", "disputed", "unverified", "overdue", "sinking")


def _text(kind: str) -> str:
    return f"The {TOPIC}: run ./scripts/frobnicate --widget before deploying ({kind} variant)."


def _write(db: sqlite3.Connection, cfg: dict[str, Any], kind: str, source: str = "cli") -> str:
    done = api.remember(db, _text(kind), config=cfg, source=source, project=PROJECT, category="command")
    return done.memory.id


@pytest.fixture
def records(db: sqlite3.Connection, cfg: dict[str, Any]) -> dict[str, str]:
    ids = {kind: _write(db, cfg, kind) for kind in ("visible", "retired", "disputed")}
    ids["pending"] = _write(db, cfg, "pending", source="mcp:cursor")
    ids["rejected"] = _write(db, cfg, "rejected", source="mcp:cursor")
    api.decide(db, ids["rejected"], "reject", actor="alice", reason="wrong script", config=cfg)
    api.forget(db, ids["retired"], actor="cli", reason="moved")
    api.dispute(db, ids["disputed"], actor="mcp:codex", reason="the script was renamed")
    ids["unverified"] = _write(db, cfg, "unverified-before")
    # Changed by a source that does not vouch for it (as a mirror edit does).
    raw_edit(db, ids["unverified"], config=cfg, actor="mirror", text=_text("unverified"))
    ids["overdue"] = _write(db, cfg, "overdue")
    past = iso(utcnow() - timedelta(days=3))
    update_memory(db, ids["overdue"], {"review_by": past}, actor="test", action="test")
    ids["sinking"] = _write(db, cfg, "sinking")
    update_memory(db, ids["sinking"], {"outcome_score": -0.9}, actor="test", action="test")
    return ids


def test_the_records_are_what_their_names_say(records: dict[str, str], db, cfg) -> None:
    reasons = {
        kind: api.agent_withheld_reason(api.get_memory(db, memory_id), cfg)
        for kind, memory_id in records.items()
    }
    assert reasons.pop("visible") is None
    assert set(reasons) == set(KINDS) and all(reasons.values()), reasons


def test_hook_injection(records: dict[str, str], db, cfg) -> None:
    payload = {"session_id": "s1", "cwd": PROJECT, "prompt": f"how does the {TOPIC} work?"}
    out = handle(parse_event("UserPromptSubmit", json.dumps(payload).encode(), env={}), db, cfg)
    injected = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "(visible variant)" in injected
    assert not [kind for kind in KINDS if f"({kind} variant)" in injected]
    shown = {row[0] for row in db.execute("SELECT memory_id FROM usage")}
    assert shown == {records["visible"]}


def test_session_start_injection(records: dict[str, str], db, cfg) -> None:
    payload = {"session_id": "s2", "cwd": PROJECT, "source": "startup"}
    out = handle(parse_event("SessionStart", json.dumps(payload).encode(), env={}), db, cfg)
    injected = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "(visible variant)" in injected
    assert not [kind for kind in KINDS if f"({kind} variant)" in injected]


def test_mcp_search_read_and_check(records: dict[str, str], db, cfg) -> None:
    from memory_layer import mcp_server

    server = mcp_server.Server(project=PROJECT, scene=None, client="cursor")
    found = mcp_server.search(
        server, TOPIC, project=None, scene=None, category=None, limit=20, source="mcp:cursor"
    )
    assert [r["id"] for r in found["results"]] == [records["visible"]]
    for kind in KINDS:
        with pytest.raises(NotFound, match="is available to agents"):
            mcp_server.read(server, records[kind])
    assert mcp_server.read(server, records["visible"])["text"] == _text("visible")
    # check names a conflicting fact value only when an agent may see it.
    api.remember(
        db, "ubuntu 20.04", config=cfg, source="cli", project=PROJECT, subject="prod", key="os"
    )
    fact = db.execute("SELECT id FROM memories WHERE text = 'ubuntu 20.04'").fetchone()[0]
    past = iso(utcnow() - timedelta(days=3))
    update_memory(db, fact, {"review_by": past}, actor="test", action="test")  # overdue
    verdict = mcp_server.check(
        server,
        "ubuntu 24.04 on the prod host",
        category="environment",
        project=None,
        subject="prod",
        key="os",
        reason=None,
        tags=None,
    )
    # A withheld (overdue) value is not mentioned at all: even "withheld" confirms it.
    assert not [p for p in verdict["problems"] if p["kind"] == "conflict"]
    assert "20.04" not in str(verdict) and fact not in str(verdict)


def test_cli_recall_for_an_agent(records: dict[str, str]) -> None:
    args = ["recall", TOPIC, "--for-agent", "--json", "-p", PROJECT, "-n", "20"]
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    assert [r["id"] for r in json.loads(done.stdout)] == [records["visible"]]
    # A person sees every active one, with the reason it is withheld from agents.
    done = CliRunner().invoke(cli, ["recall", TOPIC, "--json", "-p", PROJECT, "-n", "20"])
    shown = {r["id"]: r["withheld"] for r in json.loads(done.stdout)}
    assert shown[records["visible"]] is None
    assert shown[records["unverified"]] and shown[records["overdue"]]
    assert records["sinking"] not in shown  # sinking ones only with --include-sinking


def test_dashboard_standing(records: dict[str, str]) -> None:
    from memory_layer.web import create_app

    client = create_app().test_client()
    for kind, memory_id in records.items():
        page = client.get(f"/memories/{memory_id}", base_url=BASE).get_data(as_text=True)
        if kind == "visible":
            assert "Agents receive this memory." in page
        else:
            assert "Withheld from agents:" in page and "Agents receive" not in page, kind


def test_mcp_search_takes_no_write_lock(records: dict[str, str], user_home) -> None:
    """Another process holding the write lock does not stop an agent's search: searching
    writes nothing but its surfacing record, which then waits briefly and is skipped
    instead of waiting out the store's busy timeout."""
    import subprocess
    import sys

    from memory_layer import mcp_server

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1], isolation_level=None);"
            " c.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(30)",
            str(user_home / "memories.db"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        server = mcp_server.Server(project=PROJECT, scene=None, client="cursor")
        # A search that took the write lock would wait out the busy timeout and fail
        # with "database is locked"; this one answers.
        found = mcp_server.search(
            server, TOPIC, project=None, scene=None, category=None, limit=5, source="mcp:x"
        )
    finally:
        holder.kill()
        holder.wait()
    assert [r["id"] for r in found["results"]] == [records["visible"]]
