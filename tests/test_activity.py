"""memory_layer.activity: what agents produced is cleaned and bounded before storage
keeps it, on a real migrated SQLite file."""

from __future__ import annotations

import sqlite3

from memory_layer import activity
from memory_layer.storage import sessions

SECRET = "ghp_" + "a1B2c3D4e5" * 4
AT = "2025-01-01T00:00:00+00:00"


def stored_event(db: sqlite3.Connection, event_id: int) -> tuple:
    return db.execute(
        "SELECT command, error, text, file_path, ok FROM session_events WHERE id = ?", [event_id]
    ).fetchone()


def test_event_texts_are_cleaned_before_they_are_stored(db: sqlite3.Connection) -> None:
    event_id = activity.record_event(
        db,
        "s1",
        "proj",
        "tool",
        tool="Bash",
        command=f"curl -H 'Authorization: token {SECRET}' api <private>mine</private>",
        ok=False,
        error=f"bad credentials {SECRET}",
        text=f"GITHUB_TOKEN={SECRET}",
        at=AT,
    )
    row = stored_event(db, event_id)
    assert SECRET not in repr(row) and "mine" not in row[0]
    assert all("[REDACTED:" in text for text in row[:3])
    assert row[3:] == (None, 0)  # no file: NULL, not ""


def test_event_texts_are_bounded(db: sqlite3.Connection) -> None:
    event_id = activity.record_event(
        db,
        "s1",
        "proj",
        "prompt",
        command="c" * (activity.EVENT_COMMAND_CHARS + 50),
        error="e" * (activity.EVENT_ERROR_CHARS + 1),
        text="t" * (activity.EVENT_TEXT_CHARS * 2),
        at=AT,
    )
    command, error, text, _, ok = stored_event(db, event_id)
    assert len(command) == activity.EVENT_COMMAND_CHARS and command.endswith("…")
    assert len(error) == activity.EVENT_ERROR_CHARS
    assert len(text) == activity.EVENT_TEXT_CHARS and ok is None
    empty = activity.record_event(db, "s1", "proj", "prompt", text="", at=AT)
    assert stored_event(db, empty)[2] is None


def test_recent_tool_events_as_the_signals_read_them(db: sqlite3.Connection) -> None:
    activity.record_event(db, "s1", "p", "tool", tool="Bash", command="make", ok=False, at=AT)
    activity.record_event(db, "s1", "p", "tool", tool="Edit", file_path="a.py", at=AT)
    last = activity.record_event(db, "s1", "p", "tool", tool="Bash", command="ls", ok=True, at=AT)
    rows = activity.recent_tool_events(db, "s1", before_id=last)
    assert rows == [
        {"tool": "Bash", "command": "make", "ok": False, "error": "", "file_path": "", "ts": AT},
        # An event stored without a result reads as a success.
        {"tool": "Edit", "command": "", "ok": True, "error": "", "file_path": "a.py", "ts": AT},
    ]


def test_usage_rows_ranked_rounded_and_their_query_cleaned(db: sqlite3.Connection) -> None:
    query = f"why does {SECRET} fail " + "x" * activity.QUERY_CHARS
    count = activity.record_usage(
        db,
        [("m1", 0.123456789), ("m2", 0.5)],
        session_id="",
        project="p",
        kind="injected",
        query=query,
        at=AT,
    )
    assert count == 2
    rows = db.execute("SELECT memory_id, session_id, rank, score, query FROM usage").fetchall()
    assert [r[:4] for r in rows] == [("m1", None, 1, 0.123457), ("m2", None, 2, 0.5)]
    logged = rows[0][4]
    assert SECRET not in logged and "[REDACTED:" in logged
    assert len(logged) == activity.QUERY_CHARS
    activity.record_usage(db, [("m3", 1.0)], session_id="s1", project="p", kind="recalled")
    assert db.execute("SELECT query FROM usage WHERE memory_id = 'm3'").fetchone() == (None,)


def test_sessions_touched_ended_and_offsets_kept(db: sqlite3.Connection) -> None:
    activity.touch_session(db, "", project="p", cwd="/p", transcript_path="/t")  # no id: no row
    assert db.execute("SELECT count(*) FROM sessions").fetchone() == (0,)
    activity.touch_session(db, "s1", project="p", cwd="/p", transcript_path="/t")
    activity.record_usage(db, [("m1", 0.5)], session_id="s1", project="p", kind="injected")
    assert activity.shown_in_context(db, "s1") == {"m1"}
    activity.set_transcript_offset(db, "/t", "s1", 42, main=True)
    assert activity.transcript_offset(db, "/t") == 42
    activity.end_session(db, "s1", "exit", AT)
    (pending,) = activity.pending_sessions(db)
    assert pending.session_id == "s1" and pending.transcript_offset == 42
    activity.clear_pending(db, "s1")
    assert activity.pending_sessions(db) == []
    assert sessions.get_session(db, "s1") == activity.get_session(db, "s1")
