"""The operations log in words, for the people reading the dashboard's recent activity.

The log records every change field by field (``listing.summarise`` shows that, for
the history of one memory). A person scanning what happened wants "You (CLI) moved it
from gotcha to convention", not ``category: 'gotcha' → 'convention'``, and not the
approval stamp (checksum, review-by date) that the trust layer writes right after
each trusted write. Those stamps are bookkeeping: folded into the action that caused
them, and counted, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_layer.storage.operations import Operation

# The reasons the trust layer gives when it stamps a write itself (trust/facts.py: a
# trusted writer's new record; trust/verify.py: a trusted edit, a backfilled stamp).
# tests/test_activity_words.py drives those writes, so a reworded reason fails there.
_AUTOMATIC = re.compile(
    r"^(written by .+, which the trust policy trusts|written active by a trusted source; "
    r"stamped|edited by a trusted source)$"
)
# The fields an approval stamp writes.
STAMP_FIELDS = frozenset({"approved_at", "approved_by", "checksum", "review_by", "status"})

_FIXED_WORDS = {
    "reinforce": "wrote it again, which reinforced it",
    "mirror_edit": "edited it in the Markdown mirror",
    "retire": "retired it (withheld everywhere, restorable)",
    "restore": "made it active again",
    "purge": "deleted it for good",
    "verify": "verified it",
    "accept": "accepted it in review",
    "revise": "accepted it in review with a corrected text",
    "reject": "rejected it",
    "accept_change": "accepted a proposed change",
    "revise_change": "accepted a proposed change with a corrected text",
    "accept_proposal": "accepted a proposed change",
    "revise_proposal": "accepted a proposed change with a corrected text",
    "reject_proposal": "rejected a proposed change",
    "propose": "proposed it for review",
    "propose_change": "proposed a change to it",
    "dispute": "disputed it: agents stop receiving it until someone decides",
    "supersede": "replaced it with a newer value of the same fact",
    "conflict_open": "found another value for the same fact: both await a choice",
    "conflict": "recorded it as a competing value of a fact",
    "confirm": "confirmed this value of the fact",
    "conflict_resolve": "settled a conflict between values of a fact",
    "outcome_undo": "took back a task's credit",
    "outcome_restore": "brought it back from sinking",
}


@dataclass(frozen=True)
class Entry:
    """One thing someone did, with the bookkeeping it caused folded in."""

    op: Operation
    who: str
    words: str
    folded: tuple[Operation, ...] = field(default=())

    @property
    def bookkeeping(self) -> str:
        n = len(self.folded)
        if not n:
            return ""
        return f"+ {n} automatic approval stamp{'s' if n > 1 else ''} (checksum, review date)"


def who(actor: str) -> str:
    """An actor id as a person reads it."""
    kind, _, rest = (actor or "").partition(":")
    people = {"cli": "You (CLI)", "web": "You (dashboard)", "user": "You", "slash": "You (/remember)"}
    if actor in people:
        return people[actor]
    if kind == "hook":
        return "LLM extraction" if rest == "llm" else f"Claude Code capture ({rest or 'hook'})"
    if kind == "claude":
        return f"Claude Code session {rest[:8]}" if rest else "Claude Code"
    if kind == "mcp":
        return f"Agent {rest} (MCP)" if rest else "An agent (MCP)"
    if kind == "sync" or actor == "bd":
        return "Beads"
    if actor == "import":
        return "Import"
    return actor or "someone"


def is_bookkeeping(op: Operation) -> bool:
    """An approval stamp the trust layer wrote itself after a trusted write."""
    if op.action != "verify":
        return False
    changed = set(op.new_value or {}) if isinstance(op.new_value, dict) else {"?"}
    return changed <= STAMP_FIELDS and bool(_AUTOMATIC.match(str(op.context.get("reason", ""))))


def _quoted(value: Any, width: int = 60) -> str:
    text = " ".join(str(value).split())
    return "“" + (text if len(text) <= width else text[: width - 1] + "…") + "”"


def _changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    parts: list[str] = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if key == "text":
            parts.append(f"changed the text to {_quoted(after)}")
        elif key == "category":
            parts.append(f"moved it from {before} to {after}")
        elif key == "tags":
            parts.append("set the tags to " + (", ".join(after) if after else "none"))
        elif key == "confidence":
            parts.append(f"set its confidence from {before} to {after}")
        elif key == "status":
            parts.append(f"made it {after} (was {before})")
        elif key not in STAMP_FIELDS and not key.startswith("embedding"):
            parts.append(f"changed {key.replace('_', ' ')}")
    return "; ".join(parts) or "changed it"


def _outcome(op: Operation) -> str:
    old = (op.old_value or {}).get("outcome_score") if isinstance(op.old_value, dict) else None
    new = (op.new_value or {}).get("outcome_score") if isinstance(op.new_value, dict) else None
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        verdict = "a task that succeeded" if new >= old else "a task that failed"
        return f"credited it for {verdict}: outcome {old:+.2f} → {new:+.2f}"
    return "credited it with a task's outcome"


def describe(op: Operation) -> str:
    """What the operation did, in words, with the reason when a person gave one."""
    new = op.new_value if isinstance(op.new_value, dict) else {}
    old = op.old_value if isinstance(op.old_value, dict) else {}
    if op.action == "create":
        words = f"saved it as {new.get('category', 'a memory')}"
        if new.get("status") not in (None, "active"):
            words += f" ({new['status']}: awaiting review)"
    elif op.action == "edit":
        words = _changes(old, new)
    elif op.action == "outcome":
        words = _outcome(op)
    elif op.action in _FIXED_WORDS:
        words = _FIXED_WORDS[op.action]
    else:
        words = op.action.replace("_", " ")
    reason = op.context.get("reason") if op.context else None
    if reason and not _AUTOMATIC.match(str(reason)):
        words += f" — {_quoted(reason, 80)}"
    return words


def fold(ops: Sequence[Operation], limit: int) -> list[Entry]:
    """The newest ``limit`` entries of ``ops`` (newest first): each person's or agent's
    action with the automatic stamps that followed it on the same memory folded in."""
    entries: list[Entry] = []
    last_for: dict[str | None, int] = {}
    for op in sorted(ops, key=lambda o: o.id):
        at = last_for.get(op.memory_id)
        if is_bookkeeping(op) and at is not None:
            host = entries[at]
            entries[at] = Entry(host.op, host.who, host.words, (*host.folded, op))
            continue
        words = "stamped it as approved (automatic)" if is_bookkeeping(op) else describe(op)
        last_for[op.memory_id] = len(entries)
        entries.append(Entry(op, who(op.actor), words))
    return list(reversed(entries))[:limit]
