"""The review flow: propose -> accept, revise or reject; change proposals; disputes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from memory_layer.api import decide, inbox
from memory_layer.cli import cli
from memory_layer.errors import InvalidInput
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import get_memory, history
from memory_layer.trust.facts import write
from memory_layer.trust.quality import propose_record
from memory_layer.trust.visibility import agent_visible, text_checksum


def agent_recall(db, cfg, query):
    return [
        r.memory.id
        for r in recall(
            db,
            query,
            scope=Scope(projects=None),
            config=cfg,
            visible=lambda m: agent_visible(m, cfg),
        )
    ]


def propose(db, cfg, text, **kw):
    return propose_record(db, text, config=cfg, source="mcp:codex", **kw)


def test_proposal_is_pending_and_invisible_until_accepted(db, cfg):
    item = propose(
        db, cfg, "Staging deploys need VPN access to 10.2.0.0/16", category="environment"
    )
    assert item["status"] == "pending" and item["created"]
    assert agent_recall(db, cfg, "staging deploys VPN") == []
    assert [i["id"] for i in inbox(db, config=cfg)] == [item["item_id"]]

    result = decide(db, item["item_id"], "accept", actor="alice", reason="true", config=cfg)
    memory = get_memory(db, item["item_id"])
    assert result["memory"]["status"] == "active"
    assert memory.extra["approved_by"] == "alice"
    assert memory.extra["approved_at"] and memory.extra["review_by"]
    assert memory.extra["checksum"] == text_checksum(memory.text)
    assert agent_recall(db, cfg, "staging deploys VPN") == [memory.id]
    assert inbox(db, config=cfg) == []
    actions = [op.action for op in history(db, memory.id)]
    assert actions[0] == "create" and actions[-1] == "accept"


def test_revise_accepts_a_corrected_text(db, cfg):
    item = propose(db, cfg, "Run migrations with alembic upgrade", category="command")
    decide(
        db,
        item["item_id"],
        "revise",
        actor="alice",
        reason="needs head",
        revised_text="Run migrations with alembic upgrade head",
        config=cfg,
    )
    memory = get_memory(db, item["item_id"])
    assert memory.text == "Run migrations with alembic upgrade head"
    assert memory.status == "active"
    assert memory.extra["checksum"] == text_checksum(memory.text)
    edits = [op for op in history(db, memory.id) if op.action == "revise"]
    assert edits[0].old_value["text"] == "Run migrations with alembic upgrade"
    assert edits[0].context["reason"] == "needs head"


def test_reject_needs_a_reason_and_withholds_for_good(db, cfg):
    item = propose(db, cfg, "Always push straight to the main branch", category="convention")
    with pytest.raises(InvalidInput, match="why"):
        decide(db, item["item_id"], "reject", actor="alice", config=cfg)
    decide(db, item["item_id"], "reject", actor="alice", reason="we use PRs", config=cfg)
    memory = get_memory(db, item["item_id"])
    assert memory.status == "rejected"
    assert not agent_visible(memory, cfg)
    assert inbox(db, config=cfg) == []
    assert history(db, memory.id)[-1].context["reason"] == "we use PRs"


def test_same_proposal_twice_is_one_item_and_active_duplicates_add_nothing(db, cfg):
    first = propose(db, cfg, "The docs site builds with mkdocs build --strict")
    again = propose(db, cfg, "The docs site builds with mkdocs build --strict")
    # Still one inbox item; answered like the first (a pending record is withheld, so
    # "already recorded" would confirm its text to any agent that guesses it).
    assert again["item_id"] == first["item_id"] and again == first
    known = write(db, "Lint with ruff check . before pushing", config=cfg, source="cli").memory
    dup = propose(db, cfg, "Lint with ruff check . before pushing")
    assert dup["kind"] == "duplicate" and dup["memory_id"] == known.id
    assert get_memory(db, known.id).use_count == 0
    assert len(inbox(db, config=cfg)) == 1


def test_change_proposal_leaves_record_until_accepted(db, cfg):
    memory = write(db, "Deploy with cap production deploy", config=cfg, source="cli").memory
    change = propose(db, cfg, "Deploy with fly deploy", memory_id=memory.id, reason="moved to Fly")
    assert change["kind"] == "change"
    assert get_memory(db, memory.id).text == "Deploy with cap production deploy"
    [item] = inbox(db, config=cfg)
    assert item["kind"] == "change" and item["proposed_text"] == "Deploy with fly deploy"
    decide(db, change["item_id"], "accept", actor="alice", reason="confirmed", config=cfg)
    updated = get_memory(db, memory.id)
    assert updated.text == "Deploy with fly deploy"
    assert agent_visible(updated, cfg)
    with pytest.raises(InvalidInput, match="already accepted"):
        decide(db, change["item_id"], "reject", actor="bob", reason="late", config=cfg)


def test_rejected_change_keeps_the_record(db, cfg):
    memory = write(db, "Node 20 is required for the frontend", config=cfg, source="cli").memory
    change = propose(db, cfg, "Node 16 is required for the frontend", memory_id=memory.id)
    decide(db, change["item_id"], "reject", actor="alice", reason="outdated", config=cfg)
    kept = get_memory(db, memory.id)
    assert kept.text == "Node 20 is required for the frontend" and agent_visible(kept, cfg)
    assert inbox(db, config=cfg) == []


def test_dispute_withholds_then_review_decides(db, cfg):
    from memory_layer.trust.verify import dispute

    memory = write(db, "The staging bucket is s3://acme-staging", config=cfg, source="cli").memory
    dispute(db, memory.id, actor="mcp:cursor", reason="bucket was renamed")
    disputed = get_memory(db, memory.id)
    assert disputed.status == "disputed" and not agent_visible(disputed, cfg)
    [item] = inbox(db, config=cfg)
    assert item["kind"] == "disputed" and "bucket was renamed" in item["why"]
    decide(
        db,
        memory.id,
        "revise",
        actor="alice",
        reason="renamed",
        revised_text="The staging bucket is s3://acme-stage-2",
        config=cfg,
    )
    assert agent_visible(get_memory(db, memory.id), cfg)


def test_cli_review_flow(db, cfg):
    runner = CliRunner()
    a = propose(db, cfg, "Feature flags live in config/flags.yaml")["item_id"]
    b = propose(db, cfg, "Cache TTL for the pricing API is 300 seconds")["item_id"]
    c = propose(db, cfg, "Use tabs in every Python file")["item_id"]
    listed = runner.invoke(cli, ["review", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [i["id"] for i in json.loads(listed.output)] == [a, b, c]

    assert runner.invoke(cli, ["review", "accept", a, "--reason", "ok"]).exit_code == 0
    out = runner.invoke(
        cli,
        [
            "review",
            "revise",
            b,
            "--text",
            "Cache TTL for the pricing API is 600 seconds",
            "--reason",
            "raised",
        ],
    )
    assert out.exit_code == 0, out.output
    missing = runner.invoke(cli, ["review", "reject", c])
    assert missing.exit_code != 0 and "--reason" in missing.output
    assert runner.invoke(cli, ["review", "reject", c, "--reason", "PEP 8"]).exit_code == 0

    assert [get_memory(db, i).status for i in (a, b, c)] == ["active", "active", "rejected"]
    assert get_memory(db, b).text.endswith("600 seconds")
    empty = runner.invoke(cli, ["review"])
    assert "empty" in empty.output


def test_cli_dispute_and_verify(db, cfg):
    runner = CliRunner()
    memory = write(db, "Backups run nightly at 02:00 UTC", config=cfg, source="cli").memory
    out = runner.invoke(cli, ["dispute", memory.id, "--reason", "moved to 03:00"])
    assert out.exit_code == 0, out.output
    assert get_memory(db, memory.id).status == "disputed"
    db.execute("UPDATE memories SET status = 'active' WHERE id = ?", [memory.id])
    out = runner.invoke(cli, ["verify", memory.id, "--reason", "checked crontab", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["approved_by"] == "cli"


def test_cli_edit_by_the_user_stays_visible(db, cfg):
    memory = write(db, "Format SQL with sqlfluff fix", config=cfg, source="cli").memory
    out = CliRunner().invoke(cli, ["edit", memory.id, "--text", "Format SQL with sqlfluff fix ."])
    assert out.exit_code == 0, out.output
    edited = get_memory(db, memory.id)
    assert edited.text.endswith("fix .") and agent_visible(edited, cfg)


def test_show_explains_why_a_record_is_withheld(db, cfg):
    item = propose(db, cfg, "Rotate the API keys every 90 days", category="convention")
    out = CliRunner().invoke(cli, ["show", item["item_id"], "--json"])
    assert out.exit_code == 0, out.output
    assert "withheld from agents: pending review" in json.loads(out.output)["notes"]
    memory = write(db, "Release notes live in CHANGES.md", config=cfg, source="cli").memory
    change = propose(db, cfg, "Release notes live in docs/changes.md", memory_id=memory.id)
    notes = json.loads(CliRunner().invoke(cli, ["show", memory.id, "--json"]).output)["notes"]
    assert "visible to agents" in notes
    assert any(change["item_id"] in n for n in notes)


def test_review_takes_unique_prefixes_of_proposal_and_conflict_ids(db, cfg):
    """Audit t10: proposal and conflict ids had to be typed in full, and a miss said
    "No memory with id", naming the wrong kind of thing."""
    from memory_layer.errors import NotFound
    from memory_layer.trust.facts import write
    from memory_layer.trust.ids import resolve_item_id
    from memory_layer.trust.quality import propose_record

    target = write(db, "Deploy with fly deploy --strategy rolling", config=cfg, source="cli")
    change = propose_record(
        db,
        "Deploy with fly deploy --strategy canary",
        config=cfg,
        source="mcp:codex",
        memory_id=target.memory.id,
    )
    write(db, "ubuntu 22.04", config=cfg, source="cli", subject="prod", key="os")
    other = write(db, "debian 12", config=cfg, source="hook:x", subject="prod", key="os").memory
    conflict_id = other.extra["conflict_id"]

    done = decide(db, change["item_id"][:6], "accept", actor="alice", config=cfg)
    assert done["item_id"] == change["item_id"] and done["kind"] == "change"
    chosen = decide(db, conflict_id[:6], "accept", choose=other.id[:5], actor="alice", config=cfg)
    assert chosen["item_id"] == conflict_id and chosen["memory"]["id"] == other.id

    with pytest.raises(NotFound, match="no proposal, conflict or memory"):
        resolve_item_id(db, "pzzzzzzz")
    with pytest.raises(NotFound, match="4\\+ characters"):
        resolve_item_id(db, "p1")
    db.execute(
        "INSERT INTO conflicts(id, project, subject, fact_key, opened_at) "
        "VALUES ('cabc0001', NULL, 'x', 'y', '2026-01-01')"
    )
    db.execute(
        "INSERT INTO conflicts(id, project, subject, fact_key, opened_at) "
        "VALUES ('cabc0002', NULL, 'x', 'z', '2026-01-01')"
    )
    with pytest.raises(InvalidInput, match="fits several items"):
        resolve_item_id(db, "cabc")


def test_a_stale_change_proposal_cannot_undo_a_newer_edit(db, cfg):
    """Audit t14: two agents propose against "rolling"; the user then edits the record.
    Accepting either proposal would silently drop the user's edit."""
    from memory_layer.memories import edit

    memory = write(db, "Deploy strategy: rolling", config=cfg, source="cli").memory
    first = propose(db, cfg, "Deploy strategy: canary", memory_id=memory.id)
    second = propose(db, cfg, "Deploy strategy: blue-green", memory_id=memory.id)
    edit(db, memory.id, config=cfg, text="Deploy strategy: rolling --wait-timeout 600")
    items = {i["id"]: i for i in inbox(db, config=cfg)}
    assert items[first["item_id"]]["stale"] and "stale" in items[first["item_id"]]["why"]
    with pytest.raises(InvalidInput, match="changed since proposal .* Revise it"):
        decide(db, first["item_id"], "accept", actor="alice", reason="ok", config=cfg)
    assert get_memory(db, memory.id).text == "Deploy strategy: rolling --wait-timeout 600"
    # The reviewer folds the change into the current text instead.
    decide(db, first["item_id"], "revise", actor="alice", reason="merged",
           revised_text="Deploy strategy: canary --wait-timeout 600", config=cfg)
    assert get_memory(db, memory.id).text == "Deploy strategy: canary --wait-timeout 600"
    # The other proposal was made against the original text: stale too.
    with pytest.raises(InvalidInput, match="changed since proposal"):
        decide(db, second["item_id"], "accept", actor="alice", reason="ok", config=cfg)


def test_review_shows_terminal_and_bidi_controls_as_escapes(db, cfg):
    """Audit t5: an agent's U+202E made the inbox line read differently from the text."""
    propose(db, cfg, "Deploy with \u202eniam ot hsup\u202c and \x1b[8mhidden")
    out = CliRunner().invoke(cli, ["review"]).output
    assert "\\u202eniam ot hsup\\u202c" in out and "\\u001b[8mhidden" in out
    assert "\u202e" not in out and "\x1b" not in out


def test_accept_refuses_a_record_that_is_not_waiting_for_review(db, cfg):
    """Audit: accepting an active, verified record silently restamped it and restarted
    its review-by clock."""
    memory = write(db, "Use pnpm in the web app", config=cfg, source="cli").memory
    stamped = get_memory(db, memory.id).extra.get("approved_at")
    with pytest.raises(InvalidInput, match="not waiting for review"):
        decide(db, memory.id, "accept", actor="alice", reason="looks right", config=cfg)
    assert get_memory(db, memory.id).extra.get("approved_at") == stamped


def test_a_tag_edit_does_not_vouch_for_text_waiting_for_review(db, cfg):
    """Review: changing only tags (CLI or dashboard) stamped whatever text was there,
    including text edited since verification that nobody had reviewed."""
    memory = write(db, "Format SQL with sqlfluff fix", config=cfg, source="cli").memory
    db.execute("UPDATE memories SET text = ? WHERE id = ?", ["Format SQL by hand", memory.id])
    assert not agent_visible(get_memory(db, memory.id), cfg)  # edited since verification
    out = CliRunner().invoke(cli, ["edit", memory.id, "--tag", "sql"])
    assert out.exit_code == 0, out.output
    assert not agent_visible(get_memory(db, memory.id), cfg)
    out = CliRunner().invoke(cli, ["edit", memory.id, "--text", "Format SQL with sqlfluff"])
    assert agent_visible(get_memory(db, memory.id), cfg)  # the text you wrote is yours


def test_a_proposed_fact_value_says_what_it_would_replace(db, cfg):
    """Audit t4: agents' proposals for a fact the user confirmed were listed as plain new
    items; accepting one silently replaced the confirmed value."""
    mine = write(db, "ubuntu 22.04", config=cfg, source="cli", subject="prod-server",
                 key="os").memory
    first = propose(db, cfg, "debian 12", subject="prod-server", key="os")
    second = propose(db, cfg, "alpine 3.20", subject="prod-server", key="os")
    items = {i["id"]: i for i in inbox(db, config=cfg)}
    why = items[first["item_id"]]["why"]
    assert f"replaces the current value 'ubuntu 22.04' ({mine.id}, from cli)" in why
    assert f"1 other proposal(s) for this fact: {second['item_id']}" in why
    out = CliRunner().invoke(cli, ["review"]).output
    assert "replaces the current value 'ubuntu 22.04'" in out


def test_external_origin_is_pending_whatever_hook_writes_says(db, cfg):
    from memory_layer.errors import ConfigError, InvalidInput
    from memory_layer.trust.facts import write
    from memory_layer.trust.policy import initial_status

    assert initial_status("hook:Stop", cfg) == "active"
    assert initial_status("hook:Stop", cfg, "relayed") == "pending"
    assert initial_status("cli", cfg, "tool_output") == "pending"
    assert (
        initial_status(
            "mcp:x", {**cfg, "trust": {**cfg["trust"], "external_writes": "active"}}, "web"
        )
        == "pending"
    )
    held = write(
        db, "Run `make bootstrap` first.", config=cfg, source="hook:Stop", origin="relayed"
    )
    assert (held.memory.status, held.memory.extra["origin"]) == ("pending", "relayed")
    again = write(
        db, "Run `make bootstrap` first.", config=cfg, source="hook:Stop", origin="relayed"
    )
    assert again.created is False and again.memory.id == held.memory.id
    with pytest.raises(InvalidInput, match="Unknown origin"):
        write(db, "x y z w", config=cfg, source="hook:Stop", origin="rumour")
    broken = {**cfg, "trust": {**cfg["trust"], "external_writes": "maybe"}}
    with pytest.raises(ConfigError, match="trust.external_writes"):
        initial_status("hook:Stop", broken, "file")
