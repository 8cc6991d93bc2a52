"""Structured facts: a second source's different value is a conflict, never an overwrite."""

from __future__ import annotations

import copy

import pytest
from click.testing import CliRunner

from memory_layer.api import decide, inbox
from memory_layer.cli import cli
from memory_layer.errors import InvalidInput
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import get_memory, history
from memory_layer.trust.facts import write
from memory_layer.trust.visibility import agent_statuses, agent_visible, flags


def fact(db, cfg, value, source, **kw):
    return write(db, value, config=cfg, source=source, subject="prod-server", key="os", **kw)


def agent_view(db, cfg):
    scope = Scope(projects=None, statuses=agent_statuses(cfg))
    return recall(
        db,
        "prod-server os ubuntu",
        scope=scope,
        config=cfg,
        visible=lambda m: agent_visible(m, cfg),
    )


def test_two_sources_make_candidates_not_an_overwrite(db, cfg):
    first = fact(db, cfg, "ubuntu 22.04", "cli").memory
    second = fact(db, cfg, "ubuntu 24.04", "hook:extract").memory
    assert get_memory(db, first.id).text == "ubuntu 22.04"
    assert get_memory(db, first.id).status == "conflict"
    assert second.status == "conflict"
    assert get_memory(db, first.id).extra["conflict_id"] == second.extra["conflict_id"]
    [item] = inbox(db, config=cfg)
    assert item["kind"] == "conflict"
    # Stable order: candidates in the order they were written.
    assert [c["memory_id"] for c in item["candidates"]] == [first.id, second.id]
    assert [c["source"] for c in item["candidates"]] == ["cli", "hook:extract"]


def test_agents_see_the_conflict_marked_or_nothing(db, cfg):
    fact(db, cfg, "ubuntu 22.04", "cli")
    fact(db, cfg, "ubuntu 24.04", "hook:extract")
    seen = agent_view(db, cfg)
    assert sorted(r.memory.source for r in seen) == ["cli", "hook:extract"]
    for r in seen:
        [note] = flags(r.memory, cfg)
        assert "CONFLICT" in note and r.memory.source in note
    hidden = copy.deepcopy(cfg)
    hidden["trust"]["conflicts"] = "hide"
    assert agent_view(db, hidden) == []


def test_choosing_one_confirms_it_and_rejects_the_others(db, cfg):
    a = fact(db, cfg, "ubuntu 22.04", "cli").memory
    b = fact(db, cfg, "ubuntu 24.04", "hook:extract").memory
    c = fact(db, cfg, "debian 12", "mcp-less-robot", status="active").memory
    [item] = inbox(db, config=cfg)
    assert len(item["candidates"]) == 3
    with pytest.raises(InvalidInput, match="--choose"):
        decide(db, item["id"], "accept", actor="alice", config=cfg)
    decide(db, item["id"], "accept", actor="alice", choose=b.id, reason="upgraded", config=cfg)
    assert [get_memory(db, m.id).status for m in (a, b, c)] == ["rejected", "active", "rejected"]
    chosen = get_memory(db, b.id)
    assert chosen.extra["approved_by"] == "alice" and agent_visible(chosen, cfg)
    assert [r.memory.id for r in agent_view(db, cfg)] == [b.id]
    # History keeps every value and who said it.
    assert history(db, a.id)[0].new_value["text"] == "ubuntu 22.04"
    assert any(op.action == "reject" for op in history(db, a.id))
    assert inbox(db, config=cfg) == []
    # A new different value from yet another source opens a fresh conflict.
    d = fact(db, cfg, "ubuntu 26.04", "hook:extract").memory
    assert d.status == "conflict" and d.extra["conflict_id"] != b.extra["conflict_id"]


def test_rejecting_a_candidate_leaves_the_survivor_confirmed(db, cfg):
    a = fact(db, cfg, "ubuntu 22.04", "cli").memory
    b = fact(db, cfg, "ubuntu 24.04", "hook:extract").memory
    result = decide(db, b.id, "reject", actor="alice", reason="not yet upgraded", config=cfg)
    assert result["confirmed"]["id"] == a.id
    assert get_memory(db, a.id).status == "active"
    assert get_memory(db, b.id).status == "rejected"


def test_same_value_reinforces_and_same_source_corrects(db, cfg):
    a = fact(db, cfg, "ubuntu 22.04", "cli").memory
    again = fact(db, cfg, "Ubuntu 22.04", "hook:extract")
    assert not again.created and again.memory.id == a.id
    assert get_memory(db, a.id).use_count == 1
    corrected = fact(db, cfg, "ubuntu 24.04", "cli").memory
    assert corrected.status == "active"
    assert get_memory(db, a.id).status == "retired"
    assert history(db, a.id)[-1].context["superseded_by"] == corrected.id
    assert inbox(db, config=cfg) == []


def test_cli_remember_subject_key_and_review_choose(db, cfg):
    runner = CliRunner()
    first = runner.invoke(
        cli, ["remember", "ubuntu 22.04", "--subject", "prod-server", "--key", "os", "-g"]
    )
    second = runner.invoke(
        cli,
        [
            "remember",
            "ubuntu 24.04",
            "--subject",
            "prod-server",
            "--key",
            "OS",
            "-g",
            "--source",
            "hook:extract",
        ],
    )
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    assert "candidates" in second.output
    [item] = inbox(db, config=cfg)
    chosen = item["candidates"][0]["memory_id"]
    out = runner.invoke(
        cli, ["review", "accept", item["id"], "--choose", chosen, "--reason", "ssh'd in"]
    )
    assert out.exit_code == 0, out.output
    assert get_memory(db, chosen).status == "active"
    half = runner.invoke(cli, ["remember", "x", "--subject", "prod-server"])
    assert half.exit_code != 0 and "--key" in half.output


def test_accepting_a_proposed_value_supersedes_the_others(db, cfg):
    from memory_layer.trust.quality import propose_record

    old = fact(db, cfg, "ubuntu 22.04", "cli").memory
    hook = fact(db, cfg, "ubuntu 23.10", "hook:extract").memory
    proposed = propose_record(
        db, "ubuntu 24.04", config=cfg, source="mcp:codex", subject="prod-server", key="os"
    )
    assert proposed["status"] == "pending"
    decide(db, proposed["item_id"], "accept", actor="alice", reason="upgraded", config=cfg)
    assert get_memory(db, proposed["item_id"]).status == "active"
    assert get_memory(db, old.id).status == "rejected"
    assert get_memory(db, hook.id).status == "rejected"
    assert inbox(db, config=cfg) == []
    assert [r.memory.id for r in agent_view(db, cfg)] == [proposed["item_id"]]


def test_restore_refuses_a_second_truth_for_a_fact(db, cfg):
    """Audit t7/t6: restoring a conflict candidate, or a rejected or superseded value
    while another stands, made two values active outside conflict resolution."""
    from memory_layer.trust.facts import check_restorable

    first = fact(db, cfg, "ubuntu 22.04", "cli").memory
    second = fact(db, cfg, "debian 12", "hook:extract").memory
    conflict_id = second.extra["conflict_id"]
    with pytest.raises(InvalidInput, match=f"review accept {conflict_id} --choose"):
        check_restorable(db, get_memory(db, first.id))

    decide(db, second.id, "reject", actor="alice", reason="wrong host", config=cfg)
    rejected = get_memory(db, second.id)
    assert rejected.status == "rejected" and get_memory(db, first.id).status == "active"
    with pytest.raises(InvalidInput, match=f"already has a value \\({first.id}\\)"):
        check_restorable(db, rejected)

    # A correction by the same writer retires the old value: restoring it is a second truth.
    old = write(db, "arm64", config=cfg, source="cli", subject="ci-runner", key="arch").memory
    newer = write(db, "x86_64", config=cfg, source="cli", subject="ci-runner", key="arch").memory
    assert get_memory(db, old.id).status == "retired"
    with pytest.raises(InvalidInput, match="would make two"):
        check_restorable(db, get_memory(db, old.id))
    check_restorable(db, get_memory(db, newer.id))  # the standing value itself: fine


def test_restore_command_goes_through_conflict_resolution(db, cfg):
    """`memory-layer restore` (and the dashboard, through memories.restore) refuses a
    conflict candidate instead of making it a second truth."""
    from click.testing import CliRunner

    from memory_layer.cli import cli

    first = fact(db, cfg, "ubuntu 22.04", "cli").memory
    second = fact(db, cfg, "debian 12", "hook:extract").memory
    assert get_memory(db, first.id).status == "conflict"
    result = CliRunner().invoke(cli, ["restore", first.id])
    assert result.exit_code == 1
    assert f"review accept {second.extra['conflict_id']} --choose" in result.output
    assert get_memory(db, first.id).status == "conflict"
