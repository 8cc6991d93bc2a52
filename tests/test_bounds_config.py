"""Issue 14 point 12: `config set` ranges, negative numbers, and unknown choices, through
the real `memory-layer` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("weights.similarity", "5", "must be from 0 to 1, got 5"),
        ("weights.outcome", "1.01", "must be from 0 to 1, got 1.01"),
        ("boosts.gotcha", "0.01", "must be from 0.1 to 3, got 0.01"),
        ("boosts.troubleshooting", "40", "must be from 0.1 to 3, got 40"),
        ("hooks.category_weights.todo", "9", "must be from 0.1 to 3"),
        ("outcomes.failure_delta", "-2", "must be from -1 to 0, got -2"),
        ("hooks.min_cosine", "1.5", "must be from 0 to 1"),
        ("recency.half_life_days", "-3", "must not be negative, got -3"),
    ],
)
def test_out_of_range_values_are_refused_and_nothing_is_written(
    user_home: Path, key: str, value: str, message: str
) -> None:
    result = cli("config", "set", key, value)
    assert result.returncode == 1, result.stdout
    assert message in result.stderr
    assert "No such option" not in result.stderr and "Traceback" not in result.stderr
    assert not (user_home / "config.yaml").exists()


def test_negative_numbers_parse_without_a_double_dash(user_home: Path) -> None:
    result = cli("config", "set", "outcomes.floor", "-0.6")
    assert result.returncode == 0, result.stderr
    assert cli("config", "get", "outcomes.floor").stdout.strip() == "-0.6"
    assert cli("config", "set", "outcomes.failure_delta", "-0.4").returncode == 0


def test_in_range_values_are_accepted(user_home: Path) -> None:
    assert cli("config", "set", "weights.similarity", "0.5").returncode == 0
    assert cli("config", "set", "boosts.gotcha", "1.6").returncode == 0
    assert "weights:\n  similarity: 0.5" in (user_home / "config.yaml").read_text()


def test_a_hand_edited_out_of_range_value_is_reported(user_home: Path) -> None:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("weights:\n  similarity: 5\n")
    result = cli("config", "show")
    assert result.returncode == 1
    assert "'weights.similarity' must be from 0 to 1" in result.stderr


def test_unknown_status_is_refused(user_home: Path) -> None:
    result = cli("list", "--status", "bogus")
    assert result.returncode == 2
    assert "'bogus' is not one of" in result.stderr and "retired" in result.stderr
    assert cli("list", "--status", "retired").returncode == 0


def test_unknown_category_is_refused(user_home: Path) -> None:
    result = cli("list", "--category", "bogus")
    assert result.returncode != 0
    assert "Unknown category 'bogus'" in result.stderr


def test_the_status_list_matches_the_trust_layer() -> None:
    from memory_layer.models import STATUSES
    from memory_layer.trust import visibility

    names = {
        visibility.ACTIVE,
        visibility.PENDING,
        visibility.CONFLICT,
        visibility.DISPUTED,
        visibility.REJECTED,
        visibility.RETIRED,
    }
    assert set(STATUSES) == names
