"""Conversation order: the reply to the turn a query repeats is what it asks for.

In a conversation the answer is usually the turn after the one whose words the question
repeats ("How often do you all work out together?" finds "Do you work out together?"; the
answer is the reply, "Three times a week."), and the reply shares few of the question's
words. A memory stored as a turn of a thread (``thread``, ``position``; migration m100)
therefore gets ``retrieval.thread_share`` of its predecessor's similarity when that is
more than its own. Measured on LoCoMo through the CLI's use case (benchmarks/RESULTS.md):
R@10 over all 10 conversations 0.672 without the rule; the share was chosen on
conversations 0-4, the others held out.

Bounded by construction: a reply inherits less than its predecessor has (the share is
under 1), from its own predecessor only (never along a chain), and only from a
predecessor the same recall scored (in scope, visible to the caller): a weak match is
lifted only to below the match it answers, and a withheld turn lends nothing. Memories
without a thread are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.storage.records import memories_by_rowid, successor_rowids

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time); this module is on the UserPromptSubmit hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from memory_layer.models import Memory
    from memory_layer.storage.conn import Conn


def place(memory: Memory) -> tuple[str, int] | None:
    """(thread, position) of a turn of a conversation, else None."""
    thread = memory.extra.get("thread")
    position = memory.extra.get("position")
    if thread is None or position is None:
        return None
    return str(thread), int(position)


def places(memories: Iterable[Memory]) -> list[tuple[str, int]]:
    """The places of those memories that are turns of a conversation."""
    return [p for m in memories if (p := place(m)) is not None]


def add_successors(db: Conn, memories: dict[int, Memory], lenders: Iterable[int]) -> list[int]:
    """Add to ``memories`` the turn after each of ``lenders`` (rowids in ``memories``)
    that is a turn of a conversation, and return the rowids added: the reply may share
    no word with the query and be far from it in meaning, yet be what it asks for. One
    indexed query; none at all when no lender has a thread."""
    wanted = places(memories[r] for r in lenders)
    if not wanted:
        return []
    more = [r for r in successor_rowids(db, wanted) if r not in memories]
    if more:
        memories.update(memories_by_rowid(db, more))
    return more


@dataclass(frozen=True)
class Inherited:
    """What a reply took from the turn before it (shown by ``--explain``)."""

    follows: str  # the predecessor's id
    share: float
    predecessor_similarity: float
    own_similarity: float

    @property
    def similarity(self) -> float:
        return self.share * self.predecessor_similarity

    def explain(self) -> dict[str, Any]:
        return {
            "follows": self.follows,
            "share": self.share,
            "predecessor_similarity": round(self.predecessor_similarity, 6),
            "own_similarity": round(self.own_similarity, 6),
        }


def inherit(
    memories: Mapping[int, Memory], similarity: Mapping[int, float], share: float
) -> dict[int, Inherited]:
    """rowid -> what it inherits, for each scored turn whose predecessor (same thread,
    position - 1) is scored too and gives it more than its own similarity. Read from
    the own similarities only, so nothing inherits along a chain."""
    if share <= 0:
        return {}
    at: dict[tuple[str, int], int] = {}
    for rowid in similarity:
        where = place(memories[rowid])
        if where is not None:
            at[where] = rowid
    found: dict[int, Inherited] = {}
    for (thread, position), rowid in at.items():
        before = at.get((thread, position - 1))
        if before is None:
            continue
        lent = share * similarity[before]
        if lent > similarity[rowid]:
            found[rowid] = Inherited(
                memories[before].id, share, similarity[before], similarity[rowid]
            )
    return found
