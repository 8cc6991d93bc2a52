"""Beads' door: bd's issue and audit-log JSON, in the shapes bd writes them, parsed into
frozen BeadsIssue / BeadsInteraction values; bad JSON refused with InvalidIssue."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from memory_layer.errors import InvalidInput
from memory_layer.outcomes.beads_issue import (
    BeadsInteraction,
    BeadsIssue,
    InvalidIssue,
    interaction_from_json,
    issue_from_json,
    parse_issue,
)
from memory_layer.outcomes.rules import close_outcome
from tests.conftest import FIXTURES

BEADS = FIXTURES / "beads"
CLOSED_AT = "2026-06-01T11:42:10.000000+00:00"


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (BEADS / name).read_text().splitlines() if line]


def test_the_on_close_hook_stdin() -> None:
    issue = parse_issue((BEADS / "on_close_hook_stdin.json").read_bytes(), "bd-a3f8")
    assert issue == BeadsIssue(
        id="bd-a3f8",
        status="closed",
        title="Fix flaky auth refresh test",
        description="Token refresh races with logout.",
        created_at="2026-06-01T09:00:00.000000+00:00",
        updated_at=CLOSED_AT,
        started_at="2026-06-01T09:05:00.000000+00:00",
        closed_at=CLOSED_AT,
        close_reason="Fixed: serialized refresh behind mutex; tests green",
        closed_by_session="3f0c1e2a-0000-4000-8000-000000000001",
    )


@pytest.mark.parametrize("name", ["bd_show_json_legacy.json", "bd_list_json_envelope.json"])
def test_bd_show_array_and_list_envelope(name: str) -> None:
    issue = parse_issue((BEADS / name).read_text(), "bd-a3f8")
    assert (issue.id, issue.status, issue.closed_at) == ("bd-a3f8", "closed", CLOSED_AT)
    assert issue.close_reason == "Fixed: serialized refresh behind mutex; tests green"


def test_export_lines() -> None:
    (failure,) = _lines("export_issue_closed_failure.jsonl")
    issue = issue_from_json(failure)
    assert (issue.id, issue.status, issue.title) == (
        "bd-7f3a8.1",
        "closed",
        "Migrate cache to Redis",
    )
    assert close_outcome(issue.close_reason, issue.metadata) == "failure"


def test_a_hook_without_a_body_names_the_issue_by_its_argument() -> None:
    assert parse_issue("", "bd-9") == BeadsIssue(id="bd-9")
    # on_close with no status in the body is a close; on_update says nothing.
    assert parse_issue("{}", "bd-9", event="close").status == "closed"
    assert parse_issue("{}", "bd-9", event="update").status == ""


def test_metadata_outcome_is_kept_read_only() -> None:
    issue = issue_from_json(
        {"id": "bd-1", "close_reason": "Done", "metadata": {"outcome": "failed"}}
    )
    assert close_outcome(issue.close_reason, issue.metadata) == "failure"
    with pytest.raises(TypeError):
        issue.metadata["outcome"] = "success"  # type: ignore[index]


def test_the_audit_log() -> None:
    close, label = (interaction_from_json(row) for row in _lines("interactions_close.jsonl"))
    assert close == BeadsInteraction(
        kind="field_change",
        id="int-0123456789abcdef0123456789abcdef",
        at=CLOSED_AT,
        issue_id="bd-a3f8",
        field="status",
        new_value="closed",
        reason="Fixed: serialized refresh behind mutex; tests green",
    )
    assert close.is_status_change
    assert label == BeadsInteraction(
        kind="label",
        id="int-fedcba9876543210fedcba9876543210",
        at="2026-06-01T12:00:00.000000+00:00",
        actor="reviewer",
        label="good",
        reason="verified in CI",
        parent_id="int-0123456789abcdef0123456789abcdef",
    )
    assert not label.is_status_change


def test_lines_outcome_learning_does_not_read_keep_only_their_kind() -> None:
    title = {"kind": "field_change", "id": "i1", "created_at": "not a time"}
    title["extra"] = {"field": "title", "new_value": "x"}
    assert interaction_from_json(title) == BeadsInteraction(
        kind="field_change", id="i1", field="title"
    )
    comment = interaction_from_json({"kind": "comment", "id": "i2"})
    assert (comment.kind, comment.is_status_change) == ("comment", False)


@pytest.mark.parametrize(
    ("text", "issue_id", "message"),
    [
        (b"\xff not json", "bd-1", "not valid JSON"),
        ("[1, 2]", None, "No issue object"),
        ('{"title": "no id"}', None, "has no id"),
        ('{"id": "  "}', None, "has no id"),
        ('{"id": "bd-1", "closed_at": "yesterday"}', None, "closed_at: Cannot read the time"),
    ],
)
def test_bad_issue_json_is_refused_by_name(
    text: str | bytes, issue_id: str | None, message: str
) -> None:
    with pytest.raises(InvalidIssue, match=message) as raised:
        parse_issue(text, issue_id)
    assert isinstance(raised.value, InvalidInput)


def test_a_status_change_at_an_unreadable_time_is_refused() -> None:
    row = {"kind": "field_change", "issue_id": "bd-1", "created_at": "soon"}
    row["extra"] = {"field": "status", "new_value": "closed"}
    with pytest.raises(InvalidIssue, match="created_at"):
        interaction_from_json(row)


def test_issues_and_interactions_are_immutable() -> None:
    issue = parse_issue((BEADS / "on_close_hook_stdin.json").read_text(), "bd-a3f8")
    with pytest.raises(dataclasses.FrozenInstanceError):
        issue.status = "open"  # type: ignore[misc]
    line = interaction_from_json(_lines("interactions_close.jsonl")[1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        line.label = "bad"  # type: ignore[misc]
    with pytest.raises(InvalidIssue, match="has no id"):
        BeadsIssue(id="")
