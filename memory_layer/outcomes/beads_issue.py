"""Beads (`bd`) JSON, parsed once at the door into frozen values.

bd hands us issues three ways: on a hook's stdin (an object, a legacy ``bd show``
array, or a ``{"schema_version": 1, "data": ...}`` envelope), as lines of the
``.beads/issues.jsonl`` export, and from ``bd list --json``; its audit log
``.beads/interactions.jsonl`` records status changes and reviewers' labels. Each is
read here into a ``BeadsIssue`` or ``BeadsInteraction``; ``outcomes.beads`` reads
only those. Times are put in our ISO form at the door, so a time bd wrote that cannot
be read is refused with the issue (``InvalidIssue``), not found later mid-transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.models import stamp

CLOSED = "closed"
# The audit-log kinds outcome learning reads: a field change (of ``status``) and a
# ``bd audit label <interaction> --label good|bad`` verdict.
FIELD_CHANGE = "field_change"
LABEL = "label"
STATUS_FIELD = "status"


class InvalidIssue(InvalidInput):
    """The issue JSON bd handed over cannot be read."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BeadsIssue:
    """One issue as bd last described it. ``status`` is "" when bd did not say (an
    update that changes something else); times are ours (``models.stamp``)."""

    id: str
    status: str = ""
    title: str | None = None
    description: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    started_at: str | None = None
    closed_at: str | None = None
    close_reason: str | None = None
    closed_by_session: str | None = None
    # Read-only: ``metadata.outcome`` is an explicit verdict that outranks the reason.
    metadata: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise InvalidIssue("The issue has no id.")


@dataclass(frozen=True, slots=True, kw_only=True)
class BeadsInteraction:
    """One line of ``.beads/interactions.jsonl``.

    A status change has ``issue_id``, ``field`` and ``new_value`` (and ``reason``, the
    close reason); a label has ``parent_id`` (the interaction it judges), ``label``,
    ``reason`` and ``actor``. ``id`` keys the event, so replaying the log is a no-op.
    """

    kind: str
    id: str | None = None
    at: str | None = None
    actor: str | None = None
    issue_id: str | None = None
    field: str | None = None
    new_value: str = ""
    reason: str | None = None
    label: str = ""
    parent_id: str | None = None

    @property
    def is_status_change(self) -> bool:
        return self.kind == FIELD_CHANGE and self.field == STATUS_FIELD and bool(self.issue_id)


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _id(value: Any) -> str | None:
    """bd's ids are strings; a number is kept as its text."""
    return str(value) if value else None


def _time(data: Mapping[str, Any], key: str) -> str | None:
    try:
        return stamp(data.get(key))
    except InvalidInput as exc:
        raise InvalidIssue(f"{key}: {exc}") from None


def issue_from_json(
    data: Mapping[str, Any], *, issue_id: str | None = None, event: str | None = None
) -> BeadsIssue:
    """One decoded issue object. ``issue_id`` is the id bd's hook was run for (used
    when the body has none); ``event`` the hook's event: a ``close`` whose body names
    no status is a close."""
    if issue_id and not data.get("id"):
        data = {**data, "id": issue_id}
    key = str(data.get("id") or "").strip()
    status = str(data.get("status") or "").strip() or (CLOSED if event == "close" else "")
    metadata = data.get("metadata")
    return BeadsIssue(
        id=key,
        status=status,
        title=_text(data.get("title")),
        description=_text(data.get("description")),
        created_at=_time(data, "created_at"),
        updated_at=_time(data, "updated_at"),
        started_at=_time(data, "started_at"),
        closed_at=_time(data, "closed_at"),
        close_reason=_text(data.get("close_reason")),
        closed_by_session=_text(data.get("closed_by_session")),
        metadata=MappingProxyType(dict(metadata)) if isinstance(metadata, dict) else None,
    )


def parse_issue(
    text: str | bytes, issue_id: str | None = None, *, event: str | None = None
) -> BeadsIssue:
    """One issue from bd's JSON: an object, a legacy array (`bd show`), or an
    envelope ``{"schema_version": 1, "data": ...}``."""
    try:
        data = json.loads(text) if text else None
    except ValueError as exc:
        raise InvalidIssue(f"The issue JSON on stdin is not valid JSON ({exc}).") from None
    if isinstance(data, dict) and "data" in data and "id" not in data:
        data = data["data"]
    if isinstance(data, list):
        issues = [d for d in data if isinstance(d, dict)]
        chosen = [d for d in issues if d.get("id") == issue_id] or issues[:1]
        data = chosen[0] if chosen else None
    if not isinstance(data, dict):
        if not issue_id:
            raise InvalidIssue("No issue object in the JSON bd passed.")
        data = {}  # bd gave no body: the id alone still names the issue
    return issue_from_json(data, issue_id=issue_id, event=event)


def interaction_from_json(row: Mapping[str, Any]) -> BeadsInteraction:
    """One decoded audit-log line. Lines outcome learning does not read (other kinds,
    changes of other fields) keep only their kind, id and field."""
    kind = str(row.get("kind") or "")
    if kind == LABEL:
        return BeadsInteraction(
            kind=kind,
            id=_id(row.get("id")),
            at=_time(row, "created_at"),
            actor=str(row.get("actor") or "") or None,
            label=str(row.get("label") or "").lower(),
            reason=str(row.get("reason") or "") or None,
            parent_id=_id(row.get("parent_id")),
        )
    extra = row.get("extra") if isinstance(row.get("extra"), dict) else {}
    field = str(extra.get("field") or "") or None
    if kind != FIELD_CHANGE or field != STATUS_FIELD:
        return BeadsInteraction(kind=kind, id=_id(row.get("id")), field=field)
    return BeadsInteraction(
        kind=kind,
        id=_id(row.get("id")),
        at=_time(row, "created_at"),
        issue_id=_id(row.get("issue_id")),
        field=field,
        new_value=str(extra.get("new_value") or "").strip(),
        reason=_text(extra.get("reason")),
    )
