"""The memory record and the vocabulary around it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memory_layer.errors import InvalidInput, UnknownCategory
from memory_layer.frozen import Frozen, field

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CATEGORIES: tuple[str, ...] = (
    "troubleshooting",
    "gotcha",
    "decision",
    "pattern",
    "convention",
    "architecture",
    "command",
    "workaround",
    "preference",
    "dependency",
    "environment",
    "coding_style",
    "tool_preference",
    "context",
    "todo",
    "general",
)

# Statuses the core knows. Later layers (review, conflicts) add their own; the
# single place that decides what agents may see is retrieval.visibility.
ACTIVE = "active"
RETIRED = "retired"
# Every status a record can hold, those of the trust layer included (its names are
# trust.visibility's; a test holds the two lists together). Filters refuse anything
# else instead of silently matching nothing.
STATUSES: tuple[str, ...] = ("active", "pending", "conflict", "disputed", "rejected", "retired")


def check_status(status: str) -> str:
    value = status.strip().lower()
    if value in STATUSES:
        return value
    raise InvalidInput(f"Unknown status '{status}'. Choose one of: {', '.join(STATUSES)}.")


def check_category(category: str) -> str:
    value = category.strip().lower().replace("-", "_").replace(" ", "_")
    if value in CATEGORIES:
        return value
    import difflib  # only for the error message: every hook imports this module

    near = difflib.get_close_matches(value, CATEGORIES, n=1, cutoff=0.5)
    hint = f" Did you mean '{near[0]}'?" if near else ""
    raise UnknownCategory(
        f"Unknown category '{category}'.{hint} Choose one of: {', '.join(CATEGORIES)}."
    )


def utcnow() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(value: str) -> datetime:
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def stamp(value: str | datetime | None) -> str | None:
    """Any tracker's time as our ISO form, so times from hooks, Beads and the usage
    table compare correctly as text."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return iso(value)
    try:
        return iso(parse_time(str(value)))
    except ValueError:
        raise InvalidInput(f"Cannot read the time {value!r}; use ISO 8601.") from None


def now_stamp() -> str:
    return iso(utcnow())


# ``Frozen``, not a dataclass: every hook process imports this module (for ``iso`` and
# the categories), and ``dataclasses`` with ``inspect`` costs it several milliseconds.
class Memory(Frozen):
    id: str
    text: str
    category: str
    project: str | None
    tags: tuple[str, ...]
    source: str
    confidence: float
    outcome_score: float
    success_count: int
    failure_count: int
    use_count: int
    last_used_at: str | None
    proven_at: str | None
    status: str
    created_at: str
    updated_at: str
    embedding_model: str | None = None
    rowid: int = 0
    # Columns added by later migrations, kept so every layer sees the whole row.
    extra: dict[str, Any] = field(default_factory=dict)
    _not_compared = frozenset({"rowid", "extra"})

    @property
    def scope(self) -> str:
        return "global" if self.project is None else "project"

    def to_dict(self) -> dict[str, Any]:
        data = self.as_dict()
        data.pop("rowid")
        extra = data.pop("extra")
        data["tags"] = list(self.tags)
        data["scope"] = self.scope
        data.update(extra)
        return data


_BASE_FIELDS = {
    "id",
    "text",
    "category",
    "project",
    "tags",
    "source",
    "confidence",
    "outcome_score",
    "success_count",
    "failure_count",
    "use_count",
    "last_used_at",
    "proven_at",
    "status",
    "created_at",
    "updated_at",
    "embedding_model",
}


def memory_from_row(row: dict[str, Any]) -> Memory:
    tags = row.get("tags") or "[]"
    extra = {
        key: value
        for key, value in row.items()
        if key not in _BASE_FIELDS and key not in {"rowid", "embedding", "content_hash"}
    }
    return Memory(
        id=row["id"],
        text=row["text"],
        category=row["category"],
        project=row["project"],
        tags=tuple(json.loads(tags) if isinstance(tags, str) else tags),
        source=row["source"],
        confidence=float(row["confidence"]),
        outcome_score=float(row["outcome_score"]),
        success_count=int(row["success_count"]),
        failure_count=int(row["failure_count"]),
        use_count=int(row["use_count"]),
        last_used_at=row["last_used_at"],
        proven_at=row.get("proven_at"),
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        embedding_model=row.get("embedding_model"),
        rowid=int(row.get("rowid") or 0),
        extra=extra,
    )
