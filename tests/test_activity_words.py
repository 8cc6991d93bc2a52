"""Recent activity in words: real writes through the CLI and the review door, read back
from the operations log and folded the way the dashboard's overview shows them."""

from __future__ import annotations

from click.testing import CliRunner

from memory_layer.activity_words import describe, fold, is_bookkeeping, who
from memory_layer.cli import cli
from memory_layer.storage.db import open_db
from memory_layer.storage.operations import recent_operations


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.strip()


def test_a_person_s_day_in_words_with_the_stamps_folded():
    memory_id = run("remember", "Run scripts with uv run, never the system python", "-c", "convention")
    run("edit", memory_id, "--text", "Run scripts with uv run; never call the system python")
    run("edit", memory_id, "--category", "command", "-t", "uv")
    run("forget", memory_id, "--reason", "moved to CONTRIBUTING.md")

    ops = recent_operations(open_db(), 50)
    stamps = [op for op in ops if is_bookkeeping(op)]
    # remember and the text edit are each stamped by the trust layer; nothing else is.
    assert len(stamps) == 2
    entries = fold(ops, 25)
    assert [e.words for e in entries] == [
        "retired it (withheld everywhere, restorable) — “moved to CONTRIBUTING.md”",
        "moved it from convention to command; set the tags to uv",
        "changed the text to “Run scripts with uv run; never call the system python”",
        "saved it as convention",
    ]
    assert {e.who for e in entries} == {"You (CLI)"}
    assert [len(e.folded) for e in entries] == [0, 0, 1, 1]
    assert entries[2].bookkeeping == "+ 1 automatic approval stamp (checksum, review date)"
    assert fold(ops, 2) == entries[:2]


def test_a_person_s_verify_is_not_bookkeeping():
    memory_id = run("remember", "Deploy previews expire after 7 days", "-c", "gotcha")
    run("verify", memory_id, "--reason", "re-checked the hosting docs")
    ops = recent_operations(open_db(), 10)
    entries = fold(ops, 10)
    assert entries[0].words == "verified it — “re-checked the hosting docs”"
    assert not is_bookkeeping(ops[0])


def test_actors_read_as_people_and_agents():
    assert who("cli") == "You (CLI)" and who("web") == "You (dashboard)"
    assert who("mcp:codex") == "Agent codex (MCP)"
    assert who("hook:PostToolUseFailure") == "Claude Code capture (PostToolUseFailure)"
    assert who("hook:llm") == "LLM extraction"
    assert who("claude:0f3c9a1b-77aa") == "Claude Code session 0f3c9a1b"
    assert who("sync:issues") == "Beads" and who("somebody") == "somebody"


def test_an_unknown_action_still_reads():
    from memory_layer.storage.operations import Operation

    op = Operation(1, "2026-01-01T00:00:00", "cli", "split_up", "m1", None, None, {})
    assert describe(op) == "split up"
