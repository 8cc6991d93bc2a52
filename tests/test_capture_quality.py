"""Quality assertion: the extractors keep what a careful human would keep.

Runs ``benchmarks/capture_quality.py`` over the fixture transcripts.  This is
a precision/recall threshold, not a timing test.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
CATEGORIES_16 = {
    "troubleshooting",
    "gotcha",
    "decision",
    "pattern",
    "convention",
    "architecture",
    "command",
    "workaround",
    "preference",
    "dependency",
    "environment",
    "coding_style",
    "tool_preference",
    "context",
    "todo",
    "general",
}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "capture_quality", ROOT / "benchmarks" / "capture_quality.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class is built.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_fixtures_are_complete() -> None:
    transcripts = sorted(FIXTURES.glob("*.jsonl"))
    assert len(transcripts) >= 6
    for path in transcripts:
        spec = json.loads(path.with_name(path.stem + ".expected.json").read_text())
        for memory in spec["memories"]:
            assert {memory["category"], *memory.get("also", [])} <= CATEGORIES_16
            assert memory["keywords"] and memory["gist"]


def test_precision_and_recall(bench: ModuleType) -> None:
    report = bench.run(FIXTURES)
    assert report["precision"] >= 0.8, report
    # Recall is secondary (precision matters more), but a silent extractor
    # must not pass: the fixtures include memories with explicit phrasing.
    assert report["recall"] >= 0.6, report


def test_no_secret_or_private_text_leaks(bench: ModuleType) -> None:
    assert bench.run(FIXTURES)["leaks"] == []


def test_distractor_transcript_yields_nothing(bench: ModuleType) -> None:
    assert bench.capture(FIXTURES / "distractors_only.jsonl") == []


def test_matching_rule(bench: ModuleType) -> None:
    from memory_layer.capture.candidate import Candidate

    memory = {
        "category": "convention",
        "also": ["coding_style"],
        "gist": "g",
        "keywords": ["ruff", "commit", "hook"],
    }
    assert bench.matches(
        Candidate("Run ruff before each commit.", "coding_style", 0.9, "t"), memory
    )
    assert not bench.matches(Candidate("Run ruff always.", "convention", 0.9, "t"), memory)
    assert not bench.matches(Candidate("Run ruff before commit.", "decision", 0.9, "t"), memory)
