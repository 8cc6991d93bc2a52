"""The trust policy and the one predicate deciding what agents may see."""

from __future__ import annotations

import copy
from datetime import timedelta

import pytest

from memory_layer.errors import ConfigError
from memory_layer.models import iso, utcnow
from memory_layer.storage.records import get_memory
from memory_layer.trust.facts import write
from memory_layer.trust.policy import initial_status
from memory_layer.trust.verify import stamp_trusted_writes, verify
from memory_layer.trust.visibility import agent_visible, text_checksum, withheld_reason


def test_default_policy(cfg):
    assert initial_status("cli", cfg) == "active"
    assert initial_status("user", cfg) == "active"
    assert initial_status("slash", cfg) == "active"
    assert initial_status("slash:remember", cfg) == "active"
    assert initial_status("mcp:cursor", cfg) == "pending"
    assert initial_status("hook:extract", cfg) == "active"
    assert initial_status("somebody-else", cfg) == "pending"


def test_policy_is_configurable_but_mcp_always_pending(cfg):
    changed = copy.deepcopy(cfg)
    changed["trust"]["hook_writes"] = "pending"
    changed["trust"]["trusted_sources"] = ["cli", "mcp"]
    assert initial_status("hook:extract", changed) == "pending"
    # Agents never make their own proposals true, whatever the configuration says.
    assert initial_status("mcp:codex", changed) == "pending"
    changed["trust"]["other_writes"] = "maybe"
    with pytest.raises(ConfigError, match="trust.other_writes"):
        initial_status("robot", changed)


def test_trusted_write_is_stamped_and_visible(db, cfg):
    memory = write(db, "Run the API tests with make test-api", config=cfg, source="cli").memory
    assert memory.status == "active"
    assert memory.extra["approved_by"] == "cli"
    assert memory.extra["checksum"] == text_checksum(memory.text)
    assert memory.extra["review_by"] > memory.extra["approved_at"]
    assert agent_visible(memory, cfg)


@pytest.mark.parametrize("status", ["pending", "rejected", "retired", "disputed"])
def test_withheld_statuses(db, cfg, status):
    memory = write(db, f"A note that ends up {status}", config=cfg, source="cli").memory
    db.execute("UPDATE memories SET status = ? WHERE id = ?", [status, memory.id])
    reloaded = get_memory(db, memory.id)
    assert not agent_visible(reloaded, cfg)
    assert withheld_reason(reloaded, cfg)


def test_direct_sql_edit_of_stamped_record_is_withheld_until_verified(db, cfg):
    memory = write(db, "Staging runs Postgres 15", config=cfg, source="cli").memory
    db.execute("UPDATE memories SET text = 'Staging runs Postgres 16' WHERE id = ?", [memory.id])
    edited = get_memory(db, memory.id)
    assert "edited since verification" in withheld_reason(edited, cfg)
    verified = verify(db, memory.id, actor="alice", config=cfg, reason="checked")
    assert agent_visible(verified, cfg)
    assert verified.extra["approved_by"] == "alice"
    assert verified.extra["checksum"] == text_checksum("Staging runs Postgres 16")


def test_sql_edit_of_unstamped_record_is_caught_by_the_trigger(db, cfg):
    # An older door writes active without a checksum: visible as written...
    from memory_layer.memories import remember

    memory = remember(db, "Use uv for Python installs", config=cfg, source="hook:extract").memory
    assert memory.extra["checksum"] is None
    assert agent_visible(memory, cfg)
    # ...but a later text change, however made, withholds it.
    db.execute("UPDATE memories SET text = 'Use pip for installs' WHERE id = ?", [memory.id])
    assert not agent_visible(get_memory(db, memory.id), cfg)


def test_sql_activation_of_a_pending_record_is_not_approval(db, cfg):
    memory = write(db, "Agents may force-push to main", config=cfg, source="mcp:x").memory
    db.execute("UPDATE memories SET status = 'active' WHERE id = ?", [memory.id])
    reloaded = get_memory(db, memory.id)
    assert reloaded.status == "active"
    assert "edited since verification" in withheld_reason(reloaded, cfg)


def test_stamp_trusted_writes_stamps_unstamped_active_records(db, cfg):
    from memory_layer.memories import remember

    memory = remember(db, "The CI cache key includes the lockfile hash", config=cfg).memory
    pending = write(db, "Pending proposal text here", config=cfg, source="mcp:x").memory
    assert stamp_trusted_writes(db, cfg) == 1
    stamped = get_memory(db, memory.id)
    assert stamped.extra["checksum"] == text_checksum(stamped.text)
    assert stamped.extra["approved_by"] == "cli"
    assert get_memory(db, pending.id).extra["checksum"] is None
    assert stamp_trusted_writes(db, cfg) == 0


def test_overdue_withhold_or_flag(db, cfg):
    from memory_layer.trust.visibility import flags

    memory = write(db, "Renew the TLS cert with certbot renew", config=cfg, source="cli").memory
    past = iso(utcnow() - timedelta(days=1))
    db.execute("UPDATE memories SET review_by = ? WHERE id = ?", [past, memory.id])
    overdue = get_memory(db, memory.id)
    assert "overdue for review" in withheld_reason(overdue, cfg)
    flagging = copy.deepcopy(cfg)
    flagging["trust"]["overdue"] = "flag"
    assert agent_visible(overdue, flagging)
    assert any("overdue" in f for f in flags(overdue, flagging))
    from memory_layer.api import inbox

    [item] = inbox(db, config=cfg)
    assert (item["id"], item["kind"]) == (memory.id, "overdue")
    # Re-verifying sets a new review-by date from the category's default.
    renewed = verify(db, memory.id, actor="alice", config=cfg)
    assert agent_visible(renewed, cfg)
    assert renewed.extra["review_by"] > iso(utcnow() + timedelta(days=179))


def test_review_days_per_category_and_never(db, cfg):
    changed = copy.deepcopy(cfg)
    changed["trust"]["review_days"]["todo"] = 0
    todo = write(
        db, "Migrate the cron jobs to systemd timers", config=changed, source="cli", category="todo"
    ).memory
    assert todo.extra["review_by"] is None
    env = write(
        db, "CI runners use Ubuntu 22.04 images", config=cfg, source="cli", category="environment"
    ).memory
    assert env.extra["review_by"] < iso(utcnow() + timedelta(days=91))
    assert env.extra["review_by"] > iso(utcnow() + timedelta(days=89))
