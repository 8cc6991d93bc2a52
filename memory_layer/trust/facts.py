"""Writing through the trust policy, and structured facts that conflict instead of
overwriting.

A structured fact is a record with ``subject`` and ``fact_key``; its text is the
value (``prod-server`` / ``os`` / ``ubuntu 22.04``). When a second source writes a
different value for the same fact in the same scope, both become ``conflict``
candidates under one ``conflicts`` row and nothing is overwritten; a person
chooses one (review), which confirms it and rejects the others. Every step runs
under ``transaction`` (BEGIN IMMEDIATE), so writers in several processes are
serialised: none is lost, none is duplicated.
"""

from __future__ import annotations

from memory_layer.errors import InvalidInput
from memory_layer.memories import (
    MAX_KEY_CHARS,
    MAX_PROJECT_CHARS,
    MAX_SCENE_CHARS,
    MAX_SOURCE_CHARS,
    MAX_SUBJECT_CHARS,
    RememberResult,
    check_length,
    check_text,
    reinforce,
)
from memory_layer.memories import remember as core_remember
from memory_layer.models import Memory, iso, utcnow
from memory_layer.storage import conflicts
from memory_layer.storage.conn import Conn
from memory_layer.storage.operations import record_op
from memory_layer.storage.records import (
    fact_values,
    get_memory,
    in_conflict,
    transaction,
    update_memory,
    with_same_text,
)
from memory_layer.storage.textindex import normalise_for_hash
from memory_layer.trust.fields import clean_field, clean_tag_values
from memory_layer.trust.policy import ORIGINS, initial_status
from memory_layer.trust.verify import retire_superseded, stamp_fields, verify
from memory_layer.trust.visibility import ACTIVE, CONFLICT, PENDING, REJECTED

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path (captures are written through here) never
# imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from memory_layer.requests import Place


def clean_scene(scene: str | None) -> str | None:
    if scene is None:
        return None
    check_length("scene", scene, MAX_SCENE_CHARS)
    value = scene.strip().lower().replace(" ", "_").replace("-", "_")
    if not value:
        return None
    if not all(ch.isalnum() or ch == "_" for ch in value):
        raise InvalidInput(
            f"Scene {scene!r} may hold only letters, digits and '_' (e.g. deploy, server_ops)."
        )
    return value


def clean_fact(subject: str | None, key: str | None) -> tuple[str, str] | None:
    if subject is None and key is None:
        return None
    check_length("subject", subject, MAX_SUBJECT_CHARS)
    check_length("key", key, MAX_KEY_CHARS)
    # Stored, indexed and shown in the inbox like the text: cleaned like it.
    subject = (clean_field(subject) or "").strip()
    key = (clean_field(key) or "").strip().lower()
    if not subject or not key:
        raise InvalidInput(
            "A structured fact needs both a subject and a key (e.g. subject prod-server, "
            "key os; on the CLI --subject and --key); the text is the value."
        )
    return subject, key


def open_conflict(db: Conn, project: str | None, subject: str, key: str, *, actor: str) -> str:
    """The id of the open conflict for this fact, opening one if needed."""
    existing = conflicts.open_conflict_id(db, project, subject, key)
    if existing:
        return existing
    import secrets  # only when a conflict opens: ~8 ms on the capture path

    conflict_id = "c" + secrets.token_hex(7)
    conflicts.insert_conflict(db, conflict_id, project, subject, key, opened_at=iso(utcnow()))
    record_op(
        db,
        actor=actor,
        action="conflict_open",
        memory_id=None,
        new={"conflict_id": conflict_id, "project": project, "subject": subject, "key": key},
    )
    return conflict_id


def write(
    db: Conn,
    text: str,
    *,
    config: dict[str, Any],
    source: str,
    category: str = "general",
    project: str | None = None,
    tags: Any = None,
    confidence: float | None = None,
    scene: str | None = None,
    subject: str | None = None,
    key: str | None = None,
    status: str | None = None,
    embedder: Any = None,
    dedupe: bool = True,
    hold: str | None = None,
    now: datetime | None = None,
    origin: str | None = None,
    place: Place | None = None,
) -> RememberResult:
    """Remember through the trust policy: the status comes from ``initial_status``
    (unless given), trusted writes are stamped, structured facts may conflict.
    ``origin`` marks words that came from outside the conversation (policy.ORIGINS);
    the record keeps it, so the inbox can say where they came from. ``hold`` (why a
    person must decide first, e.g. a risky instruction) makes a new record pending
    whatever the policy says, with that reason in the log for the inbox. ``place``:
    where it sits in a conversation (memories.remember resolves and checks it); a
    turn is a distinct utterance even when its words repeat another's."""
    check_length("project id", project, MAX_PROJECT_CHARS)
    check_length("source", source, MAX_SOURCE_CHARS)
    origin = check_origin(origin)
    status = PENDING if hold else status or initial_status(source, config, origin)
    now = now or utcnow()
    scene = clean_scene(scene)
    fact = clean_fact(subject, key)
    tags = clean_tag_values(tags)
    extra: dict[str, Any] = {"scene": scene}
    if place is not None:
        dedupe = False
    if origin:
        extra["origin"] = origin
    if fact:
        extra.update(subject=fact[0], fact_key=fact[1])
    with transaction(db):
        if fact and status == ACTIVE:
            return _write_fact(
                db,
                text,
                fact=fact,
                config=config,
                source=source,
                category=category,
                project=project,
                tags=tags,
                confidence=confidence,
                extra=extra,
                embedder=embedder,
                now=now,
                place=place,
            )
        held = _held_again(db, text, project, status, dedupe and not fact)
        if held is not None:
            return RememberResult(held, created=False, similarity=1.0)
        result = core_remember(
            db,
            text,
            config=config,
            category=category,
            project=project,
            tags=tags,
            source=source,
            confidence=confidence,
            status=status,
            embedder=embedder,
            # A fact's value ("arm64") may equal an unrelated memory's text: never merge.
            dedupe=dedupe and not fact,
            extra=extra,
            now=now,
            place=place,
        )
        if result.created and hold:
            # In the same transaction: a held record is never stored without its reason.
            record_op(db, actor=source, action="hold", memory_id=result.memory.id,
                      context={"reason": hold})
        if result.created and status == ACTIVE:
            stamped = update_memory(
                db,
                result.memory.id,
                stamp_fields(
                    result.memory.text,
                    result.memory.category,
                    approver=source,
                    config=config,
                    now=now,
                ),
                actor=source,
                action="verify",
                context={"reason": f"written by {source}, which the trust policy trusts"},
            )
            return RememberResult(stamped, created=True)
        return result


def check_origin(origin: str | None) -> str | None:
    origin = (origin or "").strip().lower() or None
    if origin is not None and origin not in ORIGINS:
        raise InvalidInput(f"Unknown origin {origin!r}. Use one of: {', '.join(ORIGINS)}.")
    return origin


def _held_again(
    db: Conn, text: str, project: str | None, status: str, dedupe: bool
) -> Memory | None:
    """The pending record already holding this text, when a pending write repeats it: a
    capture seen in every session must not fill the inbox with copies. Nothing about the
    held record changes (repeating an unreviewed text vouches for nothing)."""
    if status != PENDING or not dedupe:
        return None
    from memory_layer.capture.privacy import clean

    same = with_same_text(db, clean(text.strip()), project, (PENDING,))
    return same[0] if same else None


def _write_fact(
    db: Conn,
    text: str,
    *,
    fact: tuple[str, str],
    config: dict[str, Any],
    source: str,
    category: str,
    project: str | None,
    tags: Any,
    confidence: float | None,
    extra: dict[str, Any],
    embedder: Any,
    now: datetime,
    place: Place | None = None,
) -> RememberResult:
    from memory_layer.capture.privacy import clean

    subject, key = fact
    value = clean(check_text(text, int(config["remember"]["max_chars"])))
    current = fact_values(db, project, subject, key, (ACTIVE, CONFLICT))
    wanted = normalise_for_hash(value)
    for memory in current:
        if normalise_for_hash(memory.text) == wanted:
            # The same value again, from anyone: one record, one more use.
            again = reinforce(
                db,
                memory,
                source=source,
                confidence=float(confidence or memory.confidence),
                tags=[],
                now=now,
                reason="same value for the same fact",
            )
            return RememberResult(again, created=False, similarity=1.0)

    def insert(status: str, more: dict[str, Any]) -> Memory:
        result = core_remember(
            db,
            value,
            config=config,
            category=category,
            project=project,
            tags=tags,
            source=source,
            confidence=confidence,
            status=status,
            embedder=embedder,
            dedupe=False,  # the same text as an unrelated memory is still this fact's value
            extra={**extra, **more},
            now=now,
            place=place,
        )
        return result.memory

    stamp = stamp_fields(value, category, approver=source, config=config, now=now)
    conflicted = [m for m in current if m.status == CONFLICT]
    active = [m for m in current if m.status == ACTIVE]
    if not current:
        return RememberResult(insert(ACTIVE, stamp), created=True)
    own = all(m.source == source and m.extra.get("approved_by") in (None, source) for m in active)
    if not conflicted and own:
        # The same writer changing its own value is a correction, not a conflict; once a
        # person confirmed the value, even its writer's new value is a conflict.
        memory = insert(ACTIVE, stamp)
        for old in active:
            retire_superseded(db, old, by=memory.id, actor=source)
        return RememberResult(memory, created=True)
    conflict_id = open_conflict(db, project, subject, key, actor=source)
    for old in active:
        update_memory(
            db,
            old.id,
            {"status": CONFLICT, "conflict_id": conflict_id},
            actor=source,
            action="conflict",
            context={"reason": f"{source} wrote a different value", "conflict_id": conflict_id},
        )
    # Candidates keep a checksum so an edit is still caught, but no approver.
    memory = insert(
        CONFLICT,
        {"conflict_id": conflict_id, "checksum": stamp["checksum"]},
    )
    return RememberResult(memory, created=True)


def conflict_members(db: Conn, conflict_id: str) -> list[Memory]:
    """The candidates of a conflict still standing (not yet rejected or confirmed)."""
    return in_conflict(db, conflict_id, CONFLICT)


def resolve_conflict(
    db: Conn,
    conflict_id: str,
    *,
    chosen_id: str | None,
    actor: str,
    config: dict[str, Any],
    reason: str | None,
    revised_text: str | None = None,
    embedder: Any = None,
) -> Memory | None:
    """Confirm one candidate (or none) and reject the others; history keeps all."""
    with transaction(db):
        conflict = conflicts.get_conflict(db, conflict_id)
        if conflict is None:
            raise InvalidInput(f"No conflict '{conflict_id}'. `memory-layer review` lists them.")
        if not conflict.is_open:
            raise InvalidInput(f"Conflict {conflict_id} was already resolved.")
        members = conflict_members(db, conflict_id)
        chosen: Memory | None = None
        if chosen_id is not None:
            chosen = get_memory(db, chosen_id)
            if chosen.id not in {m.id for m in members}:
                raise InvalidInput(
                    f"Memory {chosen.id} is not a candidate of conflict {conflict_id}; "
                    "choose one of: " + ", ".join(m.id for m in members)
                )
        for memory in members:
            if chosen is not None and memory.id == chosen.id:
                continue
            update_memory(
                db,
                memory.id,
                {"status": REJECTED},
                actor=actor,
                action="reject",
                context={
                    "reason": reason or "another value was chosen",
                    "conflict_id": conflict_id,
                    "chosen": chosen.id if chosen else None,
                },
            )
        confirmed = None
        if chosen is not None:
            confirmed = verify(
                db,
                chosen.id,
                actor=actor,
                config=config,
                reason=reason,
                text=revised_text,
                action="confirm",
                embedder=embedder,
            )
        conflicts.mark_resolved(
            db,
            conflict_id,
            at=iso(utcnow()),
            actor=actor,
            chosen_id=chosen.id if chosen else None,
            reason=reason,
        )
        record_op(
            db,
            actor=actor,
            action="conflict_resolve",
            memory_id=chosen.id if chosen else None,
            new={"conflict_id": conflict_id, "chosen": chosen.id if chosen else None},
            context={"reason": reason} if reason else None,
        )
    return confirmed


def settle_fact(db: Conn, memory: Memory, *, actor: str, reason: str | None) -> None:
    """A person accepted ``memory`` as the value of its fact: every other value still
    standing for that fact is retired (an active one) or rejected (a candidate), and
    an open conflict is closed in its favour. History keeps them all."""
    subject, key = memory.extra.get("subject"), memory.extra.get("fact_key")
    if not subject or not key:
        return
    with transaction(db):
        others = [
            m
            for m in fact_values(db, memory.project, subject, key, (ACTIVE, CONFLICT))
            if m.id != memory.id
        ]
        for other in others:
            if other.status == ACTIVE:
                retire_superseded(db, other, by=memory.id, actor=actor)
            else:
                update_memory(
                    db,
                    other.id,
                    {"status": REJECTED},
                    actor=actor,
                    action="reject",
                    context={"reason": reason or f"{memory.id} was accepted instead"},
                )
        closed = conflicts.resolve_open_for_fact(
            db,
            memory.project,
            subject,
            key,
            at=iso(utcnow()),
            actor=actor,
            chosen_id=memory.id,
            reason=reason,
        )
        if closed:
            record_op(
                db,
                actor=actor,
                action="conflict_resolve",
                memory_id=memory.id,
                new={"chosen": memory.id, "subject": subject, "key": key},
                context={"reason": reason} if reason else None,
            )


def check_restorable(db: Conn, memory: Memory) -> None:
    """Refuse to make a fact's value active outside conflict resolution.

    Restoring a conflict candidate (or a value rejected or retired while another one
    stands) would leave two active values for one fact, or an open conflict whose
    candidate is already true: two truths, with no person having chosen between them.
    `memory-layer restore` and the dashboard call this before switching the status."""
    if memory.status == CONFLICT:
        conflict_id = memory.extra.get("conflict_id")
        raise InvalidInput(
            f"Memory {memory.id} is a candidate of open conflict {conflict_id}; restoring it "
            "would not settle the conflict. Choose it in review: "
            f"`memory-layer review accept {conflict_id} --choose {memory.id} --reason ...`."
        )
    subject, key = memory.extra.get("subject"), memory.extra.get("fact_key")
    if not subject or not key:
        return
    standing = [
        m
        for m in fact_values(db, memory.project, subject, key, (ACTIVE, CONFLICT))
        if m.id != memory.id
    ]
    if standing:
        ids = ", ".join(m.id for m in standing)
        raise InvalidInput(
            f"{subject} / {key} already has a value ({ids}); restoring {memory.id} would make "
            f"two. Write the value again with `memory-layer remember {memory.text!r} "
            f"--subject {subject!r} --key {key}` (it becomes a correction or a conflict "
            "for `memory-layer review`), or forget the other value first."
        )
