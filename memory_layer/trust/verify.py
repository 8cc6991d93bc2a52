"""Stamping approval: who vouched for a text, when, until when, and its sha256.

Records written active by a trusted source are stamped in the same transaction as
the write (approved_by = that source). A record someone else wrote active without
stamping (an older client, an import) carries no checksum until the next
``stamp_trusted_writes``; a trigger marks it 'unverified' if its text changes
before then, so an unstamped record is always its original text.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from memory_layer.errors import InvalidInput
from memory_layer.models import Memory, iso, parse_time, utcnow
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import get_memory, transaction, unstamped_active, update_memory
from memory_layer.trust.visibility import (
    ACTIVE,
    CONFLICT,
    DISPUTED,
    RETIRED,
    edited_since_verification,
    text_checksum,
)

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path (captures are written through here) never
# imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def review_by_for(category: str, config: dict[str, Any], approved_at: datetime) -> str | None:
    """The review-by date for a record approved at ``approved_at`` (None = never due)."""
    days = int(config["trust"]["review_days"].get(category, 0))
    return iso(approved_at + timedelta(days=days)) if days > 0 else None


def stamp_fields(
    text: str, category: str, *, approver: str, config: dict[str, Any], now: datetime
) -> dict[str, Any]:
    return {
        "approved_by": approver,
        "approved_at": iso(now),
        "review_by": review_by_for(category, config, now),
        "checksum": text_checksum(text),
    }


def verify(
    db: Conn,
    memory_id: str,
    *,
    actor: str,
    config: dict[str, Any],
    reason: str | None = None,
    status: str = ACTIVE,
    text: str | None = None,
    action: str = "verify",
    embedder: Any = None,
    now: datetime | None = None,
) -> Memory:
    """Approve a record's current (or revised) text: stamp approver, time, review-by date
    and checksum, and make it ``status``. The operations log keeps the old values."""
    now = now or utcnow()
    with transaction(db):
        memory = get_memory(db, memory_id)
        changes: dict[str, Any] = {"status": status}
        if text is not None and text != memory.text:
            from memory_layer.capture.privacy import clean
            from memory_layer.memories import check_text

            text = clean(check_text(text, int(config["remember"]["max_chars"])))
            changes["text"] = text
            if embedder is not None:
                from memory_layer.embed import to_blob

                changes["embedding"] = to_blob(embedder.embed([text])[0])
                changes["embedding_model"] = embedder.model_id
            else:
                # The old vector describes the old text; `memory-layer index` re-embeds.
                changes["embedding"] = None
                changes["embedding_model"] = None
        final_text = changes.get("text", memory.text)
        changes.update(
            stamp_fields(final_text, memory.category, approver=actor, config=config, now=now)
        )
        return update_memory(
            db,
            memory.id,
            changes,
            actor=actor,
            action=action,
            context={"reason": reason} if reason else None,
        )


def verify_if_trusted(db: Conn, memory_id: str, *, source: str, config: dict[str, Any]) -> Memory:
    """After a trusted source edits a record, vouch for the new text (keeping its status).

    An edit by a source the policy does not trust leaves the record edited since
    verification, so agents stop seeing it until someone reviews it."""
    from memory_layer.trust.policy import initial_status

    memory = get_memory(db, memory_id)
    if initial_status(source, config) != ACTIVE or memory.status not in {ACTIVE, CONFLICT}:
        return memory
    if not edited_since_verification(memory) and memory.extra.get("checksum"):
        return memory
    return verify(
        db,
        memory.id,
        actor=source,
        config=config,
        status=memory.status,
        reason="edited by a trusted source",
    )


def stamp_trusted_writes(db: Conn, config: dict[str, Any], *, now: datetime | None = None) -> int:
    """Stamp active records that were written without a checksum (as verified by their
    writer). Returns how many were stamped."""
    now = now or utcnow()
    count = 0
    with transaction(db):
        for memory_id, text, category, source in unstamped_active(db):
            fields = stamp_fields(text, category, approver=source, config=config, now=now)
            update_memory(
                db,
                memory_id,
                fields,
                actor=source,
                action="verify",
                context={"reason": "written active by a trusted source; stamped"},
            )
            count += 1
    return count


def dispute(db: Conn, memory_id: str, *, actor: str, reason: str) -> Memory:
    """Any client may dispute a record: agents stop receiving it until a person decides."""
    from memory_layer.trust.fields import clean_reason

    # Shown in the inbox and kept in the log: bounded and cleaned like a record's text.
    reason = (clean_reason(reason) or "").strip()
    if not reason:
        raise InvalidInput("Say why the record is wrong: a dispute needs a reason.")
    memory = get_memory(db, memory_id)
    if memory.status not in {ACTIVE, CONFLICT}:
        raise InvalidInput(
            f"Memory {memory.id} is {memory.status}; only records agents can see can be disputed."
        )
    with transaction(db):
        updated = update_memory(
            db,
            memory.id,
            {"status": DISPUTED},
            actor=actor,
            action="dispute",
            context={"reason": reason, "previous_status": memory.status},
        )
    return updated


def retire_superseded(db: Conn, memory: Memory, *, by: str, actor: str) -> Memory:
    return update_memory(
        db,
        memory.id,
        {"status": RETIRED},
        actor=actor,
        action="supersede",
        context={"reason": f"superseded by {by}", "superseded_by": by},
    )


def parse_since(value: str) -> str:
    """A --since value (ISO time, or 30m / 12h / 7d ago) as a stored-time string."""
    text = value.strip()
    units = {"m": 60, "h": 3600, "d": 86400, "w": 604800}
    if text[:-1].isdigit() and text[-1:] in units:
        return iso(utcnow() - timedelta(seconds=int(text[:-1]) * units[text[-1]]))
    try:
        return iso(parse_time(text))
    except ValueError:
        raise InvalidInput(
            f"--since {value!r} is neither an ISO time (2026-01-31T12:00Z) nor an age like "
            "30m, 12h or 7d."
        ) from None
