"""The miss analysis of the real-transcript benchmark (benchmarks/capture_misses.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from memory_layer.capture.transcript import Entry, ToolResult, ToolUse

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def misses() -> ModuleType:
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("capture_misses", BENCH / "capture_misses.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("split", ["holdout", "holdout2"])
def test_held_out_splits_are_refused(misses: ModuleType, split: str) -> None:
    with pytest.raises(SystemExit, match="never analysed"):
        misses.main(["--split", "train", "--split", split])


def _session() -> list[Entry]:
    return [
        Entry(type="user", role="user", uuid="u1", texts=("Set up the Lambda.",)),
        Entry(
            type="assistant",
            role="assistant",
            uuid="a1",
            texts=("The `.env` has placeholder text.",),
            tool_uses=(ToolUse("t1", "Bash", {"command": "npm run build"}),),
        ),
        Entry(
            type="user",
            role="user",
            uuid="r1",
            is_tool_result=True,
            tool_results=(ToolResult("t1", "error: Script not found"),),
        ),
        Entry(type="assistant", role="assistant", uuid="a2", texts=("Run `npm test`.",)),
        Entry(type="user", role="user", uuid="u2", texts=("thanks",)),
        Entry(
            type="user",
            role="user",
            uuid="c1",
            texts=("Schema approach: dict",),
            is_compact_summary=True,
        ),
    ]


@pytest.mark.parametrize(
    ("quote", "where", "uuid"),
    [
        ("Set up the Lambda", "user", "u1"),
        ("has placeholder text", "mid-turn", "a1"),  # the assistant spoke again after it
        ("Run `npm test`", "closing", "a2"),
        ("Script not found", "tool_output", "r1"),
        ("npm run build", "tool_input", "a1"),
        ("Schema approach", "compaction", "c1"),
        ("nowhere in this session", "not located", None),
    ],
)
def test_where_a_quote_lives(misses: ModuleType, quote: str, where: str, uuid: str | None) -> None:
    found, entry = misses.locate(_session(), quote)
    assert found == where
    assert (entry.uuid if entry else None) == uuid


def test_every_rule_family_has_its_trigger_listed(misses: ModuleType) -> None:
    """Review nit: the new rules' triggers are counted ("a rule reads it, a guard drops
    it"), and a renamed trigger fails here instead of silently leaving the list."""
    from memory_layer.capture import extract, findings, recipes, sections

    triggers = misses._triggers()
    for pattern in (extract._EMPHATIC, findings._HARMLESS, recipes._LABEL_FIRST, sections._TITLE):
        assert pattern in triggers
    # The guard-dropped emphatic request is seen as read by a rule.
    said = "Do NOT merge PR #42."
    assert any(t.search(said) for t in triggers)
