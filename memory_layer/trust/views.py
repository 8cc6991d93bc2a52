"""Lines for `memory-layer show` and the dashboard: why a record is withheld, who
approved it, its open proposals and conflict."""

from __future__ import annotations

from memory_layer.config import load_config
from memory_layer.models import Memory
from memory_layer.storage.conn import Conn, raw
from memory_layer.trust.visibility import flags, withheld_reason


def trust_notes(db: Conn, memory: Memory) -> list[str]:
    config = load_config()
    notes: list[str] = []
    reason = withheld_reason(memory, config)
    notes.append(f"withheld from agents: {reason}" if reason else "visible to agents")
    notes.extend(flags(memory, config))
    extra = memory.extra
    if extra.get("approved_by"):
        notes.append(
            f"approved by {extra['approved_by']} at {str(extra.get('approved_at'))[:19]}; "
            f"review by {str(extra.get('review_by') or 'never')[:10]}"
        )
    if extra.get("subject"):
        notes.append(f"fact: {extra['subject']} / {extra.get('fact_key')} = {memory.text}")
    if extra.get("scene"):
        notes.append(f"scene: {extra['scene']}")
    for proposal_id, source in raw(db).execute(
        "SELECT id, source FROM proposals WHERE memory_id = ? AND status = 'open' "
        "ORDER BY created_at, id",
        [memory.id],
    ):
        notes.append(f"change proposed by {source}: `memory-layer review` item {proposal_id}")
    return notes
