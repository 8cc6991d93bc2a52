"""storage.tasks (tasks, task_events) and storage.credits (task_credits) on a real
migrated SQLite file: the named queries outcome learning runs instead of its own SQL."""

from __future__ import annotations

import json
import sqlite3

import pytest

from memory_layer.errors import InvalidInput
from memory_layer.storage import credits, tasks

T = [f"2025-01-01T00:0{n}:00+00:00" for n in range(10)]


def task(db: sqlite3.Connection, task_id: str, **fields: object) -> tasks.Task:
    source, list_id, external = task_id.split(":")
    values: dict[str, object] = {
        "id": task_id,
        "source": source,
        "external_id": external,
        "list_id": list_id,
        "status": "pending",
        "opened_at": T[0],
        "state_at": T[0],
        "updated_at": T[0],
    }
    tasks.insert_task(db, values | fields)
    found = tasks.find_task(db, task_id)
    assert found is not None
    return found


def event(db: sqlite3.Connection, task_id: str, at: str, **fields: object) -> None:
    values: dict[str, object] = {"source": "hook:TaskUpdate", "event": "start"}
    values |= {"status": None, "session_id": None, "applied": True} | fields
    tasks.log_event(db, task_id, at=at, **values)  # type: ignore[arg-type]


def test_tasks_are_stored_as_given_and_read_back(db: sqlite3.Connection) -> None:
    made = task(db, "claude:s1:1", session_id="s1", subject="Fix login")
    assert made.subject == "Fix login" and made.is_open and made.description is None
    assert made.to_dict()["id"] == "claude:s1:1" and list(made.to_dict()) == list(tasks.COLUMNS)
    assert tasks.find_task(db, "claude:s1:2") is None
    tasks.update_task(db, made.id, {"outcome": "success", "closed_at": T[3]})
    closed = tasks.find_task(db, made.id)
    assert closed is not None and not closed.is_open and closed.updated_at == T[0]  # as given
    with pytest.raises(InvalidInput, match="Unknown task field"):
        tasks.update_task(db, made.id, {"status; DROP TABLE tasks": "x"})


def test_tracker_ids_pages_and_outcome_counts(db: sqlite3.Connection) -> None:
    task(db, "claude:s1:1", updated_at=T[1], outcome="success", closed_at=T[1])
    task(db, "claude:s2:1", updated_at=T[3], outcome="failure", closed_at=T[4])
    task(db, "beads:shop:bd-1", updated_at=T[2], outcome="success", closed_at=T[5])
    task(db, "claude:s3:2", updated_at=T[4])
    assert [t.id for t in tasks.tasks_with_external_id(db, "1")] == ["claude:s2:1", "claude:s1:1"]
    page = tasks.list_tasks(db, limit=2)
    assert [t.id for t in page] == ["claude:s3:2", "claude:s2:1"]
    assert [t.id for t in tasks.list_tasks(db, limit=2, offset=2)] == [
        "beads:shop:bd-1",
        "claude:s1:1",
    ]
    assert tasks.outcome_counts(db) == {"success": 2, "failure": 1}
    assert sorted(tasks.closed_since(db, T[4])) == [(T[4], "failure"), (T[5], "success")]


def test_spans_and_tasks_closed_in_a_session_turn(db: sqlite3.Connection) -> None:
    task(db, "claude:s1:1", session_id="s1", started_at=T[1], closed_at=T[3], outcome="success")
    task(db, "claude:s1:2", session_id="s1", started_at=T[4])  # still open
    task(db, "claude:s1:3", session_id="s1")  # never started
    task(db, "beads:s1:4", session_id="s1", started_at=T[2])  # another source
    spans = tasks.started_spans(db, "claude", "s1", "claude:s1:3")
    assert sorted(spans) == [(T[1], T[3]), (T[4], "9999")]  # open: ends after any stamp
    assert tasks.started_spans(db, "claude", "s1", "claude:s1:1") == [(T[4], "9999")]
    # A task of another session that this session sent an event for counts too.
    task(db, "claude:s2:1", session_id="s2", outcome="failure", closed_at=T[2])
    event(db, "claude:s2:1", T[2], session_id="s1")
    task(db, "claude:s2:2", session_id="s2", outcome="success", closed_at=T[2])
    assert tasks.closed_in_session(db, "s1", T[0], T[5]) == ["claude:s2:1", "claude:s1:1"]
    assert tasks.closed_in_session(db, "s1", T[3], T[5]) == ["claude:s1:1"]


def test_the_list_of_a_team_task_the_session_worked_on(db: sqlite3.Connection) -> None:
    task(db, "claude:team:3", session_id="lead", updated_at=T[1])
    task(db, "claude:other:3", session_id="s9", updated_at=T[2])  # not this session's
    assert tasks.list_of_session_task(db, "claude", "3", "lead", "") == "team"
    event(db, "claude:other:3", T[2], session_id="lead")
    assert tasks.list_of_session_task(db, "claude", "3", "lead", "") == "other"  # newest
    # Closed: only while the update repeats its final status.
    tasks.update_task(db, "claude:other:3", {"outcome": "success", "status": "completed"})
    assert tasks.list_of_session_task(db, "claude", "3", "lead", "") == "team"
    assert tasks.list_of_session_task(db, "claude", "3", "lead", "completed") == "other"
    assert tasks.list_of_session_task(db, "claude", "3", "team", "") is None  # own list
    assert tasks.list_of_session_task(db, "beads", "3", "lead", "") is None


def test_the_event_log(db: sqlite3.Connection) -> None:
    task(db, "beads:shop:bd-1", session_id="s0")
    assert not tasks.seen_event(db, None) and not tasks.seen_event(db, "k1")
    event(
        db,
        "beads:shop:bd-1",
        T[1],
        event="close",
        source="sync:disk",
        event_key="k1",
        session_id="s2",
        note="closed",
    )
    event(db, "beads:shop:bd-1", T[2], event="close", source="cli", session_id="s1")
    event(
        db, "beads:shop:bd-1", T[3], event="reopen", source="beads", session_id="s2", applied=False
    )
    event(db, "beads:shop:bd-1", T[4], event="close", session_id="")
    assert tasks.seen_event(db, "k1") and tasks.task_of_event(db, "k1") == "beads:shop:bd-1"
    assert tasks.task_of_event(db, "nope") is None
    # The last event that changed the task, not the last one logged.
    assert tasks.last_applied_event(db, "beads:shop:bd-1") == ("close", "hook:TaskUpdate")
    assert tasks.last_applied_event(db, "none") is None
    assert tasks.event_sessions(db, "beads:shop:bd-1") == ["s2", "s1"]  # no empty ids
    log = tasks.task_events(db, "beads:shop:bd-1")
    assert [e["at"] for e in log] == T[1:5] and log[2]["applied"] is False
    assert log[0] == {
        "id": log[0]["id"],
        "at": T[1],
        "source": "sync:disk",
        "event": "close",
        "status": None,
        "session_id": "s2",
        "applied": True,
        "note": "closed",
    }


def credit(db: sqlite3.Connection, memory_id: str, **fields: object) -> dict:
    values: dict[str, object] = {
        "task_id": "claude:s1:1",
        "memory_id": memory_id,
        "outcome": "success",
        "weight": 1.0,
        "delta": 0.2,
        "applied": 0.2,
        "old_score": 0.0,
        "new_score": 0.2,
        "success_inc": 1,
        "failure_inc": 0,
        "use_inc": 1,
        "old_proven_at": None,
        "new_proven_at": T[1],
        "evidence": json.dumps([{"kind": "command", "detail": "ran it"}]),
        "source": "hook:TaskCompleted",
        "actor": "claude:s1",
        "at": T[1],
    }
    return credits.insert_credit(db, values | fields)


def test_credits_are_stored_read_and_reversed(db: sqlite3.Connection) -> None:
    first = credit(db, "m1")
    assert first["evidence"] == [{"kind": "command", "detail": "ran it"}]  # decoded
    assert first["reversed_at"] is None and credits.get_credit(db, first["id"]) == first
    assert credits.get_credit(db, 999) is None
    shown = credit(db, "m2", weight=0.0, applied=0.0, evidence="[]")
    other = credit(db, "m1", task_id="claude:s2:1", at=T[2])
    undone = credits.mark_reversed(db, first["id"], at=T[3], actor="alice", reason="wrong")
    assert (undone["reversed_at"], undone["reversed_by"], undone["reversal_reason"]) == (
        T[3],
        "alice",
        "wrong",
    )
    assert [c["id"] for c in credits.task_credits(db, "claude:s1:1")] == [first["id"], shown["id"]]
    assert [c["id"] for c in credits.live_task_credits(db, "claude:s1:1")] == [shown["id"]]
    assert [c["id"] for c in credits.memory_credits(db, "m1")] == [first["id"], other["id"]]
    assert [c["id"] for c in credits.weighted_credits(db)] == [first["id"], other["id"]]
    with pytest.raises(InvalidInput, match="Unknown credit field"):
        credit(db, "m3", reversed_by="nobody")  # a reversal is not written on insert
    with pytest.raises(sqlite3.IntegrityError):  # one live credit per (task, memory)
        credit(db, "m2")


def test_credited_counts_and_direct_reports(db: sqlite3.Connection) -> None:
    assert credits.credited_counts(db, []) == {}
    credit(db, "m1")
    credit(db, "m2")
    credit(db, "m3", weight=0.0)  # shown, not acted on
    gone = credit(db, "m1", task_id="claude:s2:1")
    credits.mark_reversed(db, gone["id"], at=T[3], actor="a", reason="undo")
    counts = credits.credited_counts(db, ["claude:s1:1", "claude:s2:1", "claude:s9:9"])
    assert counts == {"claude:s1:1": 2}  # reversed and zero-weight credits do not count
    early = credit(db, "m5", task_id=None, source="mcp:claude", at=T[1])
    late = credit(db, "m5", task_id=None, source="mcp:claude", at=T[4])
    credit(db, "m5", task_id=None, source="cli", at=T[4])
    credit(db, "m5", source="mcp:claude", at=T[4])  # through a task: not a direct report
    reports = credits.live_direct_reports(db, "m5", "mcp:claude", T[1])
    assert [c["id"] for c in reports] == [early["id"], late["id"]]
    assert [c["id"] for c in credits.live_direct_reports(db, "m5", "mcp:claude", T[2])] == [
        late["id"]
    ]
    credits.mark_reversed(db, late["id"], at=T[5], actor="a", reason="undo")
    assert credits.live_direct_reports(db, "m5", "mcp:claude", T[2]) == []
