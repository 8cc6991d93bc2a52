"""Trust: who may write what, the review inbox, checksums, conflicts and scenes.

``visibility.agent_visible`` is the one predicate for what agents may see and is
cheap to import (the hook path imports it); everything else is imported lazily
here so importing this package costs nothing extra.
"""

from __future__ import annotations

from memory_layer.storage.conn import Conn
from memory_layer.trust.policy import initial_status
from memory_layer.trust.visibility import agent_statuses, agent_visible, flags, withheld_reason

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "agent_statuses",
    "agent_visible",
    "decide",
    "flags",
    "inbox",
    "initial_status",
    "verify",
    "withheld_reason",
]


def inbox(conn: Conn, *, config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every item waiting for a person: pending records, proposed changes, conflicts,
    disputed, edited-since-verification and overdue records; oldest first."""
    from memory_layer.trust.review import inbox as _inbox

    return _inbox(conn, config=config)


def decide(
    conn: Conn,
    item_id: str,
    decision: str,
    *,
    actor: str,
    reason: str | None = None,
    revised_text: str | None = None,
    choose: str | None = None,
    config: dict[str, Any] | None = None,
    embedder: Any = None,
) -> dict[str, Any]:
    """accept | revise | reject one inbox item; see ``trust.review.decide``."""
    from memory_layer.trust.review import decide as _decide

    return _decide(
        conn,
        item_id,
        decision,
        actor=actor,
        reason=reason,
        revised_text=revised_text,
        choose=choose,
        config=config,
        embedder=embedder,
    )


def verify(conn: Conn, memory_id: str, *, actor: str, reason: str | None = None) -> Any:
    """Re-verify a record's current text (approver, time, review-by date, checksum)."""
    from memory_layer.config import load_config
    from memory_layer.trust.verify import verify as _verify

    return _verify(conn, memory_id, actor=actor, config=load_config(), reason=reason)
