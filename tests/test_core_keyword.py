"""Keyword candidates on large collections: common terms pruned, every-term matches first."""

from __future__ import annotations

import pytest

from memory_layer.models import iso, utcnow
from memory_layer.retrieval import search
from memory_layer.retrieval.search import Scope, keyword_candidates
from memory_layer.storage.records import insert_memory


def _fill(db, texts: list[str], project: str = "p") -> dict[str, int]:
    stamp = iso(utcnow())
    db.execute("BEGIN")
    for i, text in enumerate(texts):
        insert_memory(db, {"id": f"m{i:05d}", "text": text, "category": "general",
                           "project": project, "source": "test", "confidence": 0.8,
                           "created_at": stamp, "updated_at": stamp},
                      actor="test")
    db.execute("COMMIT")
    return dict(db.execute("SELECT id, rowid FROM memories").fetchall())


def _ids(db, hits: dict[int, float]) -> set[str]:
    rows = dict(db.execute("SELECT rowid, id FROM memories").fetchall())
    return {rows[r] for r in hits}


@pytest.fixture
def corpus(db):
    # Short one-term memories outscore the long two-term ones on BM25 alone.
    texts = [f"deploy deploy {i}" for i in range(300)]
    texts += [f"billing billing {i}" for i in range(300)]
    texts += [
        f"we deploy the billing service only after a long review of every change, step {i}"
        for i in range(60)
    ]
    _fill(db, texts)
    return db


def test_memories_with_every_term_come_first_when_or_would_be_costly(corpus, monkeypatch):
    monkeypatch.setattr(search, "OR_ROWS_BUDGET", 100)
    hits = keyword_candidates(corpus, "deploy billing", Scope.for_project("p"), 50)
    assert len(hits) == 50
    assert all(i >= "m00600" for i in _ids(corpus, hits))  # only "deploy the billing ..."


def test_or_still_runs_when_too_few_memories_hold_every_term(corpus, monkeypatch):
    monkeypatch.setattr(search, "OR_ROWS_BUDGET", 100)
    hits = keyword_candidates(corpus, "deploy billing", Scope.for_project("p"), 100)
    ids = _ids(corpus, hits)
    assert len(hits) == 100 and any(i < "m00600" for i in ids)


def test_small_collections_always_or_the_terms(corpus):
    # 660 memories: the OR touches at most 660 rows, under the budget.
    hits = keyword_candidates(corpus, "deploy billing", Scope.for_project("p"), 700)
    assert len(hits) == 660


def test_a_fact_is_found_by_its_subject_and_key(db, cfg, keyword_only):
    from memory_layer.retrieval.search import recall
    from memory_layer.trust.facts import write

    fact = write(db, "ubuntu 22.04", config=cfg, source="cli", project="p",
                 subject="prod-server", key="os").memory
    write(db, "the staging box runs debian", config=cfg, source="cli", project="p")
    hits = recall(db, "what os does prod-server run", scope=Scope.for_project("p"), config=cfg)
    assert hits[0].memory.id == fact.id
    assert hits[0].explain["coverage"] > 0.5  # judged on subject and key, not the value alone


def test_upgrade_indexes_the_subject_and_key_of_existing_facts(db, cfg):
    from memory_layer.storage.migrations import m070_fts_indexes_fact_subject_and_key
    from memory_layer.trust.facts import write

    fact = write(db, "ubuntu 22.04", config=cfg, source="cli", project="p",
                 subject="prod-server", key="os").memory
    # As a database written before m070 holds it: the value alone.
    db.execute("UPDATE memories_fts SET body = ? WHERE rowid = ?", ["ubuntu 22.04", fact.rowid])
    match = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'server'"
    assert db.execute(match).fetchall() == []
    import sqlite_utils

    m070_fts_indexes_fact_subject_and_key(sqlite_utils.Database(db))
    assert db.execute(match).fetchall() == [(fact.rowid,)]
