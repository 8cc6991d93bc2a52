"""The one predicate deciding what agents may see.

Hooks (injection), MCP search and anything else that hands memories to an agent
call ``agent_withheld_reason`` (through ``memory_layer.api``); the CLI and dashboard
show everything, with that reason saying why a record is held back. This runs once per recall
candidate on the hook hot path, so it imports nothing heavy and touches no
database: everything it needs is on the ``Memory`` row.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from memory_layer.models import Memory

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PENDING = "pending"
REJECTED = "rejected"
DISPUTED = "disputed"
CONFLICT = "conflict"  # one candidate value of a structured fact, awaiting a choice
ACTIVE = "active"
RETIRED = "retired"

# Written by a trigger when the text of a record that was never stamped changes, so
# such an edit is caught even though SQLite itself cannot compute sha256.
UNVERIFIED = "unverified"

_STATUS_REASONS = {
    PENDING: "pending review",
    REJECTED: "rejected in review",
    RETIRED: "retired",
    DISPUTED: "disputed",
}


def text_checksum(text: str) -> str:
    """sha256 of the exact stored text: what approval vouches for."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _trust(config: dict[str, Any]) -> dict[str, Any]:
    return config.get("trust") or {}


def edited_since_verification(memory: Memory) -> bool:
    """The text no longer matches the checksum stamped when it was approved.

    A record with no checksum yet was written active by a trusted source and has
    not been stamped; the trigger turns its checksum into ``unverified`` the moment
    its text changes, so an unstamped record is still its original text.
    """
    checksum = memory.extra.get("checksum")
    if checksum is None:
        return False
    return checksum == UNVERIFIED or checksum != text_checksum(memory.text)


def overdue(memory: Memory, now: datetime | None = None) -> bool:
    review_by = memory.extra.get("review_by")
    if not review_by:
        return False
    moment = now or datetime.now(UTC)
    # Stored by models.iso (UTC, fixed width), so text order is time order.
    return str(review_by) < moment.astimezone(UTC).isoformat(timespec="microseconds")


def withheld_reason(
    memory: Memory, config: dict[str, Any], now: datetime | None = None
) -> str | None:
    """Why agents must not receive this record, or None when they may."""
    status = memory.status
    if status in _STATUS_REASONS:
        return _STATUS_REASONS[status]
    if status == CONFLICT:
        if _trust(config).get("conflicts", "show") != "show":
            return "one of several conflicting values (trust.conflicts = hide)"
    elif status != ACTIVE:
        return f"status is {status}"
    if edited_since_verification(memory):
        return "edited since verification (run `memory-layer verify ID` or review it)"
    # Anything but an explicit "flag" withholds: a typo in the setting fails safe.
    if _trust(config).get("overdue", "withhold") != "flag" and overdue(memory, now):
        return f"overdue for review since {memory.extra.get('review_by')}"
    return None


# How agent_withheld_reason names a memory withheld only for sinking.
SINKING_PREFIX = "sinking"


def agent_withheld_reason(
    memory: Memory, config: dict[str, Any], now: datetime | None = None
) -> str | None:
    """Why an agent must not receive this record, or None: the trust layer's reasons, or
    sinking (at or below ``outcomes.floor``). This is the one question every door that
    hands a record to an agent asks (hook injection, MCP search/read/check, recall for
    the agent audience, the dashboard's standing line), so none leaks what another
    withholds."""
    reason = withheld_reason(memory, config, now)
    if reason is None:
        # Imported here: most calls stop at the trust reasons above.
        from memory_layer.outcomes.rules import is_sinking

        if is_sinking(memory, config):
            reason = (
                f"{SINKING_PREFIX} (outcome {memory.outcome_score:+.2f} at or below "
                "outcomes.floor)"
            )
    return reason


def agent_visible(memory: Memory, config: dict[str, Any], now: datetime | None = None) -> bool:
    return agent_withheld_reason(memory, config, now) is None


def agent_statuses(config: dict[str, Any]) -> tuple[str, ...]:
    """The statuses to put in ``Scope.statuses`` for an agent-facing recall: conflict
    candidates are included when configured to be shown (each marked, see ``flags``)."""
    if _trust(config).get("conflicts", "show") == "show":
        return (ACTIVE, CONFLICT)
    return (ACTIVE,)


def flags(memory: Memory, config: dict[str, Any], now: datetime | None = None) -> list[str]:
    """Warnings to show next to a record an agent does receive."""
    out: list[str] = []
    if memory.status == CONFLICT:
        subject = memory.extra.get("subject")
        key = memory.extra.get("fact_key")
        out.append(
            f"CONFLICT: one of several values for {subject} / {key}, "
            f"this one from {memory.source}; not confirmed"
        )
    if _trust(config).get("overdue", "withhold") == "flag" and overdue(memory, now):
        out.append(f"overdue for review since {memory.extra.get('review_by')}")
    return out
