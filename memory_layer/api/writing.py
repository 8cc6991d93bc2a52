"""Writing: remember (direct, captured, proposed), edit, forget, restore, purge."""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.errors import InvalidInput

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    from memory_layer.memories import RememberResult
    from memory_layer.models import Memory
    from memory_layer.requests import Place, RememberRequest
    from memory_layer.storage.conn import Conn


@dataclass(frozen=True)
class Remembered:
    """What a write did. ``outcome`` is one of:

    - ``new``: a record was stored (active, pending or a conflict candidate, as the trust
      policy decided for the source);
    - ``reinforced``: the same thing was said again and the existing record counted it;
    - ``duplicate``: a proposal repeating a record that exists; nothing changed;
    - ``change``: a proposed change to ``memory``, queued for review (``item_id``).
    """

    memory: Memory
    outcome: str
    created: bool  # a new record or a new inbox item; False when nothing was added
    similarity: float | None = None
    item_id: str | None = None
    redacted: bool = False
    note: str = ""


def check_reason(reason: Any) -> None:
    """Every door's reason (retire, restore, purge, verify, a review decision, a report)
    within ``memories.MAX_REASON_CHARS``: it is kept in the operations log for good."""
    from memory_layer.memories import MAX_REASON_CHARS, check_length

    check_length("reason", reason, MAX_REASON_CHARS)


def is_proposal(source: str) -> bool:
    """Agents over MCP only ever propose (trust.policy): their writes go to review."""
    from memory_layer.trust.policy import source_kind

    return source_kind(source) == "mcp"


def check_memory_input(
    text: str,
    *,
    config: dict[str, Any],
    category: str = "general",
    tags: Any = None,
    confidence: float | None = None,
) -> str:
    """Validate a write before anything slow (the embedding model) is loaded; returns
    the text as it would be checked. Raises ``InvalidInput`` with how to fix it."""
    from memory_layer.memories import check_confidence, check_text, clean_tags
    from memory_layer.models import check_category

    checked = check_text(text, int(config["remember"]["max_chars"]))
    check_category(category)
    clean_tags(tags)
    if confidence is not None:
        check_confidence(confidence)
    return checked


def remember(
    db: Conn,
    text: str,
    *,
    config: dict[str, Any],
    source: str = "cli",
    category: str = "general",
    project: str | None = None,
    tags: Any = None,
    confidence: float | None = None,
    scene: str | None = None,
    subject: str | None = None,
    key: str | None = None,
    reason: str | None = None,
    change_of: str | None = None,
    embedder: Any = None,
    now: datetime | None = None,
    dedupe: bool = True,
    origin: str | None = None,
    place: Place | None = None,
) -> Remembered:
    """Store what ``source`` says, under the trust policy: direct writes (the CLI,
    ``/remember``, the dashboard, the mirror), captured ones (``hook:*``) and proposals
    (``mcp:*``, or ``change_of`` a record) all come here.

    The policy decides the status; a record written active is stamped (approver,
    review-by date, checksum) in the same transaction, so every door's writes carry
    the same stamp; a structured fact (``subject`` + ``key``) written with a different
    value becomes a conflict instead of overwriting. ``dedupe=False``: never reinforce an
    existing record instead (an import whose items are distinct by construction).
    ``origin``: the words came from tool output, a file or page, or assistant text
    relaying one (``trust.policy.ORIGINS``); the record keeps it and, by default, waits
    for a person (``trust.external_writes``). ``place``: where the record sits in a
    conversation of its project (``requests.Place``, parsed by the door; no position
    takes the thread's next one); recall lets a turn inherit part of the relevance of
    the turn before it (``retrieval.thread_share``). The same text written again at
    its place changes nothing (outcome ``duplicate``).
    """
    hold = risky_hold(text, source)
    # What a record says, whichever way it is written.
    fields: dict[str, Any] = {
        "config": config,
        "source": source,
        "category": category,
        "project": project,
        "tags": tags,
        "scene": scene,
        "subject": subject,
        "key": key,
        "embedder": embedder,
        "place": place,
    }
    if change_of or is_proposal(source):
        if change_of and is_proposal(source):
            from memory_layer.api.reading import agent_record

            # Before any comparison with the record's text ("already says exactly
            # that" would confirm a withheld record's text).
            change_of = agent_record(db, change_of, config).id
        return _propose(db, text, reason=reason, change_of=change_of, hold=hold, **fields)
    from memory_layer.trust.facts import write

    result = write(
        db,
        text,
        confidence=confidence,
        now=now,
        dedupe=dedupe,
        origin=origin,
        hold=hold,
        **fields,
    )
    return _remembered(result, text)


def _remembered(result: RememberResult, text: str) -> Remembered:
    """What a direct write of ``text`` did, as ``remember`` reports it: a new record, an
    old one reinforced, or the same text at the same place (nothing changed)."""
    if result.unchanged:
        return Remembered(
            result.memory,
            "duplicate",
            False,
            note=f"Already recorded at this place as {result.memory.id}; nothing changed.",
        )
    return Remembered(
        result.memory,
        "new" if result.created else "reinforced",
        result.created,
        similarity=result.similarity,
        # Only a new record's text is what this write stored; a reinforced one keeps its own.
        redacted=result.created and result.memory.text != text.replace("\x00", "").strip(),
    )


def supersede_mentions(db: Conn, memory: Memory, term: str, *, actor: str) -> list[str]:
    """Retire the active records of ``memory``'s project that tell agents to use ``term``,
    now that ``memory`` (a changed rule: "use Vitest instead of Jest") replaces them.

    Through the supersede machinery: each retired record's history names ``memory`` as
    what superseded it, and ``restore`` brings it back. Only records written by capture
    or by the same kind of source are touched: a person's own note is never retired by
    something a hook inferred. Returns the retired ids."""
    from memory_layer.capture.reversal import says_to_use
    from memory_layer.storage.records import active_in_project, transaction
    from memory_layer.trust.policy import source_kind
    from memory_layer.trust.verify import retire_superseded

    term = term.strip().lower()
    if not term or memory.status != "active":
        return []
    retired: list[str] = []
    with transaction(db):
        for old in active_in_project(db, memory.project):
            if old.id == memory.id or source_kind(old.source) != source_kind(memory.source):
                continue
            if says_to_use(old.text, term, old.category):
                retire_superseded(db, old, by=memory.id, actor=actor)
                retired.append(old.id)
    return retired


def risky_hold(text: str, source: str) -> str | None:
    """Why a write must wait for a person although the policy would trust its source:
    a risky instruction (``trust.risky``) in text no person wrote (hooks, the model
    pass, agents). A person's own write (CLI, /remember, dashboard) is theirs to make."""
    from memory_layer.trust.policy import is_automatic

    if not is_automatic(source):
        return None
    from memory_layer.inert import for_model
    from memory_layer.trust.risky import risky_instruction

    # Judged as the model will read it: invisible characters (cu\u200brl | sh) are
    # removed at injection, so they must not hide an instruction from this check.
    return risky_instruction(for_model(text))


def _propose(
    db: Conn,
    text: str,
    *,
    change_of: str | None,
    hold: str | None,
    reason: str | None,
    **fields: Any,
) -> Remembered:
    from memory_layer.storage.records import get_memory
    from memory_layer.trust.quality import propose_record

    if change_of and hold:
        # A change proposal keeps one reason: the reviewer reads the hold beside the agent's.
        reason = "; ".join(part for part in (reason, hold) if part)
    done = propose_record(db, text, memory_id=change_of, reason=reason, hold=hold, **fields)
    memory = get_memory(db, done["memory_id"])
    outcome = {"new": "new", "duplicate": "duplicate", "change": "change"}[done["kind"]]
    return Remembered(
        memory,
        outcome,
        bool(done["created"]),
        item_id=done["item_id"],
        redacted=bool(done.get("redacted")),
        note=done["note"],
    )


def edit(
    db: Conn,
    memory_id: str,
    *,
    config: dict[str, Any],
    actor: str,
    text: str | None = None,
    category: str | None = None,
    tags: Any = None,
    confidence: float | None = None,
    embedder: Any = None,
    vouch_as: str | None = None,
    vouch: bool = True,
    expect: Callable[[Memory], None] | None = None,
    action: str = "edit",
    context: dict[str, Any] | None = None,
) -> Memory:
    """Change a record (the operations log keeps the old values). A new text written
    by a source the trust policy trusts (``vouch_as``, else ``actor``) is vouched for as
    that source's own write; a tags- or confidence-only change vouches for nothing, so
    a text waiting for review stays withheld until someone reviews it. ``expect`` sees
    the record under the write lock first and raises to refuse a stale change (an
    edit form opened before another door saved). ``vouch=False``: a change from
    outside memory-layer (the Markdown mirror) vouches for nothing, whoever wrote it;
    the record is withheld from agents until a person verifies it."""
    from memory_layer.memories import edit as change
    from memory_layer.storage.records import get_memory, transaction
    from memory_layer.trust.verify import verify_if_trusted

    with transaction(db):
        current = get_memory(db, memory_id)
        refuse_team_change(current, "edited")
        if expect is not None:
            expect(current)
        memory = change(
            db,
            memory_id,
            config=config,
            actor=actor,
            text=text,
            category=category,
            tags=tags,
            confidence=confidence,
            embedder=embedder,
            action=action,
            context=context,
        )
        if text is not None and vouch:
            memory = verify_if_trusted(db, memory.id, source=vouch_as or actor, config=config)
    return memory


def refuse_team_change(memory: Memory, done: str) -> None:
    """A team memory is the team's reviewed truth, mirrored read-only: changing it
    here would make this device disagree with every other one. Say how to change it."""
    server = memory.extra.get("team_server")
    if server:
        raise InvalidInput(
            f"{memory.id} is a team memory from {server}; it cannot be {done} locally. "
            f"Propose a change with `memory-layer team propose {memory.id[:8]} \"new text\"`,"
            f" or dispute it with `memory-layer team dispute {memory.id[:8]} --reason ...`."
        )


def forget(db: Conn, memory_id: str, *, actor: str = "cli", reason: str | None = None) -> Memory:
    """Retire a record: withheld everywhere, restorable."""
    from memory_layer.memories import forget as retire
    from memory_layer.storage.records import get_memory

    check_reason(reason)
    refuse_team_change(get_memory(db, memory_id), "forgotten")
    return retire(db, memory_id, actor=actor, reason=reason)


def restore(db: Conn, memory_id: str, *, actor: str = "cli", reason: str | None = None) -> Memory:
    """Make a withheld record active again; a fact's value comes back only through
    conflict resolution, never as a second truth."""
    from memory_layer.memories import ACTIVE, set_status
    from memory_layer.storage.records import get_memory, transaction
    from memory_layer.trust.facts import check_restorable

    check_reason(reason)
    with transaction(db):
        current = get_memory(db, memory_id)
        refuse_team_change(current, "restored")
        if current.status == ACTIVE:
            raise InvalidInput(f"Memory {current.id} is already active.")
        check_restorable(db, current)
        return set_status(db, current.id, ACTIVE, actor=actor, reason=reason, action="restore")


def purge(db: Conn, memory_id: str, *, actor: str, reason: str | None = None) -> Memory:
    """Delete a record for good (the operations log keeps what it was). A team memory
    only once it is retired here (withdrawn by the team, or never wanted again)."""
    from memory_layer.storage.records import delete_memory, get_memory

    current = get_memory(db, memory_id)
    if current.status != "retired":
        refuse_team_change(current, "purged")

    check_reason(reason)
    return delete_memory(db, memory_id, actor=actor, context={"reason": reason} if reason else None)


def remember_record(
    db: Conn, request: RememberRequest, *, config: dict[str, Any], embedder: Any
) -> dict[str, Any]:
    """`memory-layer remember` whichever process answers it (the CLI itself or the warm
    engine): the stored (or reinforced) record with what happened to it."""
    from memory_layer.project import project_for

    if request.is_global and request.project:
        raise InvalidInput("Use either --project or --global, not both.")
    done = remember(
        db,
        request.text,
        config=config,
        source=request.source,
        category=request.category,
        project=None if request.is_global else request.project or project_for(request.cwd),
        tags=list(request.tags),
        confidence=request.confidence,
        scene=request.scene,
        subject=request.subject,
        key=request.key,
        embedder=embedder,
        place=request.place,
    )
    return {
        **done.memory.to_dict(),
        "created": done.created,
        "outcome": done.outcome,
        "similarity": done.similarity,
        "redacted": done.redacted,
    }
