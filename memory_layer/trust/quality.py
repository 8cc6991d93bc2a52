"""Checking a draft before it is proposed, and proposing it (the MCP doors).

``check_draft`` reports what would make a reviewer reject the draft: too vague to
act on, a duplicate of an existing record, a different value for a fact that is
already recorded, or a secret inside. ``propose_record`` writes a proposal as a
pending record (or a change proposal for an existing one) and never makes
anything visible to agents by itself.
"""

from __future__ import annotations

import re
from typing import Any

from memory_layer.memories import check_text
from memory_layer.models import check_category
from memory_layer.requests import Place
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import (
    at_place,
    fact_values,
    thread_end,
    transaction,
    with_same_text,
)
from memory_layer.storage.textindex import normalise_for_hash
from memory_layer.trust.facts import clean_fact, write
from memory_layer.trust.limits import check_open_proposals
from memory_layer.trust.visibility import ACTIVE, CONFLICT, PENDING, agent_withheld_reason

# Something a future reader can act on: a number, path, flag, command, identifier
# or error code. A draft with none of these and a hedge word is rarely useful.
_SPECIFIC = re.compile(r"[0-9/\\`=_:]|--?\w|\w\.\w|\b[A-Z][A-Z0-9]{1,}\b|\w\(\)")
_VAGUE = re.compile(
    r"\b(something|stuff|things?|somehow|sometimes|maybe|probably|be careful|"
    r"watch out|it depends|etc|whatever|some issues?|the problem|as usual)\b",
    re.IGNORECASE,
)
MIN_WORDS = 4


def vague_reasons(text: str) -> list[str]:
    words = re.findall(r"\w+", text)
    reasons: list[str] = []
    if len(words) < MIN_WORDS:
        reasons.append(f"only {len(words)} word(s): say what, where and why")
    hedges = sorted({m.group(0).lower() for m in _VAGUE.finditer(text)})
    if hedges and not _SPECIFIC.search(text):
        reasons.append(
            "vague wording (" + ", ".join(hedges) + ") and nothing specific (a command, "
            "path, version, error or name)"
        )
    return reasons


def duplicates(
    db: Conn, text: str, *, project: str | None, config: dict[str, Any], embedder: Any
) -> list[dict[str, Any]]:
    """Records in the same scope saying the same thing (same text, or a near-identical
    vector), whatever their status."""
    found: dict[str, dict[str, Any]] = {}
    for memory in with_same_text(db, text, project, (ACTIVE, PENDING, CONFLICT), with_global=True):
        found[memory.id] = {
            "id": memory.id,
            "status": memory.status,
            "similarity": 1.0,
            "withheld": agent_withheld_reason(memory, config) is not None,
        }
    if embedder is not None:
        from memory_layer.retrieval.vectors import vector_index

        threshold = float(config["remember"]["duplicate_threshold"])
        vector = embedder.embed([text])[0]
        hits = vector_index(db, embedder.model_id).search(vector, projects=[project, None], limit=3)
        from memory_layer.storage.records import memories_by_rowid

        rows = memories_by_rowid(db, [rowid for rowid, _ in hits])
        for rowid, cosine in hits:
            memory = rows.get(rowid)
            if memory is None or cosine < threshold or memory.id in found:
                continue
            if memory.status in {ACTIVE, PENDING, CONFLICT}:
                found[memory.id] = {
                    "id": memory.id,
                    "status": memory.status,
                    "similarity": round(float(cosine), 4),
                    "withheld": agent_withheld_reason(memory, config) is not None,
                }
    return list(found.values())


def check_draft(
    db: Conn,
    text: str,
    *,
    config: dict[str, Any],
    category: str = "general",
    project: str | None = None,
    subject: str | None = None,
    key: str | None = None,
    reason: str | None = None,
    tags: list[str] | None = None,
    embedder: Any = None,
) -> dict[str, Any]:
    from memory_layer.capture.privacy import redact, strip_private
    from memory_layer.memories import MAX_REASON_CHARS, check_length
    from memory_layer.trust.fields import secret_problems

    text = check_text(text, int(config["remember"]["max_chars"]))
    check_category(category)
    # The same bounds as a proposal: check says now what propose would refuse.
    clean_fact(subject, key)
    check_length("reason", reason, MAX_REASON_CHARS)
    problems: list[dict[str, Any]] = []
    for reason in vague_reasons(text):
        problems.append({"kind": "vague", "detail": reason})
    visible_text = strip_private(text)
    redacted = redact(visible_text)
    if redacted != visible_text:
        kinds = sorted(set(re.findall(r"\[REDACTED:([\w-]+)\]", redacted)))
        problems.append(
            {
                "kind": "secret",
                "field": "text",
                "detail": "looks like it holds a secret ("
                + ", ".join(kinds or ["credential"])
                + "); it would be stored redacted. Leave the value out.",
                "redacted_text": redacted,
            }
        )
    problems.extend(
        secret_problems(
            {"subject": subject, "key": key, "reason": reason}
            # Named by position: echoing the tag would echo the secret.
            | {f"tag {n}": tag for n, tag in enumerate(tags or [], 1)}
        )
    )
    for dup in duplicates(db, redacted, project=project, config=config, embedder=embedder):
        if dup["withheld"]:
            # Naming a withheld record would confirm what it says: the draft is simply
            # proposed, and the reviewer sees both.
            continue
        problems.append(
            {
                "kind": "duplicate",
                "detail": f"duplicate of {dup['id']} ({dup['status']}, "
                f"similarity {dup['similarity']})",
                "memory_id": dup["id"],
            }
        )
    fact = clean_fact(subject, key)
    if fact:
        wanted = normalise_for_hash(redacted)
        for memory in fact_values(db, project, fact[0], fact[1], (ACTIVE, CONFLICT)):
            # The caller is an agent (MCP): a record withheld by the same predicate as
            # `read` and `search` (sinking included) is not mentioned at all, since
            # even "withheld" would confirm the fact exists.
            if agent_withheld_reason(memory, config) is not None:
                continue
            if normalise_for_hash(memory.text) != wanted:
                problems.append(
                    {
                        "kind": "conflict",
                        "detail": f"conflicts with {memory.id}: {fact[0]} / {fact[1]} is "
                        f"{memory.text!r} there (from {memory.source}, {memory.status})",
                        "memory_id": memory.id,
                    }
                )
    return {"ok": not problems, "problems": problems}


def _propose_change_of(
    db: Conn,
    memory_id: str,
    text: str,
    *,
    config: dict[str, Any],
    source: str,
    reason: str | None,
    scene: str | None,
) -> dict[str, Any]:
    """A proposed new text (and scene) for an existing record, queued for review."""
    from memory_layer.trust.review import propose_change

    changes = {}
    if scene:
        from memory_layer.trust.facts import clean_scene

        changes["scene"] = clean_scene(scene)
    proposal = propose_change(
        db, memory_id, text, source=source, config=config, reason=reason, changes=changes
    )
    return {
        "status": "pending",
        "item_id": proposal["id"],
        "kind": "change",
        "memory_id": proposal["memory_id"],
        "created": proposal["created"],
        "note": "Queued for review; the record is unchanged until a person accepts it.",
    }


def propose_record(
    db: Conn,
    text: str,
    *,
    config: dict[str, Any],
    source: str,
    category: str = "general",
    project: str | None = None,
    scene: str | None = None,
    subject: str | None = None,
    key: str | None = None,
    memory_id: str | None = None,
    reason: str | None = None,
    tags: list[str] | None = None,
    embedder: Any = None,
    hold: str | None = None,
    place: Place | None = None,
) -> dict[str, Any]:
    """A new pending record, or a change proposal when ``memory_id`` is given; ``hold``
    is a reason a person must weigh (a risky instruction), kept for the inbox.
    ``place``: where the record sits in a conversation of ``project``. A turn is never
    compared with what is stored: the record at a taken place may be withheld, and its
    text, id or status must not reach the agent (``_free_place``).

    The same proposal made twice (by two agents, or one agent twice) is one inbox
    item; a proposal repeating an active record changes nothing."""
    from memory_layer.trust.fields import clean_reason

    # Stored in the operations log and shown in the inbox: bounded and cleaned.
    reason = clean_reason(reason)
    if memory_id:
        return _propose_change_of(
            db, memory_id, text, config=config, source=source, reason=reason, scene=scene
        )
    from memory_layer.capture.privacy import clean

    stored = clean(check_text(text, int(config["remember"]["max_chars"])))
    with transaction(db):
        same = [] if place else with_same_text(
            db, stored, project, (ACTIVE, PENDING, CONFLICT), limit=1
        )
        for dup in same:
            if agent_withheld_reason(dup, config) is not None:
                # The same text waits in review already (or is held back): answered
                # as a fresh proposal of it, since "already recorded" would confirm a
                # withheld record's text to the agent.
                return _queued(dup, redacted=dup.text != text.strip())
            return {
                "status": dup.status,
                "item_id": dup.id,
                "kind": "duplicate",
                "memory_id": dup.id,
                "created": False,
                "note": f"Already recorded as {dup.id} ({dup.status}); nothing added.",
            }
        check_open_proposals(db, source, config)
        if place is not None:
            place, moved = _free_place(db, project, place)
            reason = "; ".join(part for part in (reason, moved) if part) or None
        result = write(
            db,
            stored,
            config=config,
            source=source,
            category=category,
            project=project,
            tags=tags,
            scene=scene,
            subject=subject,
            key=key,
            status=PENDING,
            embedder=embedder,
            dedupe=False,
            hold=hold,
            place=place,
        )
        memory = result.memory
        if reason:
            # In the same transaction: a proposal is never stored without its reason.
            from memory_layer.storage.records import record_op

            record_op(
                db, actor=source, action="propose", memory_id=memory.id, context={"reason": reason}
            )
    return _queued(memory, redacted=memory.text != text.strip())


def _free_place(db: Conn, project: str | None, place: Place) -> tuple[Place, str | None]:
    """Where a proposed turn is queued: at its place when that is free, else after the
    thread's last memory, with a note for the reviewer saying which place it asked for.
    The agent's answer is the same either way, so a proposal never tells it whether a
    place holds a record (pending, retired, or of any text); nor is it dropped."""
    if place.position is None or at_place(db, project, place.thread, place.position) is None:
        return place, None
    end = thread_end(db, project, place.thread)
    queued = place.at(0 if end is None else end + 1)
    return queued, (
        f"proposed for position {place.position} of thread {place.thread!r}, which "
        f"another memory holds; queued at position {queued.position}"
    )


def _queued(memory: Any, *, redacted: bool) -> dict[str, Any]:
    return {
        "status": PENDING,
        "item_id": memory.id,
        "kind": "new",
        "memory_id": memory.id,
        "created": True,
        "redacted": redacted,
        "note": "Queued for review; agents see it only once a person accepts it.",
    }
