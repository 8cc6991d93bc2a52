"""The plain record writes under the use cases: store or reinforce, edit, retire.

Doors never call these directly: ``memory_layer.api`` wraps them with the trust
policy (stamps, conflicts, review) and the checks that span layers (restoring a
fact's value). Nothing here imports the trust layer, which builds on this module."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime

from memory_layer.errors import InvalidInput
from memory_layer.models import (
    ACTIVE,
    RETIRED,
    Memory,
    check_category,
    iso,
    parse_time,
    utcnow,
)
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import (
    at_place,
    find_by_hash,
    insert_memory,
    memories_by_rowid,
    memory_exists,
    thread_end,
    transaction,
    update_memory,
)
from memory_layer.storage.textindex import normalise_for_hash

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.requests import Place


@dataclass(frozen=True)
class RememberResult:
    memory: Memory
    created: bool  # False: an existing near-duplicate was reinforced instead
    similarity: float | None = None  # cosine to the reinforced memory, when by vector
    # The same turn was already at its place (a re-run import, a retried write): the
    # record there is returned unchanged, nothing reinforced.
    unchanged: bool = False


def new_id() -> str:
    # What secrets.token_hex(8) returns (os.urandom underneath), without importing
    # secrets: it pulls in random, hmac and hashlib, ~8 ms on every capturing hook.
    return os.urandom(8).hex()


def require_text(text: Any) -> str:
    """The text stripped of NULs and outer space; refuses a non-string, non-UTF-8 or
    empty text (what needs no settings to judge, so a door can refuse it first)."""
    if not isinstance(text, str):
        raise InvalidInput("Memory text must be a string.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            "Memory text is not valid UTF-8. Re-save the input as UTF-8 and try again."
        ) from None
    text = text.replace("\x00", "").strip()
    if not text:
        raise InvalidInput("Memory text is empty. Write what should be remembered.")
    return text


def check_text(text: Any, max_chars: int) -> str:
    text = require_text(text)
    if len(text) > max_chars:
        raise InvalidInput(
            f"Memory text is {len(text)} characters; the limit is {max_chars} "
            "(remember.max_chars in config.yaml). Split it into smaller, specific memories."
        )
    return text


def check_confidence(value: float) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"Confidence must be a number from 0 to 1, got {value!r}.") from None
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"Confidence must be from 0 to 1, got {value}.")
    return value


# Tags are labels for filtering, not a second text: bounded so a pasted blob (or an
# agent's) cannot bloat every listing and export.
MAX_TAG_CHARS = 100
MAX_TAGS = 50
# Every other field a writer supplies is bounded too (the text by remember.max_chars):
# far above any real subject, key, scene, project id, source name or reason, far below
# what an agent filing 1 MB reasons could pile into the inbox and the operations log.
MAX_SUBJECT_CHARS = 200
MAX_KEY_CHARS = 100
MAX_SCENE_CHARS = 64
MAX_PROJECT_CHARS = 500
MAX_SOURCE_CHARS = 100
MAX_REASON_CHARS = 2000
def check_length(name: str, value: Any, limit: int) -> Any:
    """``value`` unchanged, unless it is a string longer than ``limit`` characters."""
    if isinstance(value, str) and len(value) > limit:
        raise InvalidInput(
            f"The {name} is {len(value)} characters; the limit is {limit}. Shorten it "
            "(details belong in the memory's text)."
        )
    return value


def clean_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = tags.split(",")
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInput(f"Tags must be strings, got {tag!r}.")
        tag = tag.strip()
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInput(
                f"A tag is {len(tag)} characters; the limit is {MAX_TAG_CHARS}. "
                f"Use short labels (put details in the text): {tag[:40]!r}…"
            )
        if tag and tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"{len(out)} tags; the limit is {MAX_TAGS}. Keep the ones you filter by.")
    return out


def _near_duplicate(
    db: Conn, vector: Any, model_id: str, project: str | None, threshold: float
) -> tuple[Memory, float] | None:
    from memory_layer.retrieval.vectors import vector_index

    index = vector_index(db, model_id, len(vector))
    hits = index.search(vector, projects=[project], limit=1)
    if not hits or hits[0][1] < threshold:
        return None
    rowid, cosine = hits[0]
    memory = memories_by_rowid(db, [rowid]).get(rowid)
    return (memory, cosine) if memory is not None else None


def _near(
    db: Conn, vector: Any, model_id: str, project: str | None, settings: dict[str, Any]
) -> tuple[Memory, float, str] | None:
    """The active memory in the same scope whose vector is a near-duplicate of this one."""
    near = _near_duplicate(db, vector, model_id, project, float(settings["duplicate_threshold"]))
    if near is None:
        return None
    return near[0], near[1], f"near-duplicate (cosine {near[1]:.3f})"


def reinforce(
    db: Conn,
    memory: Memory,
    *,
    source: str,
    confidence: float,
    tags: list[str],
    now: datetime,
    reason: str,
) -> Memory:
    """The same thing said again: count it as a use and as fresh proof of usefulness."""
    merged = list(memory.tags) + [t for t in tags if t not in memory.tags]
    return update_memory(
        db,
        memory.id,
        {
            "use_count": memory.use_count + 1,
            "proven_at": iso(now),
            "confidence": max(memory.confidence, confidence),
            "tags": merged,
        },
        actor=source,
        action="reinforce",
        context={"reason": reason},
    )


def remember(
    db: Conn,
    text: str,
    *,
    config: dict[str, Any],
    category: str = "general",
    project: str | None = None,
    tags: Any = None,
    source: str = "cli",
    confidence: float | None = None,
    memory_id: str | None = None,
    created_at: str | None = None,
    status: str = ACTIVE,
    embedder: Any = None,
    now: datetime | None = None,
    dedupe: bool = True,
    extra: dict[str, Any] | None = None,
    place: Place | None = None,
) -> RememberResult:
    """Store a memory, or reinforce an existing near-duplicate in the same scope.
    ``place``: a turn of a conversation of ``project``, stored at its position (the
    thread's next one when None) and never merged with a memory of the same words."""
    settings = config["remember"]
    text = check_text(text, int(settings["max_chars"]))
    from memory_layer.capture.privacy import clean

    text = clean(text)  # <private> spans and secrets never reach the database
    if not text.strip():
        raise InvalidInput("Nothing is left to remember once <private> parts are removed.")
    category = check_category(category)
    tag_list = clean_tags(tags)
    conf = check_confidence(settings["default_confidence"] if confidence is None else confidence)
    source = (source or "cli").strip() or "cli"
    now = now or utcnow()
    if created_at is not None:
        try:
            created_at = iso(parse_time(created_at))
        except (TypeError, ValueError):
            raise InvalidInput(
                f"created_at {created_at!r} is not an ISO 8601 time (e.g. 2026-01-31T12:00:00Z)."
            ) from None

    with transaction(db):
        if place is not None:
            placed = _placed(db, text, project, place)
            if isinstance(placed, Memory):
                return RememberResult(placed, created=False, unchanged=True)
            extra = {**(extra or {}), "thread": place.thread, "position": placed}
            dedupe = False  # turns are distinct utterances, even when their words repeat
        vector = None
        identical = find_by_hash(db, text, project) if dedupe else None
        again = (identical, 1.0, "identical text") if identical and identical.status == ACTIVE else None
        if again is None and embedder is not None:
            vector = embedder.embed([text])[0]
            if dedupe:
                again = _near(db, vector, embedder.model_id, project, settings)
        if again is not None:
            existing, similarity, why = again
            memory = reinforce(
                db, existing, source=source, confidence=conf, tags=tag_list, now=now, reason=why
            )
            return RememberResult(memory, created=False, similarity=similarity)
        memory_id = (memory_id or "").strip() or new_id()
        if memory_exists(db, memory_id):
            raise InvalidInput(f"A memory with id '{memory_id}' already exists.")
        stamp = created_at or iso(now)
        values: dict[str, Any] = {
            "id": memory_id,
            "text": text,
            "category": category,
            "project": project,
            "tags": tag_list,
            "source": source,
            "confidence": conf,
            "status": status,
            "created_at": stamp,
            "updated_at": iso(now),
            **(extra or {}),
        }
        if vector is not None:
            from memory_layer.embed import to_blob

            values["embedding"] = to_blob(vector)
            values["embedding_model"] = embedder.model_id
        memory = insert_memory(db, values, actor=source)
    return RememberResult(memory, created=True)


def _placed(db: Conn, text: str, project: str | None, place: Place) -> Memory | int:
    """The position a new memory at ``place`` of ``project`` takes (the thread's next
    free one when it has none), or the active memory already there with this text (the
    same turn written again: a retried write), under the caller's write lock. Any other
    memory there is refused, saying what holds the place and how to go on."""
    if place.position is None:
        end = thread_end(db, project, place.thread)
        return 0 if end is None else end + 1
    there = at_place(db, project, place.thread, place.position)
    if there is None:
        return place.position
    where = f"Position {place.position} of thread {place.thread!r}"
    if normalise_for_hash(there.text) != normalise_for_hash(text):
        raise InvalidInput(
            f"{where} already holds memory {there.id} ({there.status}) with other text. "
            "Leave the position out to add it after the thread's last memory."
        )
    if there.status == ACTIVE:
        return there
    hint = (
        f"bring it back with `memory-layer restore {there.id}`"
        if there.status == RETIRED
        else "decide on it in `memory-layer review`"
    )
    raise InvalidInput(f"{where} holds memory {there.id} ({there.status}) with this text: {hint}.")


def edit(
    db: Conn,
    memory_id: str,
    *,
    config: dict[str, Any],
    actor: str = "cli",
    text: str | None = None,
    category: str | None = None,
    tags: Any = None,
    confidence: float | None = None,
    project: str | None | type[Ellipsis] = ...,
    embedder: Any = None,
    action: str = "edit",
    context: dict[str, Any] | None = None,
) -> Memory:
    """Change a memory; the operations log keeps the old values (as ``action``, with
    ``context``)."""
    changes: dict[str, Any] = {}
    if text is not None:
        from memory_layer.capture.privacy import clean

        changes["text"] = clean(check_text(text, int(config["remember"]["max_chars"])))
    if category is not None:
        changes["category"] = check_category(category)
    if tags is not None:
        changes["tags"] = clean_tags(tags)
    if confidence is not None:
        changes["confidence"] = check_confidence(confidence)
    if project is not ...:
        changes["project"] = project
    if not changes:
        raise InvalidInput(
            "Nothing to change: give a new text, category, tags or confidence "
            "(CLI: --text, --category, --tag, --confidence)."
        )
    if "text" in changes:
        if embedder is not None:
            from memory_layer.embed import to_blob

            changes["embedding"] = to_blob(embedder.embed([changes["text"]])[0])
            changes["embedding_model"] = embedder.model_id
        else:
            # The old vector describes the old text; drop it so `index` re-embeds.
            changes["embedding"] = None
            changes["embedding_model"] = None
    return update_memory(db, memory_id, changes, actor=actor, action=action, context=context)


def set_status(
    db: Conn,
    memory_id: str,
    status: str,
    *,
    actor: str,
    reason: str | None = None,
    action: str | None = None,
) -> Memory:
    context = {"reason": reason} if reason else None
    return update_memory(
        db, memory_id, {"status": status}, actor=actor, action=action or status, context=context
    )


def forget(db: Conn, memory_id: str, *, actor: str = "cli", reason: str | None = None) -> Memory:
    """Retire a memory: withheld from recall and injection, restorable."""
    return set_status(db, memory_id, RETIRED, actor=actor, reason=reason, action="retire")
