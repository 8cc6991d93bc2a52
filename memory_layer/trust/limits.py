"""How much one client may leave waiting for review.

Every proposal (a new record from an agent, or a change to one) lands in the review
inbox, and only a person empties it. One session filed 100 proposals with 1 MB
reasons in 44 s: the fields are bounded where they are cleaned (``memories``'
``MAX_*_CHARS``, ``trust.fields.clean_reason``), and the number waiting is bounded
here, per client and for every agent together (an agent may name its client as it
likes, so the per-client count alone would not hold).
"""

from __future__ import annotations

from memory_layer.errors import InvalidInput
from memory_layer.storage.proposals import open_proposal_count
from memory_layer.storage.records import pending_count

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.storage.conn import Conn

# Agent proposals of every client together: 10 clients at the default per-client cap.
AGENT_PREFIX = "mcp:"
MAX_OPEN_AGENT_PROPOSALS = 500


def open_proposals(db: Conn, source: str, *, prefix: bool = False) -> int:
    """Pending records written by ``source`` plus its open change proposals (``prefix``:
    of every source starting with it)."""
    return pending_count(db, source, prefix=prefix) + open_proposal_count(
        db, source, prefix=prefix
    )


def check_open_proposals(db: Conn, source: str, config: dict[str, Any]) -> None:
    """Refuse one more proposal from ``source`` once its share of the inbox is full."""
    cap = int(config["trust"]["max_open_proposals"])
    waiting = open_proposals(db, source)
    if waiting >= cap:
        raise InvalidInput(
            f"{source} already has {waiting} proposals waiting for review; the limit is "
            f"{cap} per client (trust.max_open_proposals). A person must review them "
            "(`memory-layer review`) before this client can propose more."
        )
    if source.startswith(AGENT_PREFIX):
        everyone = open_proposals(db, AGENT_PREFIX, prefix=True)
        if everyone >= MAX_OPEN_AGENT_PROPOSALS:
            raise InvalidInput(
                f"Agents already have {everyone} proposals waiting for review; the limit "
                f"is {MAX_OPEN_AGENT_PROPOSALS} for all of them together. A person must "
                "review them (`memory-layer review`) before any agent can propose more."
            )
