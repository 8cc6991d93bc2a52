"""Review: the inbox and a person's decisions; vouching for and disputing records."""

from __future__ import annotations

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.models import Memory
    from memory_layer.storage.conn import Conn



def inbox(db: Conn, *, config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every item waiting for a person, oldest first (see ``trust.review``).

    Records an older client or an import wrote active without a stamp are stamped
    first (as vouched for by their writer), so the inbox lists what is really
    unverified. Every write through ``remember`` is stamped when it is made; this is
    the repair for rows from before that, done when a person looks, not on a search."""
    from memory_layer.config import load_config
    from memory_layer.trust.review import inbox as items
    from memory_layer.trust.verify import stamp_trusted_writes

    config = config or load_config()
    stamp_trusted_writes(db, config)
    return items(db, config=config)


def decide(db: Conn, item_id: str, decision: str, **options: Any) -> dict[str, Any]:
    """accept | revise | reject one inbox item, by a person (``trust.review.decide``)."""
    from memory_layer.api.writing import check_reason
    from memory_layer.trust.review import decide as settle

    check_reason(options.get("reason"))
    return settle(db, item_id, decision, **options)


def verify(
    db: Conn, memory_id: str, *, actor: str, config: dict[str, Any], reason: str | None = None
) -> Memory:
    """Vouch for a record's current text (approver, time, review-by date, checksum)."""
    from memory_layer.api.writing import check_reason
    from memory_layer.trust.verify import verify as stamp

    check_reason(reason)
    return stamp(db, memory_id, actor=actor, config=config, reason=reason)


def dispute(db: Conn, memory_id: str, *, actor: str, reason: str) -> Memory:
    """Say a record is wrong: agents stop receiving it until a person decides. An agent
    (``mcp:*``) may dispute only what it may receive (``agent_record``)."""
    from memory_layer.api.reading import agent_record
    from memory_layer.api.writing import is_proposal
    from memory_layer.config import load_config
    from memory_layer.trust.verify import dispute as flag

    if is_proposal(actor):
        memory_id = agent_record(db, memory_id, load_config()).id

    return flag(db, memory_id, actor=actor, reason=reason)
