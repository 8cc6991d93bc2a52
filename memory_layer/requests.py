"""Recall and remember requests, parsed once at the door that received them.

The CLI builds them from its options; the warm engine rebuilds them from the JSON
line the CLI sent (``from_wire``), checking every field's type, so the use case gets
the same frozen value whichever way the request arrived. Cheap to import: the CLI's
fast path loads this and the engine client only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from memory_layer.errors import InvalidInput
from memory_layer.paths import SESSION_ENV

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the CLI's fast path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Longer than any real session id (Claude Code's are UUIDs), short enough to log.
MAX_SESSION_CHARS = 200


def _check_types(cls: type, data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput(f"A {cls.__name__} must be a JSON object.")
    known = _TYPES[cls.__name__]
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise InvalidInput(f"Unknown {cls.__name__} field(s): {', '.join(unknown)}.")
    for name, value in data.items():
        wanted = _TYPES[cls.__name__][name]
        if value is None and name in _REQUIRED[cls.__name__]:
            raise InvalidInput(f"{cls.__name__}.{name} is required.")
        if value is not None and not isinstance(value, wanted):
            raise InvalidInput(f"{cls.__name__}.{name} has the wrong type ({value!r}).")
        numeric = wanted is int or (isinstance(wanted, tuple) and float in wanted)
        if isinstance(value, bool) and numeric:
            raise InvalidInput(f"{cls.__name__}.{name} must be a number, not {value!r}.")
    return data


def clean_session(value: str | None) -> str | None:
    """A session id from the environment or ``--session``: None when absent or blank."""
    value = (value or "").strip()
    if not value:
        return None
    if len(value) > MAX_SESSION_CHARS or not value.isprintable():
        raise InvalidInput(
            f"The session id {value[:40]!r} is not a Claude Code session id; leave "
            f"--session out (or unset {SESSION_ENV})."
        )
    return value


# A thread names a conversation or session (Claude Code's session ids are UUIDs); a
# position orders its turns. SQLite integers are 64-bit.
MAX_THREAD_CHARS = 200
MAX_POSITION = 2**62


@dataclass(frozen=True)
class Place:
    """Where a memory sits in a conversation of its project: ``thread`` (a chat log's or
    session's id) and ``position`` (its turn number; None: after the thread's last
    memory, resolved when it is stored). Valid by construction, so the layers below the
    door that parsed it (``Place.parse``) never check it again."""

    thread: str
    position: int | None = None

    def __post_init__(self) -> None:
        thread = self.thread
        if not isinstance(thread, str):
            raise InvalidInput("The thread must be a string (a conversation or session id).")
        if not thread.strip():
            raise InvalidInput(
                "The thread id is blank: give the id of the conversation (e.g. --thread "
                "chat-7), or leave the thread out."
            )
        if len(thread.strip()) > MAX_THREAD_CHARS:
            raise InvalidInput(
                f"The thread id is too long ({len(thread.strip())} characters, at most "
                f"{MAX_THREAD_CHARS})."
            )
        if not thread.strip().isprintable():
            raise InvalidInput("The thread id holds control characters; use a plain id.")
        object.__setattr__(self, "thread", thread.strip())
        position = self.position
        if position is None:
            return
        if isinstance(position, bool) or not isinstance(position, int):
            raise InvalidInput(f"The position must be a whole number, not {position!r}.")
        if not 0 <= position <= MAX_POSITION:
            raise InvalidInput(f"The position must be from 0 to {MAX_POSITION}, not {position}.")

    @classmethod
    def parse(cls, thread: Any, position: Any) -> Place | None:
        """A door's thread and position (either may be absent: None) as a place, or None
        for a memory outside any thread. A position needs a thread."""
        if thread is None:
            if position is not None:
                raise InvalidInput(
                    "A position needs a thread: give the id of the conversation it is a "
                    "turn of too."
                )
            return None
        return cls(thread, position)

    def at(self, position: int) -> Place:
        """The same thread at ``position`` (a resolved place)."""
        return Place(self.thread, position)


@dataclass(frozen=True)
class RecallRequest:
    """`memory-layer recall`: what to find, where, and for whom."""

    query: str
    limit: int | None = None  # None: retrieval.default_limit
    project: str | None = None  # None: the project of ``cwd``
    cwd: str | None = None
    all_projects: bool = False
    no_global: bool = False
    category: str | None = None
    scene: str | None = None
    keyword_only: bool = False
    include_sinking: bool = False
    audience: str = "person"
    session_id: str | None = None

    @classmethod
    def from_wire(cls, data: Any) -> RecallRequest:
        data = dict(_check_types(cls, data))
        data["session_id"] = clean_session(data.get("session_id"))
        return cls(**data)

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RememberRequest:
    """`memory-layer remember`: the text and everything said about it."""

    text: str
    category: str = "general"
    project: str | None = None
    cwd: str | None = None
    is_global: bool = False
    tags: tuple[str, ...] = ()
    source: str = "cli"
    confidence: float | None = None
    scene: str | None = None
    subject: str | None = None
    key: str | None = None
    # Where the turn sits in a conversation; on the wire as "thread" and "position".
    place: Place | None = None

    @classmethod
    def from_wire(cls, data: Any) -> RememberRequest:
        data = dict(_check_types(cls, data))
        tags = data.get("tags") or ()
        if not all(isinstance(tag, str) for tag in tags):
            raise InvalidInput("RememberRequest.tags must be strings.")
        data["tags"] = tuple(tags)
        if isinstance(data.get("confidence"), int):
            data["confidence"] = float(data["confidence"])
        data["place"] = Place.parse(data.pop("thread", None), data.pop("position", None))
        return cls(**data)

    def to_wire(self) -> dict[str, Any]:
        wire = asdict(self)
        wire["tags"] = list(self.tags)
        place = wire.pop("place")
        wire.update(place or {})
        # Unset fields are left out: an engine started before a field existed (same
        # version, older checkout) still answers every request that does not use it.
        return {name: value for name, value in wire.items() if value is not None}


# Fields a request cannot do without (the rest may be null or left out).
_REQUIRED = {
    "RecallRequest": frozenset({"query", "audience"}),
    "RememberRequest": frozenset({"text", "category", "source"}),
}
_TYPES: dict[str, dict[str, type | tuple[type, ...]]] = {
    "RecallRequest": {
        "query": str,
        "limit": int,
        "project": str,
        "cwd": str,
        "all_projects": bool,
        "no_global": bool,
        "category": str,
        "scene": str,
        "keyword_only": bool,
        "include_sinking": bool,
        "audience": str,
        "session_id": str,
    },
    "RememberRequest": {
        "text": str,
        "category": str,
        "project": str,
        "cwd": str,
        "is_global": bool,
        "tags": (list, tuple),
        "source": str,
        "confidence": (int, float),
        "scene": str,
        "subject": str,
        "key": str,
        "thread": str,
        "position": int,
    },
}
