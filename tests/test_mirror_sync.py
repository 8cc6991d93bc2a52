"""The Markdown mirror round-trip, its git snapshots, and `memory-layer backup`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import git
from click.testing import CliRunner

from memory_layer.api import inbox
from memory_layer.cli import cli
from memory_layer.mirror import parse, sync
from memory_layer.storage.records import get_memory
from memory_layer.trust.facts import write
from memory_layer.trust.visibility import agent_visible


def seed(db, cfg):
    a = write(
        db,
        "Deploy with fly deploy --strategy rolling",
        config=cfg,
        source="cli",
        category="command",
        scene="deploy",
    ).memory
    b = write(
        db,
        "prod-server runs ubuntu 22.04",
        config=cfg,
        source="cli",
        project="acme",
        subject="prod-server",
        key="os",
    ).memory
    c = write(db, "Agents proposed this one", config=cfg, source="mcp:codex").memory
    return a, b, c


def test_mirror_writes_one_file_per_record_with_frontmatter(db, cfg, tmp_path):
    a, b, c = seed(db, cfg)
    report = sync(db, tmp_path / "vault", config=cfg)
    assert report["records"] == 3 and report["written"] == 3
    meta, body = parse((tmp_path / "vault" / f"{a.id}.md").read_text())
    assert body == a.text
    for key in ("id", "category", "scope", "scene", "status", "source", "review_by", "checksum"):
        assert key in meta
    assert (meta["id"], meta["scope"], meta["scene"], meta["status"]) == (
        a.id,
        "global",
        "deploy",
        "active",
    )
    assert meta["checksum"] == get_memory(db, a.id).extra["checksum"]
    meta_b, _ = parse((tmp_path / "vault" / f"{b.id}.md").read_text())
    assert (meta_b["scope"], meta_b["project"], meta_b["key"]) == ("project", "acme", "os")
    meta_c, _ = parse((tmp_path / "vault" / f"{c.id}.md").read_text())
    assert meta_c["status"] == "pending" and meta_c["withheld"] == "pending review"
    # Nothing changed: a second sync rewrites nothing.
    assert sync(db, tmp_path / "vault", config=cfg)["written"] == 0


def test_edit_in_the_mirror_comes_back_withheld_until_verified(db, cfg, tmp_path):
    a, _, _ = seed(db, cfg)
    vault = tmp_path / "vault"
    sync(db, vault, config=cfg)
    path = vault / f"{a.id}.md"
    path.write_text(path.read_text().replace("rolling", "canary"))
    report = sync(db, vault, config=cfg)
    assert report["edited"] == [a.id]
    edited = get_memory(db, a.id)
    assert edited.text == "Deploy with fly deploy --strategy canary"
    assert not agent_visible(edited, cfg)
    assert [i["kind"] for i in inbox(db, config=cfg) if i["id"] == a.id] == ["unverified"]
    meta, _ = parse(path.read_text())
    assert "edited since verification" in meta["withheld"]
    # Not re-imported on the next sync: the file now carries the stored text's hash.
    assert sync(db, vault, config=cfg)["edited"] == []
    out = CliRunner().invoke(cli, ["verify", a.id, "--reason", "canary is right"])
    assert out.exit_code == 0, out.output
    assert agent_visible(get_memory(db, a.id), cfg)


def test_new_file_becomes_a_pending_proposal(db, cfg, tmp_path):
    vault = tmp_path / "vault"
    sync(db, vault, config=cfg)
    (vault / "idea.md").write_text("---\ncategory: gotcha\n---\nThe VPN drops SSH after 10 min\n")
    report = sync(db, vault, config=cfg)
    [new_id] = report["new"]
    memory = get_memory(db, new_id)
    assert (memory.status, memory.category, memory.source) == ("pending", "gotcha", "mirror")
    assert not (vault / "idea.md").exists() and (vault / f"{new_id}.md").exists()


def test_purged_record_file_is_removed(db, cfg, tmp_path):
    from memory_layer.storage.records import delete_memory

    a, _, _ = seed(db, cfg)
    vault = tmp_path / "vault"
    sync(db, vault, config=cfg)
    delete_memory(db, a.id, actor="cli")
    assert sync(db, vault, config=cfg)["removed"] == 1
    assert not (vault / f"{a.id}.md").exists()


def test_mirror_commit_snapshots_in_git(db, cfg, tmp_path):
    a, _, _ = seed(db, cfg)
    vault = tmp_path / "vault"
    runner = CliRunner()
    out = runner.invoke(cli, ["mirror", str(vault), "--commit", "--json"])
    assert out.exit_code == 0, out.output
    first = json.loads(out.output)["commit"]
    repo = git.Repo(vault)
    assert repo.head.commit.hexsha == first
    assert sorted(b.path for b in repo.head.commit.tree.blobs) == sorted(
        p.name for p in vault.glob("*.md")
    )
    again = json.loads(runner.invoke(cli, ["mirror", str(vault), "--commit", "--json"]).output)
    assert again["commit"] is None  # nothing changed, no empty commit
    path = vault / f"{a.id}.md"
    path.write_text(path.read_text().replace("rolling", "bluegreen"))
    third = json.loads(runner.invoke(cli, ["mirror", str(vault), "--commit", "--json"]).output)
    assert third["commit"] and third["edited"] == [a.id]
    assert len(list(repo.iter_commits())) == 2
    assert "bluegreen" in repo.git.show(f"HEAD:{a.id}.md")


def test_backup_is_a_consistent_copy_while_in_use(db, cfg, tmp_path):
    seed(db, cfg)
    # Another connection holds an open write transaction while the backup runs.
    writer = sqlite3.connect(str(Path(db.execute("PRAGMA database_list").fetchone()[2])))
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE memories SET use_count = 99")
    out = CliRunner().invoke(cli, ["backup", "-o", str(tmp_path / "copy.db"), "--json"])
    writer.rollback()
    writer.close()
    assert out.exit_code == 0, out.output
    info = json.loads(out.output)
    assert info["memories"] == 3 and info["check"] == "ok"
    copy = sqlite3.connect(info["path"])
    assert copy.execute("SELECT max(use_count) FROM memories").fetchone()[0] == 0
    assert (Path(info["path"]).stat().st_mode & 0o777) == 0o600
    again = CliRunner().invoke(cli, ["backup", "-o", info["path"]])
    assert again.exit_code != 0 and "already exists" in again.output
