"""The reads recall moved into storage, on a real migrated SQLite file: keyword search
and its scope filter (storage.fts), the stored vectors and their change log
(storage.embeddings), and the store's path (storage.conn)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memory_layer.storage import embeddings, fts, records
from memory_layer.storage.conn import db_path
from memory_layer.storage.db import open_db
from tests.test_storage_tables import add

ACTIVE = ("active",)


def test_document_frequency_and_collection_size(db: sqlite3.Connection) -> None:
    assert fts.collection_size(db) == 0 and fts.document_frequency(db, '"redis"') == 0
    add(db, "a", "redis cache eviction", project="shop")
    add(db, "b", "redis sentinel failover", status="retired")  # any status counts
    last = add(db, "c", "postgres vacuum", subject="redis-host")  # the indexed subject too
    assert fts.document_frequency(db, '"redis"') == 3
    assert fts.document_frequency(db, '"vacuum"') == 1
    assert fts.collection_size(db) == last


def test_bm25_matches_filters_by_scope(db: sqlite3.Connection) -> None:
    shop = add(db, "s", "deploy the billing service", project="shop")
    other = add(db, "o", "deploy the search index", project="other")
    glob = add(db, "g", "deploy only on weekdays")  # global
    rejected = add(db, "r", "deploy rejected idea", project="shop", status="rejected")
    cmd = add(db, "c", "deploy with make release", project="shop", category="command")
    scened = add(db, "x", "deploy via helm", project="shop", scene="server_ops")

    def hits(match: str = '"deploy"', **scope: object) -> set[int]:
        args: dict[str, object] = {"projects": ("shop", None), "statuses": ACTIVE} | scope
        found = fts.bm25_matches(db, match, 50, **args)  # type: ignore[arg-type]
        assert all(score > 0 for score in found.values())  # larger is better
        return set(found)

    assert hits() == {shop, glob, cmd, scened}
    assert hits(projects=None) == {shop, other, glob, cmd, scened}
    assert hits(projects=("shop",)) == {shop, cmd, scened}
    assert hits(projects=(None,)) == {glob}
    assert hits(projects=()) == set()  # no project at all: nothing
    assert hits(statuses=("active", "rejected")) == {shop, glob, cmd, scened, rejected}
    assert hits(statuses=()) == hits(statuses=("active", "rejected"))  # any status
    assert hits(category="command") == {cmd}
    assert hits(scenes=("coding",)) == {shop, glob, cmd}  # scene-less ones stay in
    assert hits(scenes=("server_ops",)) == {shop, glob, cmd, scened}
    assert hits(scenes=()) == {shop, glob, cmd}
    assert hits('"deploy" AND "billing"') == {shop}
    assert len(fts.bm25_matches(db, '"deploy"', 2, projects=None, statuses=ACTIVE)) == 2


def test_bm25_ranks_the_denser_match_first(db: sqlite3.Connection) -> None:
    dense = add(db, "d", "redis redis redis")
    add(db, "l", "redis appears once in this much longer memory about caching layers")
    found = fts.bm25_matches(db, '"redis"', 10, projects=None, statuses=ACTIVE)
    assert list(found)[0] == dense


def test_sample_texts_is_the_scope_and_stable(db: sqlite3.Connection) -> None:
    for i in range(30):
        add(db, f"m{i:02d}", f"memory number {i}", project="shop" if i % 2 else "other")
    add(db, "old", "retired text", project="shop", status="retired")
    shop = fts.sample_texts(db, 100, projects=("shop",), statuses=ACTIVE)
    assert sorted(shop) == sorted(f"memory number {i}" for i in range(1, 30, 2))
    few = fts.sample_texts(db, 5, projects=None, statuses=ACTIVE)
    assert len(few) == 5 and few == fts.sample_texts(db, 5, projects=None, statuses=ACTIVE)
    # A hash of the rowid, not the first rows: the spread reaches past the oldest five.
    assert sorted(few) != [f"memory number {i}" for i in range(5)]
    assert fts.sample_texts(db, 5, projects=("shop",), statuses=("retired",)) == ["retired text"]


def test_vector_rows_by_model_and_by_rowid(db: sqlite3.Connection) -> None:
    a = add(db, "a", "one", project="shop", embedding=b"\x01" * 8, embedding_model="m1")
    b = add(db, "b", "two", status="retired", embedding=b"\x02" * 8, embedding_model="m1")
    c = add(db, "c", "three", embedding=b"\x03" * 12, embedding_model="m2")
    d = add(db, "d", "no vector yet")
    assert embeddings.vector_rows(db, "m1") == [
        (a, b"\x01" * 8, "m1", "shop", 1),
        (b, b"\x02" * 8, "m1", None, 0),
    ]
    assert embeddings.vector_rows(db, "none") == []
    got = embeddings.vector_rows_by_rowid(db, [d, c, 999])
    assert got == {c: (c, b"\x03" * 12, "m2", None, 1), d: (d, None, None, None, 1)}
    assert embeddings.stored_vector_bytes(db, "m2") == 12
    assert embeddings.stored_vector_bytes(db, "none") == 0


def test_vector_rows_by_rowid_reads_past_one_chunk(db: sqlite3.Connection) -> None:
    db.execute("BEGIN")
    rowids = [add(db, f"m{i:04d}", f"text {i}") for i in range(embeddings._IN_CHUNK + 20)]
    db.execute("COMMIT")
    assert sorted(embeddings.vector_rows_by_rowid(db, rowids)) == rowids


def test_change_log_reads(db: sqlite3.Connection) -> None:
    assert embeddings.last_change(db) == 0
    assert embeddings.changes_since(db, 0, 10) == (None, [])
    a = add(db, "a", "one")
    b = add(db, "b", "two")
    first = embeddings.last_change(db)
    oldest, changed = embeddings.changes_since(db, 0, 10)
    assert oldest is not None and [r for r, _ in changed] == [a, b]
    assert changed[-1][1] == first  # (rowid, change id), oldest first
    records.update_memory(db, "a", {"status": "retired"}, actor="test")
    records.update_memory(db, "b", {"text": "two, edited"}, actor="test")  # no vector change
    _, after = embeddings.changes_since(db, first, 10)
    assert [r for r, _ in after] == [a] and embeddings.last_change(db) == after[0][1]
    assert len(embeddings.changes_since(db, 0, 2)[1]) == 2  # the limit holds


def test_db_path_names_the_file(db: sqlite3.Connection, user_home: Path) -> None:
    path = Path(db_path(db))
    assert path.name == "memories.db" and path.is_relative_to(user_home)
    other = open_db()
    try:
        assert db_path(other) == db_path(db)
    finally:
        other.close()
