"""Storage: file mode, WAL, migrations, operations log, dedupe, CJK, project identity."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from memory_layer.api import restore
from memory_layer.errors import DatabaseError, InvalidInput, NotFound
from memory_layer.memories import edit, forget, remember
from memory_layer.paths import db_path
from memory_layer.project import normalise_remote, project_for
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.db import open_db
from memory_layer.storage.migrations import MIGRATIONS, migration_set
from memory_layer.storage.records import get_memory, history


def test_database_file_is_private_and_wal(db):
    assert oct(db_path().stat().st_mode & 0o777) == "0o600"
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_final_schema(db):
    columns = {r[1] for r in db.execute("PRAGMA table_info(memories)")}
    assert {
        "id",
        "text",
        "category",
        "project",
        "tags",
        "source",
        "confidence",
        "outcome_score",
        "success_count",
        "failure_count",
        "use_count",
        "last_used_at",
        "proven_at",
        "status",
        "created_at",
        "updated_at",
        "embedding",
        "embedding_model",
        "content_hash",
    } <= columns
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "memories",
        "operations",
        "memories_fts",
        "meta",
        "usage",
        "sessions",
        "session_events",
    } <= tables
    applied = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == [name for name, _ in MIGRATIONS]


def test_upgrade_from_first_schema_keeps_data(tmp_path):
    from sqlite_utils import Database

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.isolation_level = None
    first = MIGRATIONS[0][0]
    migration_set().apply(Database(conn), stop_before=[name for name, _ in MIGRATIONS[1:2]])
    assert [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations")] == [first]
    conn.execute(
        "INSERT INTO memories(id, text, category, project, tags, source, confidence, "
        "created_at, updated_at) VALUES ('old1', 'Legacy memory about 数据库 and pg_dump', "
        "'gotcha', NULL, '[]', 'cli', 0.8, '2025-01-01T00:00:00+00:00', "
        "'2025-01-01T00:00:00+00:00')"
    )
    conn.close()
    upgraded = open_db(path)
    memory = get_memory(upgraded, "old1")
    assert memory.text.startswith("Legacy memory")
    assert memory.proven_at is None
    from memory_layer.config import load_config

    hits = recall(upgraded, "pg_dump", scope=Scope(projects=None), config=load_config())
    assert [h.memory.id for h in hits] == ["old1"]
    hits = recall(upgraded, "数据库", scope=Scope(projects=None), config=load_config())
    assert [h.memory.id for h in hits] == ["old1"]


def test_every_change_is_logged(db, cfg):
    memory = remember(
        db, "Use uv for virtualenvs", config=cfg, category="tool_preference", project="p"
    ).memory
    edit(db, memory.id, config=cfg, category="preference", actor="alice")
    forget(db, memory.id, actor="bob", reason="outdated")
    restore(db, memory.id, actor="bob")
    ops = history(db, memory.id)
    assert [op.action for op in ops] == ["create", "edit", "retire", "restore"]
    assert ops[1].actor == "alice"
    assert ops[1].old_value == {"category": "tool_preference"}
    assert ops[1].new_value == {"category": "preference"}
    assert ops[2].context == {"reason": "outdated"}
    assert ops[2].old_value == {"status": "active"} and ops[2].new_value == {"status": "retired"}


def test_near_duplicate_reinforces(db, cfg, fake_embedder):
    first = remember(
        db,
        "Always run alembic upgrade head before pytest",
        config=cfg,
        category="command",
        project="p",
        embedder=fake_embedder,
    )
    again = remember(
        db,
        "always run Alembic upgrade head before pytest!",
        config=cfg,
        category="command",
        project="p",
        embedder=fake_embedder,
        tags=["db"],
    )
    assert first.created and not again.created
    assert again.memory.id == first.memory.id
    assert again.memory.use_count == 1
    assert again.memory.proven_at is not None
    assert again.memory.tags == ("db",)
    near = remember(
        db,
        "Always run alembic upgrade head before running pytest",
        config=cfg,
        category="command",
        project="p",
        embedder=fake_embedder,
    )
    assert not near.created and near.memory.id == first.memory.id
    assert near.similarity is not None and near.similarity < 1.0
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    # Another project is another scope: no reinforcement across it.
    other = remember(
        db,
        "Always run alembic upgrade head before pytest",
        config=cfg,
        category="command",
        project="q",
        embedder=fake_embedder,
    )
    assert other.created


def test_retired_duplicate_is_not_reinforced(db, cfg):
    first = remember(db, "Use black", config=cfg, project="p").memory
    forget(db, first.id)
    second = remember(db, "Use black", config=cfg, project="p")
    assert second.created and second.memory.id != first.id


def test_cjk_keyword_search(db, cfg, keyword_only):
    target = remember(
        db,
        "部署前必须运行数据库迁移脚本 migrate.sh",
        config=cfg,
        category="convention",
        project="p",
    ).memory
    remember(db, "数据分析使用 pandas 和 polars", config=cfg, project="p")
    for query in ("数据库迁移", "迁移脚本", "部署前要做什么"):
        hits = recall(db, query, scope=Scope.for_project("p"), config=cfg)
        assert hits and hits[0].memory.id == target.id, query
    assert (
        recall(db, "数据分析", scope=Scope.for_project("p"), config=cfg)[0].memory.id != target.id
    )


def test_scope_defaults_to_project_plus_global(db, cfg, keyword_only):
    mine = remember(db, "redis timeout is 5s", config=cfg, project="github.com/a/api").memory
    glob = remember(db, "redis needs maxmemory-policy set", config=cfg, project=None).memory
    remember(db, "redis runs on port 6380 here", config=cfg, project="github.com/b/api")
    hits = recall(db, "redis", scope=Scope.for_project("github.com/a/api"), config=cfg)
    assert {h.memory.id for h in hits} == {mine.id, glob.id}


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_same_folder_name_in_two_repos_are_different_projects(tmp_path):
    one = tmp_path / "work" / "api"
    two = tmp_path / "personal" / "api"
    three = tmp_path / "clone" / "api"
    for repo in (one, two, three):
        repo.mkdir(parents=True)
        _git("init", "-q", cwd=repo)
    _git("remote", "add", "origin", "git@github.com:Acme/API.git", cwd=one)
    _git("remote", "add", "origin", "https://github.com/acme/api", cwd=three)
    (two / "src").mkdir()
    assert project_for(one) == "github.com/acme/api"
    assert project_for(three) == project_for(one)  # same remote, other clone: same project
    assert project_for(two) == str(two.resolve())
    assert project_for(two / "src") == str(two.resolve())  # subfolders share the repo
    assert project_for(one) != project_for(two)
    outside = tmp_path / "loose"
    outside.mkdir()
    assert project_for(outside) == str(outside.resolve())


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:Org/Repo.git", "github.com/org/repo"),
        ("https://user:token@github.com/org/repo.git/", "github.com/org/repo"),
        ("ssh://git@gitlab.example.com:22/group/sub/repo.git", "gitlab.example.com/group/sub/repo"),
        ("https://gitlab.example.com:8443/g/r", "gitlab.example.com:8443/g/r"),
    ],
)
def test_normalise_remote(url, expected):
    assert normalise_remote(url) == expected


def test_bad_inputs_store_nothing(db, cfg):
    with pytest.raises(InvalidInput, match="empty"):
        remember(db, "   ", config=cfg)
    with pytest.raises(InvalidInput, match="Did you mean 'gotcha'"):
        remember(db, "x", config=cfg, category="gotha")
    with pytest.raises(InvalidInput, match="limit is 10000"):
        remember(db, "x" * 10001, config=cfg)
    with pytest.raises(InvalidInput, match="UTF-8"):
        remember(db, "bad \udcff byte", config=cfg)
    with pytest.raises(InvalidInput, match="Confidence"):
        remember(db, "x", config=cfg, confidence=1.5)
    with pytest.raises(NotFound):
        get_memory(db, "nope")
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM operations").fetchone()[0] == 0


def test_corrupt_database_is_reported_and_untouched(tmp_path):
    path = tmp_path / "memories.db"
    garbage = b"this is not a database" * 100
    path.write_bytes(garbage)
    with pytest.raises(DatabaseError, match="corrupt"):
        open_db(path)
    assert path.read_bytes() == garbage


def test_locked_database_is_reported(db, cfg, monkeypatch):
    """Another process holds the write lock: the library raises its named error and the
    CLI exits 1 with what to do, for every kind of write, and nothing is half-stored."""
    from click.testing import CliRunner

    import memory_layer.storage.db as dbmod
    from memory_layer.cli import cli

    kept = remember(db, "the store before the lock", config=cfg, project="p").memory
    monkeypatch.setattr(dbmod, "BUSY_TIMEOUT_MS", 100)
    blocker = sqlite3.connect(db_path(), isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        other = dbmod.open_db()
        with pytest.raises(DatabaseError, match="locked by another process"):
            remember(other, "x", config=cfg)
        other.close()
        for args in (["remember", "another memory entirely", "--global"],
                     ["forget", kept.id], ["edit", kept.id, "--text", "changed"]):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 1, (args, result.output)
            assert "is locked by another process" in result.output, args
            assert "memory-layer engine stop" in result.output
            assert "Traceback" not in result.output
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    rows = db.execute("SELECT id, text, status FROM memories").fetchall()
    assert rows == [(kept.id, "the store before the lock", "active")]


def test_prefix_ids(db, cfg):
    memory = remember(db, "Use pnpm in acme/web", config=cfg, project="p").memory
    assert get_memory(db, memory.id[:6]).id == memory.id
    with pytest.raises(InvalidInput):
        get_memory(db, "")


def test_concurrent_first_open_migrates_once(tmp_path):
    import multiprocessing

    path = tmp_path / "race.db"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        pool.map(_open_and_count, [str(path)] * 8)
    conn = sqlite3.connect(path)
    names = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations")]
    assert sorted(names) == sorted(name for name, _ in MIGRATIONS)  # each exactly once
    assert os.stat(path).st_mode & 0o777 == 0o600


def _open_and_count(path: str) -> int:
    return open_db(Path(path)).execute("SELECT count(*) FROM memories").fetchone()[0]


def test_list_rejects_a_negative_page(db):
    from memory_layer.listing import Filters, list_memories

    with pytest.raises(InvalidInput, match="limit must be at least 1"):
        list_memories(db, Filters(), limit=-1)
