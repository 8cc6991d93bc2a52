"""The review inbox and its decisions, shared by `memory-layer review` and the dashboard.

An inbox item is one of:
- ``new``: a pending record (an MCP proposal, a held-back extraction);
- ``change``: a proposed change to an existing record (``proposals`` row);
- ``conflict``: several candidate values for one structured fact;
- ``disputed``, ``unverified`` (edited since verification), ``overdue``: a record
  agents no longer receive until someone looks at it.

Every decision is accept, revise (accept with a corrected text) or reject, by an
actor, with a reason, and lands in the operations log.
"""

from __future__ import annotations

import secrets
from typing import Any

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import Memory, iso, utcnow
from memory_layer.storage import conflicts, proposals
from memory_layer.storage.conn import Conn
from memory_layer.storage.operations import last_context, record_op
from memory_layer.storage.records import (
    fact_values,
    get_memory,
    transaction,
    update_memory,
    with_status,
)
from memory_layer.trust.facts import conflict_members, resolve_conflict, settle_fact
from memory_layer.trust.ids import resolve_item_id
from memory_layer.trust.verify import verify
from memory_layer.trust.visibility import (
    ACTIVE,
    CONFLICT,
    DISPUTED,
    PENDING,
    REJECTED,
    edited_since_verification,
    overdue,
)

DECISIONS = ("accept", "revise", "reject")
# What to use instead when a decision names a record that is not in the inbox.
_OUTSIDE_REVIEW = {
    "accept": "There is nothing to accept.",
    "revise": "To change its text, use `memory-layer edit {id} --text ...`.",
    "reject": "To stop agents seeing it, use `memory-layer forget {id}`.",
}


def _brief(memory: Memory) -> dict[str, Any]:
    return {
        "memory_id": memory.id,
        "text": memory.text,
        "category": memory.category,
        "project": memory.project,
        "scene": memory.extra.get("scene"),
        "subject": memory.extra.get("subject"),
        "key": memory.extra.get("fact_key"),
        "source": memory.source,
        "origin": memory.extra.get("origin"),
        "status": memory.status,
        "created_at": memory.created_at,
    }


# What the inbox says about a record whose words came from outside the conversation.
_ORIGIN_NOTES = {
    "tool_output": "its words come from a tool's output",
    "file": "its words come from a file the agent read",
    "web": "its words come from a page the agent fetched",
    "relayed": "the assistant was repeating tool output or a file it read",
}


def _origin_note(memory: Memory) -> str:
    origin = memory.extra.get("origin")
    if not origin:
        return ""
    return f" ({_ORIGIN_NOTES.get(origin, origin)}: check it before agents may see it)"


def _last_reason(db: Conn, memory_id: str, action: str) -> str | None:
    context = last_context(db, memory_id, action)
    return context.get("reason") if context else None


def _awaits_review(memory: Memory) -> bool:
    """Whether the record is an inbox item: pending, disputed, or active but edited
    since verification or past its review-by date."""
    if memory.status in (PENDING, DISPUTED):
        return True
    return memory.status == ACTIVE and (edited_since_verification(memory) or overdue(memory))


def _fact_note(db: Conn, memory: Memory) -> str:
    """For a proposed value of a structured fact: what accepting it would replace, and
    the other proposals for the same fact, so no confirmed value is replaced unseen."""
    subject, key = memory.extra.get("subject"), memory.extra.get("fact_key")
    if not subject or not key:
        return ""
    others = [
        m
        for m in fact_values(db, memory.project, subject, key, (ACTIVE, PENDING))
        if m.id != memory.id
    ]
    standing = [m for m in others if m.status == ACTIVE]
    rivals = [m for m in others if m.status == PENDING]
    note = ""
    if standing:
        values = ", ".join(f"{m.text!r} ({m.id}, from {m.source})" for m in standing)
        note += f"; accepting it replaces the current value {values}"
    if rivals:
        note += f"; {len(rivals)} other proposal(s) for this fact: " + ", ".join(
            m.id for m in rivals
        )
    return note


def _is_stale(proposal: dict[str, Any], memory: Any) -> bool:
    """A change proposed against text the memory no longer has (proposals made before
    base_text was recorded have none and are taken as current)."""
    base = proposal.get("base_text")
    return base is not None and base != memory.text


def propose_change(
    db: Conn,
    memory_id: str,
    text: str,
    *,
    source: str,
    config: dict[str, Any],
    reason: str | None = None,
    changes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Queue a change to an existing record for review; the record itself is untouched.
    Proposing the same change again returns the open proposal instead of a copy."""
    from memory_layer.capture.privacy import clean
    from memory_layer.memories import check_text
    from memory_layer.trust.fields import clean_reason
    from memory_layer.trust.limits import check_open_proposals

    text = clean(check_text(text, int(config["remember"]["max_chars"])))
    reason = clean_reason(reason)
    with transaction(db):
        target = get_memory(db, memory_id)
        if text == target.text and not changes:
            raise InvalidInput(f"Memory {target.id} already says exactly that.")
        existing = proposals.open_proposal_for(db, target.id, text)
        if existing:
            return {**existing, "created": False}
        check_open_proposals(db, source, config)
        proposal_id = "p" + secrets.token_hex(7)
        proposal = proposals.insert_proposal(
            db,
            proposal_id,
            target.id,
            text,
            changes=changes or {},
            source=source,
            reason=reason,
            created_at=iso(utcnow()),
            base_text=target.text,  # accepting it later must not undo a newer edit
        )
        record_op(
            db,
            actor=source,
            action="propose_change",
            memory_id=target.id,
            old={"text": target.text},
            new={"text": text, **(changes or {})},
            context={"proposal_id": proposal_id, "reason": reason},
        )
    return {**proposal, "created": True}


def inbox(db: Conn, *, config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Everything waiting for a person, oldest first (a stable order)."""
    from memory_layer.config import load_config

    config = config or load_config()
    items: list[dict[str, Any]] = []
    for memory in with_status(db, (PENDING, DISPUTED)):
        held = None
        if memory.status == PENDING:
            # Held by the write policy although its source is trusted: say why.
            held = _last_reason(db, memory.id, "hold")
            kind, why = (
                "new",
                f"proposed by {memory.source}" + _fact_note(db, memory) + _origin_note(memory),
            )
            if held:
                why += f"; held for review: {held}"
        else:
            reason = _last_reason(db, memory.id, "dispute") or "no reason given"
            kind, why = "disputed", f"disputed: {reason}"
        items.append({"id": memory.id, "kind": kind, "why": why, "held": held, **_brief(memory)})
    for proposal in proposals.open_proposals(db):
        try:
            target = get_memory(db, proposal["memory_id"])
        except NotFound:
            continue
        stale = _is_stale(proposal, target)
        items.append(
            {
                "id": proposal["id"],
                "kind": "change",
                "why": f"change proposed by {proposal['source']}"
                + (f": {proposal['reason']}" if proposal["reason"] else "")
                + (" (stale: the memory changed since; revise or reject it)" if stale else ""),
                "stale": stale,
                **_brief(target),
                "proposed_text": proposal["text"],
                "proposed_changes": proposal["changes"],
                "source": proposal["source"],
                "created_at": proposal["created_at"],
            }
        )
    for conflict in conflicts.open_conflicts(db):
        members = conflict_members(db, conflict.id)
        items.append(
            {
                "id": conflict.id,
                "kind": "conflict",
                "why": f"{len(members)} different values for {conflict.subject} / "
                f"{conflict.fact_key}",
                "project": conflict.project,
                "subject": conflict.subject,
                "key": conflict.fact_key,
                "created_at": conflict.opened_at,
                "candidates": [_brief(m) for m in members],
            }
        )
    for memory in with_status(db, (ACTIVE,)):
        if edited_since_verification(memory):
            items.append(
                {
                    "id": memory.id,
                    "kind": "unverified",
                    "why": "text edited since it was verified",
                    **_brief(memory),
                }
            )
        elif overdue(memory):
            items.append(
                {
                    "id": memory.id,
                    "kind": "overdue",
                    "why": f"review was due {memory.extra.get('review_by')}",
                    **_brief(memory),
                }
            )
    for item in items:
        item["decisions"] = list(DECISIONS)
    return items


def _decide_proposal(
    db: Conn,
    proposal: dict[str, Any],
    decision: str,
    *,
    actor: str,
    reason: str | None,
    revised_text: str | None,
    config: dict[str, Any],
    embedder: Any,
) -> dict[str, Any]:
    if proposal["status"] != "open":
        raise InvalidInput(f"Proposal {proposal['id']} was already {proposal['status']}.")
    memory = get_memory(db, proposal["memory_id"])
    if decision == "accept" and _is_stale(proposal, memory):
        raise InvalidInput(
            f"Memory {memory.id} changed since proposal {proposal['id']} was made, so "
            "accepting it would silently undo that change. Revise it with the change applied "
            f"to the current text (`memory-layer review revise {proposal['id']} --text ... "
            "--reason ...`) or reject it."
        )
    if decision != "reject":
        text = revised_text if decision == "revise" else proposal["text"]
        other = {k: v for k, v in proposal["changes"].items() if k in {"category", "scene"}}
        if other:
            update_memory(
                db,
                memory.id,
                other,
                actor=actor,
                action="edit",
                context={"proposal_id": proposal["id"]},
            )
        memory = verify(
            db,
            memory.id,
            actor=actor,
            config=config,
            reason=reason,
            text=text,
            status=ACTIVE if memory.status in {ACTIVE, DISPUTED, PENDING} else memory.status,
            action="accept_change" if decision == "accept" else "revise_change",
            embedder=embedder,
        )
    proposals.mark_decided(
        db,
        proposal["id"],
        {"accept": "accepted", "revise": "revised", "reject": "rejected"}[decision],
        actor=actor,
        at=iso(utcnow()),
        reason=reason,
    )
    record_op(
        db,
        actor=actor,
        action=f"{decision}_proposal",
        memory_id=memory.id,
        context={"proposal_id": proposal["id"], "reason": reason},
    )
    return {
        "item_id": proposal["id"],
        "kind": "change",
        "decision": decision,
        "memory": memory.to_dict(),
    }


def decide(
    db: Conn,
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
    """Accept, revise or reject one inbox item (see the module docstring).

    For a conflict, ``item_id`` may be the conflict id (with ``choose`` = the candidate
    to confirm; reject without ``choose`` rejects every candidate) or a candidate's
    memory id (accept/revise confirms it; reject drops it, and a lone survivor is
    confirmed)."""
    from memory_layer.config import load_config

    config = config or load_config()
    decision = (decision or "").strip().lower()
    if decision not in DECISIONS:
        raise InvalidInput(f"Decision must be one of {', '.join(DECISIONS)}, got {decision!r}.")
    if decision == "revise" and not (revised_text or "").strip():
        raise InvalidInput("A revision needs the corrected text (--text).")
    if decision == "reject" and not (reason or "").strip():
        raise InvalidInput("Say why it is rejected (--reason); the history keeps it.")
    with transaction(db):
        item_id = resolve_item_id(db, item_id)
        proposal = proposals.get_proposal(db, item_id)
        if proposal:
            return _decide_proposal(
                db,
                proposal,
                decision,
                actor=actor,
                reason=reason,
                revised_text=revised_text,
                config=config,
                embedder=embedder,
            )
        if conflicts.get_conflict(db, item_id) is not None:
            if decision != "reject" and not choose:
                raise InvalidInput(
                    f"Say which value to keep: --choose one of the candidates of {item_id} "
                    "(`memory-layer review` lists them)."
                )
            chosen = resolve_conflict(
                db,
                item_id,
                chosen_id=choose if decision != "reject" else None,
                actor=actor,
                config=config,
                reason=reason,
                revised_text=revised_text if decision == "revise" else None,
                embedder=embedder,
            )
            return {
                "item_id": item_id,
                "kind": "conflict",
                "decision": decision,
                "memory": chosen.to_dict() if chosen else None,
            }
        memory = get_memory(db, item_id)
        if memory.status == CONFLICT:
            return _decide_candidate(
                db,
                memory,
                decision,
                actor=actor,
                reason=reason,
                revised_text=revised_text,
                config=config,
                embedder=embedder,
            )
        if not _awaits_review(memory):
            # Review decides what is waiting; acting on anything else would restamp it
            # and restart its review clock without anyone having had anything to review.
            raise InvalidInput(
                f"Memory {memory.id} is not waiting for review (status {memory.status}"
                + (", verified" if memory.status == ACTIVE else "")
                + f"); nothing changed. {_OUTSIDE_REVIEW[decision].format(id=memory.id)} "
                "`memory-layer review` lists what is waiting."
            )
        if decision == "reject":
            updated = update_memory(
                db,
                memory.id,
                {"status": REJECTED},
                actor=actor,
                action="reject",
                context={"reason": reason, "previous_status": memory.status},
            )
        else:
            updated = verify(
                db,
                memory.id,
                actor=actor,
                config=config,
                reason=reason,
                text=revised_text if decision == "revise" else None,
                action="accept" if decision == "accept" else "revise",
                embedder=embedder,
            )
            settle_fact(db, updated, actor=actor, reason=reason)
    return {"item_id": item_id, "kind": "record", "decision": decision, "memory": updated.to_dict()}


def _decide_candidate(
    db: Conn,
    memory: Memory,
    decision: str,
    *,
    actor: str,
    reason: str | None,
    revised_text: str | None,
    config: dict[str, Any],
    embedder: Any,
) -> dict[str, Any]:
    conflict_id = str(memory.extra.get("conflict_id"))
    if decision != "reject":
        chosen = resolve_conflict(
            db,
            conflict_id,
            chosen_id=memory.id,
            actor=actor,
            config=config,
            reason=reason,
            revised_text=revised_text if decision == "revise" else None,
            embedder=embedder,
        )
        return {
            "item_id": memory.id,
            "kind": "conflict",
            "decision": decision,
            "memory": chosen.to_dict() if chosen else None,
        }
    update_memory(
        db,
        memory.id,
        {"status": REJECTED},
        actor=actor,
        action="reject",
        context={"reason": reason, "conflict_id": conflict_id},
    )
    left = conflict_members(db, conflict_id)
    survivor = None
    if len(left) == 1:
        survivor = resolve_conflict(
            db,
            conflict_id,
            chosen_id=left[0].id,
            actor=actor,
            config=config,
            reason=f"the only value left after rejecting {memory.id}: {reason}",
        )
    elif not left:
        resolve_conflict(db, conflict_id, chosen_id=None, actor=actor, config=config, reason=reason)
    return {
        "item_id": memory.id,
        "kind": "conflict",
        "decision": decision,
        "memory": get_memory(db, memory.id).to_dict(),
        "confirmed": survivor.to_dict() if survivor else None,
    }
