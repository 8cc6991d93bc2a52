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
