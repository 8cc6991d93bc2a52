"""Regressions found in the final review: each failed before its fix."""

from __future__ import annotations

from typing import Any

import pytest

from memory_layer.config import load_config
from memory_layer.errors import NotFound
from memory_layer.storage.records import update_memory
from memory_layer.trust.facts import write


@pytest.fixture
def mcp(keyword_only: Any) -> Any:
    from memory_layer import mcp_server

    server = mcp_server.Server(project="proj", scene=None, client="tester")
    yield mcp_server, server
    server.conn.close()


def test_mcp_search_and_read_withhold_sinking_memories(mcp: Any) -> None:
    mcp_server, server = mcp
    cfg = load_config()
    good = write(
        server.conn,
        "Run the api tests with make test-api",
        config=cfg,
        source="cli",
        project="proj",
    ).memory
    bad = write(
        server.conn,
        "Run the api tests with pytest api --slow",
        config=cfg,
        source="cli",
        project="proj",
    ).memory
    # Two credited failures: at the default floor (-0.5), as injection sees it.
    update_memory(server.conn, bad.id, {"outcome_score": -0.6}, actor="test", action="outcome")
    found = mcp_server.search(
        server, "api tests", project=None, scene=None, category=None, limit=8, source="mcp:t"
    )
    ids = [item["id"] for item in found["results"]]
    assert good.id in ids
    assert bad.id not in ids
    with pytest.raises(NotFound, match="is available to agents"):
        mcp_server.read(server, bad.id)
    assert mcp_server.read(server, good.id)["text"] == good.text


def test_check_draft_does_not_reveal_a_withheld_fact_value(db: Any, cfg: Any) -> None:
    from memory_layer.trust.quality import check_draft

    fact = write(
        db,
        "ubuntu 22.04",
        config=cfg,
        source="cli",
        project="proj",
        subject="prod-server",
        key="os",
    ).memory
    # Changed behind the review's back: edited since verification, withheld from agents.
    db.execute("UPDATE memories SET text = 'debian 9 root pw hunter2' WHERE id = ?", [fact.id])
    report = check_draft(
        db, "ubuntu 24.04", config=cfg, project="proj", subject="prod-server", key="os"
    )
    # Not even named: "withheld" would confirm the fact exists.
    assert not [p for p in report["problems"] if p["kind"] == "conflict"]
    assert "hunter2" not in str(report) and fact.id not in str(report)


def test_export_import_keeps_trust_fields_so_withheld_records_stay_withheld(
    db: Any, cfg: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    import io
    import json

    from memory_layer.storage.db import open_db
    from memory_layer.storage.records import get_memory
    from memory_layer.transfer import export_records, import_records, read_lines
    from memory_layer.trust.verify import stamp_trusted_writes
    from memory_layer.trust.visibility import withheld_reason

    edited = write(
        db, "Deploy previews expire after 7 days", config=cfg, source="cli", project="p"
    ).memory
    db.execute(
        "UPDATE memories SET text = 'Deploy previews never expire' WHERE id = ?", [edited.id]
    )
    fact = write(
        db,
        "ubuntu 22.04",
        config=cfg,
        source="cli",
        project="p",
        scene="deploy",
        subject="prod-server",
        key="os",
    ).memory
    assert withheld_reason(get_memory(db, edited.id), cfg) is not None
    dump = "".join(json.dumps(r) + "\n" for r in export_records(db)).encode("utf-8")

    # Another machine's store.
    monkeypatch.setenv("MEMORY_LAYER_HOME", str(tmp_path / "other"))
    other = open_db()
    records = read_lines(io.BytesIO(dump), int(cfg["remember"]["max_chars"]))
    assert import_records(other, records).imported == 2
    stamp_trusted_writes(other, cfg)
    assert withheld_reason(get_memory(other, edited.id), cfg) is not None
    copied = get_memory(other, fact.id)
    for key in ("scene", "subject", "fact_key", "checksum", "review_by", "approved_by"):
        assert copied.extra.get(key) == get_memory(db, fact.id).extra.get(key), key
    assert withheld_reason(copied, cfg) is None
    other.close()


def test_cli_recall_marks_records_withheld_from_agents(db: Any, cfg: Any) -> None:
    import json

    from click.testing import CliRunner

    from memory_layer.cli import cli

    kept = write(
        db, "Deploy previews expire after 7 days", config=cfg, source="cli", project="p"
    ).memory
    edited = write(
        db, "Deploy uses fly deploy --remote-only", config=cfg, source="cli", project="p"
    )
    db.execute(
        "UPDATE memories SET text = 'Deploy by pushing to main' WHERE id = ?", [edited.memory.id]
    )
    result = CliRunner().invoke(
        cli, ["recall", "deploy", "-p", "p", "--keyword-only", "--json"], catch_exceptions=False
    )
    rows = {row["id"]: row for row in json.loads(result.output)}
    assert rows[kept.id]["withheld"] is None
    assert "edited since verification" in rows[edited.memory.id]["withheld"]
    text = CliRunner().invoke(cli, ["recall", "deploy", "-p", "p", "--keyword-only"]).output
    assert "withheld from agents: edited since verification" in text


def test_mirror_refuses_a_folder_of_someone_elses_notes(db: Any, cfg: Any, tmp_path: Any) -> None:
    from memory_layer.errors import InvalidInput
    from memory_layer.mirror import sync

    vault = tmp_path / "notes"
    (vault / "daily").mkdir(parents=True)
    note = vault / "daily" / "monday.md"
    note.write_text("---\ntags: [journal]\n---\nCall the dentist about the crown\n")
    write(db, "Deploy uses fly deploy --remote-only", config=cfg, source="cli")
    with pytest.raises(InvalidInput, match="did not write"):
        sync(db, vault, config=cfg)
    assert note.exists()
    # A folder the mirror wrote (even before the marker existed) still syncs.
    mirror = tmp_path / "mirror"
    sync(db, mirror, config=cfg)
    (mirror / ".memory-layer-mirror").unlink()
    assert sync(db, mirror, config=cfg)["records"] == 1


def test_import_refuses_ids_that_are_paths(db: Any, cfg: Any) -> None:
    import io

    from memory_layer.errors import ImportFailed
    from memory_layer.transfer import read_lines

    line = b'{"id": "../../.bashrc", "text": "Deploy uses fly deploy --remote-only"}\n'
    with pytest.raises(ImportFailed, match="Line 1"):
        read_lines(io.BytesIO(line), int(cfg["remember"]["max_chars"]))
    ok = b'{"id": "mem-2024.01:a_b", "text": "Deploy uses fly deploy --remote-only"}\n'
    assert read_lines(io.BytesIO(ok), int(cfg["remember"]["max_chars"]))[0][1]["id"] == (
        "mem-2024.01:a_b"
    )


def test_login_next_with_a_backslash_or_tab_stays_on_site() -> None:
    import re

    from memory_layer.web import create_app

    base = "http://192.0.2.10:8080"
    client = create_app(host="192.0.2.10", port=8080, token="s3cret-token").test_client()
    for target in ["/\\evil.example/", "/\t/evil.example/", "/\n/evil.example/"]:
        page = client.get("/login", base_url=base).get_data(as_text=True)
        form_token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        response = client.post(
            "/login",
            data={"csrf_token": form_token, "token": "s3cret-token", "next": target},
            base_url=base,
            headers={"Origin": base},
        )
        assert response.headers["Location"] in {"/", base + "/"}, target


def test_a_proposal_and_its_reason_are_written_together(
    db: Any, cfg: Any, monkeypatch: Any
) -> None:
    from memory_layer.storage import records
    from memory_layer.trust.quality import propose_record

    real = records.record_op

    def crash_on_reason(*args: Any, **kwargs: Any) -> int:
        if kwargs.get("action") == "propose":
            raise RuntimeError("crash")
        return real(*args, **kwargs)

    monkeypatch.setattr(records, "record_op", crash_on_reason)
    with pytest.raises(RuntimeError):
        propose_record(
            db,
            "Deploy uses fly deploy --remote-only",
            config=cfg,
            source="mcp:codex",
            project="p",
            reason="saw it in the Makefile",
        )
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_mirror_keeps_an_edited_file_when_the_database_fails(
    db: Any, cfg: Any, tmp_path: Any, monkeypatch: Any
) -> None:
    import sqlite3

    from memory_layer import mirror

    memory = write(db, "Deploy uses fly deploy --remote-only", config=cfg, source="cli").memory
    vault = tmp_path / "vault"
    mirror.sync(db, vault, config=cfg)
    path = vault / f"{memory.id}.md"
    path.write_text(path.read_text().replace("--remote-only", "--local-only"))

    def locked(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(mirror, "get_memory", locked)
    with pytest.raises(sqlite3.OperationalError):
        mirror.sync(db, vault, config=cfg)
    assert "--local-only" in path.read_text()


def test_retire_then_restore_does_not_approve_a_pending_proposal(db: Any, cfg: Any) -> None:
    from memory_layer.api import restore
    from memory_layer.memories import forget
    from memory_layer.storage.records import get_memory
    from memory_layer.trust.verify import stamp_trusted_writes
    from memory_layer.trust.visibility import withheld_reason

    proposal = write(db, "Deploy by pushing straight to main", config=cfg, source="mcp:codex")
    assert proposal.memory.status == "pending"
    forget(db, proposal.memory.id, reason="cleanup")
    restore(db, proposal.memory.id)
    stamp_trusted_writes(db, cfg)
    restored = get_memory(db, proposal.memory.id)
    assert restored.extra.get("approved_by") is None
    assert withheld_reason(restored, cfg) is not None


def test_mcp_search_does_not_store_a_secret_from_the_query(mcp: Any) -> None:
    mcp_server, server = mcp
    cfg = load_config()
    write(server.conn, "AWS keys live in vault", config=cfg, source="cli", project="proj")
    mcp_server.search(
        server,
        "why is AKIAIOSFODNN7EXAMPLE rejected by aws",
        project=None,
        scene=None,
        category=None,
        limit=8,
        source="mcp:t",
    )
    stored = [row[0] for row in server.conn.execute("SELECT query FROM usage")]
    assert stored and all("AKIAIOSFODNN7EXAMPLE" not in q for q in stored)


def test_only_memories_in_the_prompt_block_are_recorded_as_surfaced(db: Any, cfg: Any) -> None:
    import copy

    from memory_layer.hooks.inject import plan_prompt
    from memory_layer.memories import remember
    from memory_layer.models import utcnow

    config = copy.deepcopy(cfg)
    config["hooks"]["item_chars"] = 2000
    for n in range(12):
        words = " ".join(f"w{n}x{i}" for i in range(150))
        remember(
            db,
            f"Deploy rollback step {n}: run fly deploy rollback then {words}",
            config=config,
            project="p",
            embedder=None,
        )
    plan = plan_prompt(
        db,
        "deploy rollback fly",
        "p",
        config,
        shown=set(),
        embedder=None,
        now=utcnow(),
        limit=12,
    )
    assert plan.text and len(plan.text) <= 9_500
    ids_in_text = [m.id for m, _ in plan.chosen if m.text[:40] in plan.text]
    assert len(ids_in_text) == len(plan.chosen) < 12


def test_dashboard_restore_says_a_never_verified_record_stays_withheld(db: Any, cfg: Any) -> None:
    import re

    from memory_layer.memories import forget
    from memory_layer.web import create_app

    base = "http://127.0.0.1:8080"
    client = create_app().test_client()
    proposal = write(db, "Deploy by pushing straight to main", config=cfg, source="mcp:codex")
    forget(db, proposal.memory.id, reason="cleanup")
    html = client.get("/settings", base_url=base).get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    response = client.post(
        f"/memories/{proposal.memory.id}/restore",
        data={"csrf_token": token},
        base_url=base,
        headers={"Origin": base},
        follow_redirects=True,
    )
    body = response.get_data(as_text=True)
    assert "still withheld from agents" in body.lower()
    assert "agents see this memory again" not in body
