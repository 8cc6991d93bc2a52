"""The warm vector cache follows every kind of change without a reload."""

from __future__ import annotations

from memory_layer.api import restore
from memory_layer.memories import edit, forget, remember
from memory_layer.retrieval import vectors
from memory_layer.storage.records import delete_memory


def _ids(db, embedder, query, projects=("p", None)):
    index = vectors.vector_index(db, embedder.model_id, embedder.dim)
    qvec = embedder.embed([query])[0]
    hits = index.search(qvec, projects=list(projects), limit=10)
    rows = dict(db.execute("SELECT rowid, id FROM memories").fetchall())
    return [rows[r] for r, _ in hits], index


def test_cache_applies_changes_incrementally(db, cfg, fake_embedder):
    a = remember(
        db, "redis cache eviction policy", config=cfg, project="p", embedder=fake_embedder
    ).memory
    ids, first = _ids(db, fake_embedder, "redis cache")
    assert ids == [a.id]
    b = remember(
        db, "redis cache warmup script", config=cfg, project="p", embedder=fake_embedder
    ).memory
    c = remember(
        db, "redis cache in another project", config=cfg, project="q", embedder=fake_embedder
    ).memory
    ids, again = _ids(db, fake_embedder, "redis cache")
    assert again is first  # same object: updated in place, not reloaded
    assert set(ids) == {a.id, b.id} and c.id not in ids
    forget(db, a.id)
    assert _ids(db, fake_embedder, "redis cache")[0] == [b.id]
    restore(db, a.id)
    assert set(_ids(db, fake_embedder, "redis cache")[0]) == {a.id, b.id}
    edit(db, b.id, config=cfg, text="postgres vacuum schedule", embedder=fake_embedder)
    ids, _ = _ids(db, fake_embedder, "postgres vacuum")
    assert ids[0] == b.id
    delete_memory(db, a.id, actor="test")
    ids, index = _ids(db, fake_embedder, "redis cache")
    assert a.id not in ids and index is first
    assert set(_ids(db, fake_embedder, "redis", projects=("q",))[0]) == {c.id}


def test_cache_sees_writes_from_another_connection(db, cfg, fake_embedder):
    from memory_layer.storage.db import open_db

    remember(db, "first memory about docker", config=cfg, project="p", embedder=fake_embedder)
    assert len(_ids(db, fake_embedder, "docker")[0]) == 1
    other = open_db()
    remember(
        other, "second memory about docker volumes", config=cfg, project="p", embedder=fake_embedder
    )
    assert len(_ids(db, fake_embedder, "docker")[0]) == 2


def test_pruned_change_log_forces_full_reload(db, cfg, fake_embedder):
    remember(db, "one", config=cfg, project="p", embedder=fake_embedder)
    _, first = _ids(db, fake_embedder, "one")
    remember(db, "two", config=cfg, project="p", embedder=fake_embedder)
    # Simulate the log having been pruned past what this cache saw.
    db.execute("DELETE FROM memory_changes")
    db.execute(
        "INSERT INTO memory_changes(id, memory_rowid) VALUES (?, 1)", [first.last_change + 100]
    )
    ids, index = _ids(db, fake_embedder, "two")
    assert index is not first and len(ids) == 2


def test_a_wide_and_a_narrow_scope_rank_exactly_as_a_brute_force_product():
    """search_scope multiplies the whole matrix when most rows are wanted and copies the
    wanted rows otherwise: both must give what a plain product over the scope gives."""
    import numpy as np

    model = "all-MiniLM-L6-v2"
    index = vectors.VectorIndex(model, 16)
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((400, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    projects = [f"p{i % 8}" for i in range(400)]
    for i, row in enumerate(rows):
        index.put(1000 + i, row.tobytes(), model, projects[i], active=i % 5 != 0)
    query = rows[3]
    # 320 and 120 of 400 rows wanted: the whole product; 40 rows: the copy.
    for scope in (None, ["p1", "p2", "p3"], ["p1"]):
        wanted = [i for i in range(400) if i % 5 != 0 and (scope is None or projects[i] in scope)]
        product = rows[wanted] @ query
        expected = [1000 + wanted[j] for j in np.argsort(-product, kind="stable")[:10]]
        hits, stats = index.search_scope(query, projects=scope, limit=10)
        assert [rowid for rowid, _ in hits] == expected
        assert stats.count == len(wanted)
