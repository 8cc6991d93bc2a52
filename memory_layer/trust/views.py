"""What people and agents are told about a record: lines for `memory-layer show` and
the dashboard (why it is withheld, who approved it, its open proposals), and the
provenance the MCP tools show agents (the withholding predicate itself is
``visibility.agent_withheld_reason``)."""

from __future__ import annotations

from typing import Any

from memory_layer.config import load_config
from memory_layer.errors import ConfigError
from memory_layer.models import Memory
from memory_layer.storage.conn import Conn
from memory_layer.storage.operations import Operation, last_context
from memory_layer.storage.proposals import open_proposals
from memory_layer.trust.policy import initial_status, is_automatic
from memory_layer.trust.visibility import ACTIVE, PENDING, agent_withheld_reason, flags


def trust_notes(db: Conn, memory: Memory) -> list[str]:
    config = load_config()
    notes: list[str] = []
    reason = agent_withheld_reason(memory, config)
    notes.append(f"withheld from agents: {reason}" if reason else "visible to agents")
    notes.extend(flags(memory, config))
    held = last_context(db, memory.id, "hold") if memory.status == PENDING else None
    if held and held.get("reason"):
        notes.append(f"held for review: {held['reason']}")
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
    for proposal in open_proposals(db, memory.id):
        notes.append(
            f"change proposed by {proposal['source']}: `memory-layer review` item {proposal['id']}"
        )
    return notes


def reviewed_by(memory: Memory) -> str | None:
    """Who vouched for the record's text as a person (a reviewer, or a person's own
    write), or None: a hook capture stamped by its own hook was trusted by
    configuration, and agents must not be told it was reviewed."""
    approver = memory.extra.get("approved_by")
    if not approver or is_automatic(str(approver)):
        return None
    return str(approver)


def agent_review(memory: Memory) -> dict[str, Any]:
    """What an agent is told about a record's approval: ``approved_by`` names a person
    only; an automatic approver is named as ``captured_by`` with ``reviewed`` false."""
    person = reviewed_by(memory)
    approver = memory.extra.get("approved_by")
    return {
        "approved_by": person,
        "reviewed": person is not None,
        "captured_by": None if person or not approver else str(approver),
    }


def _changed_fields(op: Operation) -> list[str]:
    old, new = op.old_value, op.new_value
    names: set[str] = set()
    for value in (old, new):
        if isinstance(value, dict):
            names.update(str(k) for k in value)
    return sorted(names)


# Only a person takes these (agents have no tool for them), so their reasons are
# reviewed words whoever the actor is named.
_REVIEW_ACTIONS = frozenset(
    {
        "accept",
        "revise",
        "reject",
        "confirm",
        "verify",
        "accept_change",
        "revise_change",
        "accept_proposal",
        "revise_proposal",
        "reject_proposal",
        "conflict_resolve",
    }
)


def _trusted_actor(actor: str, config: dict[str, Any]) -> bool:
    try:
        return initial_status(actor, config) == ACTIVE
    except ConfigError:
        # A broken trust setting fails safe: the reason is left out, not shown.
        return False


def agent_provenance(
    ops: list[Operation], config: dict[str, Any], *, withheld: bool
) -> list[dict[str, Any]]:
    """The history of a record as an agent may see it: who did what, when, and which
    fields changed, never the values. Operations hold unreviewed values (a proposed
    change, a pending record's first text before a reviewer revised it, a rejected
    proposal), and agents must never receive pending or rejected text. Reasons are
    shown only for review decisions and writes by trusted sources: an agent's reason
    is as unreviewed as its text. A withheld record shows neither."""
    out: list[dict[str, Any]] = []
    for op in ops:
        entry: dict[str, Any] = {"at": op.at, "actor": op.actor, "action": op.action}
        if op.action in _REVIEW_ACTIONS:
            # A hook's own "verify" stamp is the trust policy at work, not a review.
            entry["by_person"] = not is_automatic(op.actor)
        if not withheld:
            fields = _changed_fields(op)
            if fields and op.action not in {"create", "propose_change"}:
                entry["changed"] = fields
            reason = (op.context or {}).get("reason")
            if reason and (op.action in _REVIEW_ACTIONS or _trusted_actor(op.actor, config)):
                entry["reason"] = str(reason)
        out.append(entry)
    return out
