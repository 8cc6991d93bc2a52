"""The storage queries the use cases moved into storage, on a real migrated SQLite file:
memory lookups (records), listing and counts (memory_lists), the operations log,
conflicts, proposals, and checking a backup copy (db)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memory_layer.errors import InvalidInput
from memory_layer.storage import conflicts, memory_lists, operations, proposals, records
from memory_layer.storage import db as storage_db
from memory_layer.storage.memory_lists import Filters

T0, T1, T2, T3 = (f"2025-01-01T00:00:0{n}+00:00" for n in range(4))


def add(db: sqlite3.Connection, memory_id: str, text: str, **fields: object) -> int:
    """Insert a memory through records (its FTS row and log entry too); its rowid."""
    values: dict[str, object] = {
        "id": memory_id,
        "text": text,
        "category": "general",
        "source": "test",
        "confidence": 0.5,
        "created_at": T0,
        "updated_at": T0,
    }
    return records.insert_memory(db, values | fields, actor="test").rowid


def ids(memories: list) -> list[str]:
    return [m.id for m in memories]


def test_exact_lookups_and_duplicate_text(db: sqlite3.Connection) -> None:
    add(db, "m1", "Use  uv run pytest", project="shop")
    add(db, "m2", "use uv run pytest", status="rejected")  # global, another status
    assert records.memory_exists(db, "m1") and not records.memory_exists(db, "m")
    assert records.stored_text(db, "m1") == "Use  uv run pytest"
    assert records.stored_text(db, "nope") is None
    # Normalised as for duplicates (case, spacing), whatever the status.
    assert records.text_stored(db, "use uv run PYTEST", "shop")
    assert records.text_stored(db, "use uv run pytest", None)
    assert not records.text_stored(db, "use uv run pytest", "other")
    assert ids(records.with_same_text(db, "USE uv run pytest", "shop", ("active",))) == ["m1"]
    both = records.with_same_text(
        db, "use uv run pytest", "shop", ("active", "rejected"), with_global=True
    )
    assert ids(both) == ["m1", "m2"]  # oldest first
    assert ids(records.with_same_text(db, "use uv run pytest", "shop", ("rejected",))) == []
    only = records.with_same_text(
        db, "use uv run pytest", "shop", ("active", "rejected"), with_global=True, limit=1
    )
    assert ids(only) == ["m1"]


def test_status_facts_and_conflict_candidates(db: sqlite3.Connection) -> None:
    add(db, "f1", "ubuntu 22.04", subject="prod-server", fact_key="os", project="ops")
    add(
        db,
        "f2",
        "debian 12",
        subject="PROD-SERVER",
        fact_key="os",
        project="ops",
        status="conflict",
        conflict_id="c1",
    )
    add(
        db,
        "f3",
        "arm64",
        subject="prod-server",
        fact_key="arch",
        project="ops",
        status="conflict",
        conflict_id="c1",
    )
    add(db, "g1", "ubuntu 24.04", subject="prod-server", fact_key="os")  # global scope
    add(db, "p1", "pending one", status="pending")
    values = records.fact_values(db, "ops", "Prod-Server", "os", ("active", "conflict"))
    assert ids(values) == ["f1", "f2"]  # subject compared case-insensitively
    assert ids(records.fact_values(db, None, "prod-server", "os", ("active",))) == ["g1"]
    assert ids(records.fact_values(db, "ops", "prod-server", "os", ("pending",))) == []
    assert ids(records.in_conflict(db, "c1", "conflict")) == ["f2", "f3"]
    assert ids(records.in_conflict(db, "c1", "rejected")) == []
    assert ids(records.with_status(db, ("pending", "conflict"))) == ["f2", "f3", "p1"]


def test_unstamped_created_times_and_ids(db: sqlite3.Connection) -> None:
    add(db, "abcd1", "stamped", checksum="x")
    add(db, "abcd2", "not stamped", created_at=T1)
    add(db, "abce3", "pending, not stamped", status="pending", created_at=T2)
    assert records.unstamped_active(db) == [("abcd2", "not stamped", "general", "test")]
    assert sorted(records.created_times(db)) == [T0, T1, T2]
    assert records.ids_matching(db, "abcd1", 3) == ["abcd1"]  # exact
    assert sorted(records.ids_matching(db, "abcd", 3)) == ["abcd1", "abcd2"]
    assert len(records.ids_matching(db, "abc", 1)) == 1
    assert records.ids_matching(db, "abcd", 0) == []  # too short to be a prefix
    assert records.ids_matching(db, "zzzz", 3) == []


def test_backfill_queries_write_vectors_without_operations(db: sqlite3.Connection) -> None:
    add(db, "v1", "one")
    add(db, "v2", "two", embedding=b"\x01" * 4, embedding_model="model-a")
    add(db, "v3", "three", embedding=b"\x02" * 4, embedding_model="model-b")
    assert [t for _, t in records.texts_to_embed(db, "model-a")] == ["one", "three"]
    assert [t for _, t in records.texts_to_embed(db, "model-a", force=True)] == [
        "one",
        "two",
        "three",
    ]
    before = operations.count_operations(db)
    rowids = [rowid for rowid, _ in records.texts_to_embed(db, "model-a")]
    records.set_embeddings(db, "model-a", [(rowid, b"\x03" * 4) for rowid in rowids])
    assert records.texts_to_embed(db, "model-a") == []
    stored = db.execute("SELECT embedding, embedding_model FROM memories WHERE id = 'v1'")
    assert stored.fetchone() == (b"\x03" * 4, "model-a")
    assert operations.count_operations(db) == before  # vectors are derived data
    assert records.unembedded_count(db) == 0


def test_listing_filters_sorts_and_pages(db: sqlite3.Connection) -> None:
    add(db, "l1", "one", project="shop", tags=["deploy"], created_at=T0)
    add(db, "l2", "two", project="shop", category="command", created_at=T1, outcome_score=0.5)
    add(db, "l3", "three", created_at=T2, source="mcp:claude", outcome_score=-0.5)
    assert ids(memory_lists.list_memories(db, Filters())) == ["l3", "l2", "l1"]
    assert ids(memory_lists.list_memories(db, Filters(), sort="oldest")) == ["l1", "l2", "l3"]
    assert ids(memory_lists.list_memories(db, Filters(), sort="no-such")) == ["l3", "l2", "l1"]
    assert ids(memory_lists.list_memories(db, Filters(), sort="outcome")) == ["l2", "l1", "l3"]
    assert ids(memory_lists.list_memories(db, Filters(project="global"))) == ["l3"]
    assert ids(memory_lists.list_memories(db, Filters(tag="deploy"))) == ["l1"]
    assert ids(memory_lists.list_memories(db, Filters(project="shop", category="command"))) == [
        "l2"
    ]
    assert ids(memory_lists.list_memories(db, Filters(min_outcome=0.0, max_outcome=0.1))) == ["l1"]
    page = memory_lists.list_memories(db, Filters(), limit=1, offset=1)
    assert ids(page) == ["l2"]
    assert memory_lists.count_memories(db, Filters(project="shop")) == 2
    assert memory_lists.count_memories(db, Filters(source="mcp:claude")) == 1
    with pytest.raises(InvalidInput, match="limit must be at least 1"):
        memory_lists.list_memories(db, Filters(), limit=-1)  # SQLite: LIMIT -1 = all
    with pytest.raises(InvalidInput):
        memory_lists.list_memories(db, Filters(category="no such category"))


def test_grouped_counts_and_outcome_marks(db: sqlite3.Connection) -> None:
    add(db, "c1", "a", project="shop", success_count=3, outcome_score=0.6)
    add(db, "c2", "b", project="shop", failure_count=1, outcome_score=-0.4)
    add(db, "c3", "c", status="retired", success_count=5, outcome_score=0.9)
    assert memory_lists.counts_by(db, "project") == {"shop": 2, "global": 1}
    assert memory_lists.counts_by(db, "status") == {"active": 2, "retired": 1}
    with pytest.raises(InvalidInput):
        memory_lists.counts_by(db, "text; DROP TABLE memories")
    marks = memory_lists.outcome_marks(db, proven_min_successes=3, proven_min_score=0.5, floor=-0.3)
    assert marks == (2, 1, 1)  # active only: judged c1 c2, proven c1, sinking c2


def test_operations_count_and_last_context(db: sqlite3.Connection) -> None:
    add(db, "o1", "x")
    assert operations.count_operations(db) == 1  # the create
    operations.record_op(
        db, actor="a", action="dispute", memory_id="o1", context={"reason": "first"}
    )
    operations.record_op(
        db, actor="b", action="dispute", memory_id="o1", context={"reason": "second"}
    )
    operations.record_op(db, actor="c", action="edit", memory_id="o1")
    assert operations.last_context(db, "o1", "dispute") == {"reason": "second"}
    assert operations.last_context(db, "o1", "edit") is None  # no context
    assert operations.last_context(db, "o1", "reject") is None
    # The names the doors import from records are the log's own.
    assert records.history is operations.history and records.Operation is operations.Operation


def test_conflicts_one_open_per_fact(db: sqlite3.Connection) -> None:
    assert conflicts.open_conflict_id(db, None, "srv", "os") is None
    conflicts.insert_conflict(db, "c1", None, "srv", "os", opened_at=T1)
    conflicts.insert_conflict(db, "c2", "ops", "db", "port", opened_at=T0)
    # NULL project is the global scope; subject case-insensitive.
    assert conflicts.open_conflict_id(db, None, "SRV", "os") == "c1"
    assert conflicts.open_conflict_id(db, "ops", "srv", "os") is None
    with pytest.raises(sqlite3.IntegrityError):  # the unique index: one open per fact
        conflicts.insert_conflict(db, "c3", None, "srv", "os", opened_at=T2)
    assert [c.id for c in conflicts.open_conflicts(db)] == ["c2", "c1"]  # oldest first
    got = conflicts.get_conflict(db, "c1")
    assert got == conflicts.Conflict("c1", None, "srv", "os", T1, None) and got.is_open
    conflicts.mark_resolved(db, "c1", at=T3, actor="alice", chosen_id=None, reason="none")
    closed = conflicts.get_conflict(db, "c1")
    assert closed is not None and not closed.is_open and closed.resolved_at == T3
    n = conflicts.resolve_open_for_fact(
        db, "ops", "DB", "port", at=T3, actor="bob", chosen_id="m9", reason=None
    )
    assert n == 1 and conflicts.open_conflicts(db) == []
    again = conflicts.resolve_open_for_fact(
        db, "ops", "db", "port", at=T3, actor="bob", chosen_id="m9", reason=None
    )
    assert again == 0 and conflicts.get_conflict(db, "nope") is None
    assert conflicts.ids_matching(db, "c1", 3) == ["c1"]
    assert sorted(conflicts.ids_matching(db, "c", 3)) == ["c1", "c2"]


def test_proposals_open_decided_and_by_memory(db: sqlite3.Connection) -> None:
    def propose(pid: str, memory_id: str, text: str, at: str) -> dict:
        return proposals.insert_proposal(
            db,
            pid,
            memory_id,
            text,
            changes={"scene": "deploy", "category": "command"},
            source="mcp:claude",
            reason="clearer",
            created_at=at,
            base_text="old",
        )

    stored = propose("p2", "m1", "new text", T1)
    assert stored["status"] == "open" and stored["decided_by"] is None
    # changes come back decoded, in sorted order (how they were stored)
    assert list(stored["changes"]) == ["category", "scene"] and stored["base_text"] == "old"
    propose("p1", "m2", "other", T0)
    propose("p3", "m1", "third", T2)
    assert proposals.open_proposal_for(db, "m1", "new text") == stored
    assert proposals.open_proposal_for(db, "m1", "nothing like it") is None
    with pytest.raises(sqlite3.IntegrityError):  # one open proposal per (memory, text)
        propose("p4", "m1", "new text", T3)
    assert [p["id"] for p in proposals.open_proposals(db)] == ["p1", "p2", "p3"]
    assert [p["id"] for p in proposals.open_proposals(db, "m1")] == ["p2", "p3"]
    proposals.mark_decided(db, "p2", "rejected", actor="alice", at=T3, reason="no")
    decided = proposals.get_proposal(db, "p2")
    assert decided is not None and decided["status"] == "rejected"
    assert (decided["decided_by"], decided["decided_at"], decided["decision_reason"]) == (
        "alice",
        T3,
        "no",
    )
    assert [p["id"] for p in proposals.open_proposals(db, "m1")] == ["p3"]
    assert proposals.get_proposal(db, "p9") is None
    assert sorted(proposals.ids_matching(db, "p", 3)) == ["p1", "p2", "p3"]
    assert len(proposals.ids_matching(db, "p", 2)) == 2
    assert proposals.ids_matching(db, "p1", 0) == ["p1"]  # the exact id needs no prefix


def test_a_backup_copy_is_checked_on_the_copy(db: sqlite3.Connection, tmp_path: Path) -> None:
    add(db, "b1", "kept")
    dest = tmp_path / "copy.db"
    copy = storage_db.copy_store(db, dest)
    try:
        assert storage_db.quick_check(copy) == "ok"
        assert records.total_memories(copy) == 1 and operations.count_operations(copy) == 1
    finally:
        copy.close()
    add(db, "b2", "after the copy")
    reopened = sqlite3.connect(str(dest))
    try:
        assert records.total_memories(reopened) == 1  # a snapshot, not a live view
    finally:
        reopened.close()
