"""Regressions found by the review of the use-case work: each fails on the code before."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_layer import api
from memory_layer.cli import render, spec
from memory_layer.hooks.session_env import export_session


def test_a_surfacing_puts_back_the_connection_s_own_lock_wait(db, cfg) -> None:  # type: ignore[no-untyped-def]
    memory = api.remember(db, "Run the tests with make test", config=cfg, source="cli").memory
    api.set_busy_timeout(db, 1000)  # what a hook process sets
    api.record_surfacing(db, [(memory.id, 0.5)], kind="injected", session_id="s1", project=None)
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 1000


def test_a_foreign_encoding_in_the_env_file_does_not_raise(tmp_path: Path) -> None:
    env_file = tmp_path / "env"
    env_file.write_bytes(b"export OTHER=\xff\n")  # another plugin's Latin-1
    assert export_session("abc-123", {"CLAUDE_ENV_FILE": str(env_file)})
    assert env_file.read_bytes().endswith(b"export MEMORY_LAYER_SESSION_ID=abc-123\n")


@pytest.mark.parametrize(
    "args",
    [["q", "-n", "²"], ["q", "-p", "a", "--all-projects"], ["q", "--all-projects", "-p", "a"]],
)
def test_what_click_must_answer_is_left_to_click(args: list[str]) -> None:
    with pytest.raises(spec.NotSimple):
        spec.parse(spec.RECALL, args)


def test_remember_conflicting_scope_is_left_to_click() -> None:
    with pytest.raises(spec.NotSimple):
        spec.parse(spec.REMEMBER, ["x", "-p", "a", "--global"])


def test_notices_say_what_a_proposal_did() -> None:
    base = {"id": "m1", "status": "pending", "use_count": 0, "created": False}
    duplicate = render.remember_notices({**base, "outcome": "duplicate"})
    assert any("Already recorded as m1" in n for n in duplicate)
    assert not any("Reinforced" in n for n in duplicate)
    change = render.remember_notices({**base, "status": "active", "outcome": "change"})
    assert any("Queued a change to m1" in n for n in change)
    reinforced = render.remember_notices({**base, "status": "active", "outcome": "reinforced"})
    assert any("Reinforced existing memory m1" in n for n in reinforced)


def test_wire_requests_are_checked_like_the_cli_checks_them() -> None:
    from memory_layer.errors import InvalidInput
    from memory_layer.requests import RecallRequest, RememberRequest

    with pytest.raises(InvalidInput, match="required"):
        RecallRequest.from_wire({"query": None})
    with pytest.raises(InvalidInput, match="must be a number"):
        RememberRequest.from_wire({"text": "x", "confidence": True})
    with pytest.raises(InvalidInput, match="not a Claude Code session id"):
        RecallRequest.from_wire({"query": "x", "session_id": "a\tb"})
    assert RecallRequest.from_wire({"query": "x", "session_id": " "}).session_id is None


def test_a_frozen_field_given_twice_is_refused() -> None:
    from memory_layer.frozen import Frozen

    class Pair(Frozen):
        a: int
        b: int = 0

    with pytest.raises(TypeError, match="multiple values"):
        Pair(1, a=2)
