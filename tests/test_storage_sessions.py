"""storage.sessions, storage.usage and storage.llm_calls on a real migrated SQLite file,
and the counts storage.records and storage.db offer the doors."""

from __future__ import annotations

import sqlite3

import pytest

from memory_layer.storage import db as storage_db
from memory_layer.storage import llm_calls, records, sessions, usage
from memory_layer.storage.db import open_db

T0, T1, T2, T3 = (f"2025-01-01T00:00:0{n}+00:00" for n in range(4))


def add(conn: sqlite3.Connection, session_id: str, kind: str, at: str, **fields: object) -> int:
    return sessions.add_event(conn, session_id, "proj", kind, at=at, **fields)  # type: ignore[arg-type]


def shown(
    memory_id: str, session_id: str | None, at: str, kind: str = "injected", rank: int = 1
) -> usage.Surfacing:
    return usage.Surfacing(memory_id, rank, 0.5, kind, session_id, "proj", "q", at)


def test_session_rows_keep_the_latest_place_and_their_transcript(db: sqlite3.Connection) -> None:
    assert sessions.get_session(db, "s1") is None
    sessions.touch_session(db, "s1", project="a", cwd="/a", transcript_path="/t.jsonl", now=T0)
    # A later event without a transcript path does not forget the one known.
    sessions.touch_session(db, "s1", project="b", cwd="/b", transcript_path="", now=T1)
    got = sessions.get_session(db, "s1")
    assert got == sessions.Session("s1", "b", "/b", "/t.jsonl", 0, T0, None, T0, False)


def test_end_reset_and_the_pending_queue(db: sqlite3.Connection) -> None:
    sessions.end_session(db, "never-touched", "exit", T1)  # SessionEnd first: row made
    sessions.touch_session(db, "s2", project="p", cwd="/p", transcript_path="", now=T0)
    sessions.end_session(db, "s2", "clear", T0)
    assert [s.session_id for s in sessions.pending_sessions(db, 10)] == ["s2", "never-touched"]
    assert [s.session_id for s in sessions.pending_sessions(db, 1)] == ["s2"]
    sessions.reset_context(db, "s2", T2)
    reset = sessions.get_session(db, "s2")
    assert reset is not None and reset.ended_at is None and reset.context_since == T2
    assert sessions.context_since(db, "s2") == T2 and sessions.context_since(db, "nope") == ""
    sessions.clear_pending(db, "s2")
    assert [s.session_id for s in sessions.pending_sessions(db, 10)] == ["never-touched"]


def test_events_are_stored_as_given_and_read_back_typed(db: sqlite3.Connection) -> None:
    first = add(db, "s1", "tool", T0, tool="Bash", command="make", ok=False, error="boom")
    add(db, "s1", "prompt", T1, text="fix it")
    second = add(db, "s1", "tool", T2, tool="Edit", file_path="a.py", text="x = 1")
    add(db, "other", "tool", T2, tool="Bash", command="ls", ok=True)
    add(db, "s1", "assistant", T3, text="Done")
    tools = sessions.recent_tool_events(db, "s1", limit=10)
    assert [e.id for e in tools] == [first, second]  # oldest first, prompts left out
    assert tools[0] == sessions.SessionEvent(
        first, T0, "tool", "Bash", "make", False, "boom", None, None
    )
    assert tools[1].ok is None  # an edit has no result
    assert [e.id for e in sessions.recent_tool_events(db, "s1", limit=1)] == [second]
    assert [e.id for e in sessions.recent_tool_events(db, "s1", limit=10, before_id=second)] == [
        first
    ]
    work = sessions.work_events(db, "s1", T1, T3)
    assert [(e.kind, e.at) for e in work] == [("tool", T2), ("assistant", T3)]


def test_what_outcome_credit_asks_of_a_session(db: sqlite3.Connection) -> None:
    assert sessions.last_prompt_at(db, "s1", T3) is None
    assert not sessions.has_work_events(db, "s1", T3)
    add(db, "s1", "prompt", T0, text="first")
    add(db, "s1", "prompt", T2, text="second")
    assert sessions.last_prompt_at(db, "s1", T1) == T0
    assert sessions.last_prompt_at(db, "s1", T2) == T2  # at or before
    assert not sessions.has_work_events(db, "s1", T3)  # prompts are not work
    add(db, "s1", "assistant", T2, text="cited")
    assert not sessions.has_work_events(db, "s1", T1)
    assert sessions.has_work_events(db, "s1", T2)


def test_transcript_offsets_and_the_main_one_on_its_session(db: sqlite3.Connection) -> None:
    sessions.touch_session(db, "s1", project="p", cwd="/p", transcript_path="/t", now=T0)
    assert sessions.transcript_offset(db, "/t") == 0
    sessions.set_transcript_offset(db, "/t", "s1", 120, main=True, now=T1)
    sessions.set_transcript_offset(db, "llm:/t", "s1", 80, main=False, now=T1)
    sessions.set_transcript_offset(db, "/t", "s1", 300, main=True, now=T2)
    assert sessions.transcript_offset(db, "/t") == 300
    assert sessions.transcript_offset(db, "llm:/t") == 80
    got = sessions.get_session(db, "s1")
    assert got is not None and got.transcript_offset == 300  # the side key left it alone


def test_surfacings_stored_as_given_and_shown_in_the_current_context(
    db: sqlite3.Connection,
) -> None:
    sessions.touch_session(db, "s1", project="p", cwd="/p", transcript_path="", now=T0)
    batch = [shown("m1", "s1", T1), shown("m2", "s1", T1, kind="mcp_search", rank=2)]
    assert usage.record_surfacings(db, batch) == 2
    assert usage.record_surfacings(db, []) == 0
    assert usage.shown_in_context(db, "s1") == {"m1"}  # an MCP search is not in context
    assert usage.shown_in_context(db, "") == set()
    sessions.reset_context(db, "s1", T2)  # /clear: the context is empty again
    assert usage.shown_in_context(db, "s1") == set()
    usage.record_surfacings(db, [shown("m3", "s1", T3, kind="recalled")])
    assert usage.shown_in_context(db, "s1") == {"m3"}
    # A session never touched has its whole history as context.
    usage.record_surfacings(db, [shown("m4", "s9", T0, kind="session_start")])
    assert usage.shown_in_context(db, "s9") == {"m4"}


def test_first_surfacings_per_memory_and_session(db: sqlite3.Connection) -> None:
    usage.record_surfacings(
        db,
        [
            shown("m1", "s1", T2, kind="recalled"),
            shown("m1", "s1", T1),  # the first one counts, with its kind
            shown("m2", "s2", T0),
            shown("m3", "s3", T1),
            shown("m2", "s1", T3),
        ],
    )
    found = usage.first_surfacings_in_sessions(db, ["s1", "s2"], T3)
    assert found == [
        usage.FirstSurfacing("m2", "s2", T0, "injected"),
        usage.FirstSurfacing("m1", "s1", T1, "injected"),
        usage.FirstSurfacing("m2", "s1", T3, "injected"),
    ]
    assert [f.memory_id for f in usage.first_surfacings_in_sessions(db, ["s1"], T2)] == ["m1"]
    assert usage.first_surfacings_in_sessions(db, [], T3) == []
    in_project = usage.first_surfacings_in_project(db, "proj", T1, T2)
    assert [(f.memory_id, f.session_id) for f in in_project] == [("m1", "s1"), ("m3", "s3")]
    assert usage.first_surfacings_in_project(db, "elsewhere", T0, T3) == []


def test_usage_history_newest_first(db: sqlite3.Connection) -> None:
    usage.record_surfacings(db, [shown("m1", "s1", T0), shown("m1", None, T2, rank=3)])
    usage.record_surfacings(db, [shown("m2", "s1", T1)])
    history = usage.usage_history(db, "m1", 10)
    assert history == [
        usage.UsageRow(T2, None, "proj", "injected", "q", 3, 0.5),
        usage.UsageRow(T0, "s1", "proj", "injected", "q", 1, 0.5),
    ]
    assert len(usage.usage_history(db, "m1", 1)) == 1


def test_usage_history_of_a_store_without_the_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    conn = open_db(tmp_path / "bare.db", migrate=False)
    try:
        assert usage.usage_history(conn, "m1", 10) == []
    finally:
        conn.close()


def test_llm_calls_logged_and_summed_since_a_time(db: sqlite3.Connection) -> None:
    assert llm_calls.calls_since(db, T0) == (0, 0.0)
    ok = llm_calls.LlmCall(T1, "s1", "haiku", 900, 40, 0.0042, 2, None)
    failed = llm_calls.LlmCall(T2, "s1", "haiku", 900, 0, None, 0, "exit 1: no auth")
    assert ok.ok and not failed.ok
    llm_calls.record_call(db, ok)
    llm_calls.record_call(db, failed)
    assert llm_calls.calls_since(db, T0) == (2, pytest.approx(0.0042))
    assert llm_calls.calls_since(db, T2) == (1, 0.0)  # a call with no reported cost
    row = db.execute("SELECT ok, error FROM llm_calls WHERE at = ?", [T2]).fetchone()
    assert row == (0, "exit 1: no auth")


def test_counts_the_doors_show(db: sqlite3.Connection) -> None:
    assert records.total_memories(db) == 0 and not records.has_unembedded(db)
    for n, embedding in enumerate([None, None, b"\x00" * 4]):
        values = {"id": f"m{n}", "text": f"note {n}", "category": "general", "source": "test"}
        values |= {"confidence": 0.5, "created_at": T0, "updated_at": T0, "embedding": embedding}
        records.insert_memory(db, values, actor="test")
    assert records.total_memories(db) == 3
    assert records.unembedded_count(db) == 2 and records.has_unembedded(db)
    assert records.judged_outcome_scores(db) == []  # none judged yet
    records.update_memory(db, "m1", {"outcome_score": 0.2, "success_count": 1}, actor="test")
    assert records.judged_outcome_scores(db) == [pytest.approx(0.2)]


def test_recent_operations_newest_first(db: sqlite3.Connection) -> None:
    assert records.recent_operations(db, 5) == []
    for n in range(4):
        records.record_op(db, actor="test", action=f"a{n}", memory_id=None)
    assert [op.action for op in records.recent_operations(db, 2)] == ["a3", "a2"]
    assert [op.action for op in records.recent_operations(db, 10)] == ["a3", "a2", "a1", "a0"]


def test_health_fts5_and_busy_timeout(db: sqlite3.Connection) -> None:
    assert storage_db.health(db) == ("ok", "wal")
    assert storage_db.fts5_available() == sqlite3.sqlite_version
    storage_db.set_busy_timeout(db, 250)
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 250
