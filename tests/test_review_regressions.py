"""Regressions found in the final review: each failed before its fix."""

from __future__ import annotations

from typing import Any

import pytest

from memory_layer.config import load_config
from memory_layer.storage.records import update_memory
from memory_layer.trust.facts import write


@pytest.fixture
def mcp(keyword_only: Any) -> Any:
    from memory_layer import mcp_server

    server = mcp_server.Server(project="proj", scene=None, client="tester")
    yield mcp_server, server
    server.conn.close()


def test_mcp_search_and_read_withhold_sinking_memories(mcp: Any) -> None:
    mcp_server, server = mcp
    cfg = load_config()
    good = write(
        server.conn,
        "Run the api tests with make test-api",
        config=cfg,
        source="cli",
        project="proj",
    ).memory
    bad = write(
        server.conn,
        "Run the api tests with pytest api --slow",
        config=cfg,
        source="cli",
        project="proj",
    ).memory
    # Two credited failures: at the default floor (-0.5), as injection sees it.
    update_memory(server.conn, bad.id, {"outcome_score": -0.6}, actor="test", action="outcome")
    found = mcp_server.search(
        server, "api tests", project=None, scene=None, category=None, limit=8, source="mcp:t"
    )
    ids = [item["id"] for item in found["results"]]
    assert good.id in ids
    assert bad.id not in ids
    info = mcp_server.read(server, bad.id)
    assert info["text"] is None
    assert "sinking" in info["withheld"]
    assert mcp_server.read(server, good.id)["text"] == good.text


def test_check_draft_does_not_reveal_a_withheld_fact_value(db: Any, cfg: Any) -> None:
    from memory_layer.trust.quality import check_draft

    fact = write(
        db,
        "ubuntu 22.04",
        config=cfg,
        source="cli",
        project="proj",
        subject="prod-server",
        key="os",
    ).memory
    # Changed behind the review's back: edited since verification, withheld from agents.
    db.execute("UPDATE memories SET text = 'debian 9 root pw hunter2' WHERE id = ?", [fact.id])
    report = check_draft(
        db, "ubuntu 24.04", config=cfg, project="proj", subject="prod-server", key="os"
    )
    conflicts = [p for p in report["problems"] if p["kind"] == "conflict"]
    assert conflicts and conflicts[0]["memory_id"] == fact.id
    assert "hunter2" not in conflicts[0]["detail"]
    assert "withheld" in conflicts[0]["detail"]
