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
lifted only to below the match it answers, is listed after it (``after_predecessors``),
and a withheld turn lends nothing. A thread is one conversation of one project (m101):
a turn never lends to the same place of another project's thread. Memories without a
thread are untouched.
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
    from memory_layer.retrieval.scoring import Scored
    from memory_layer.storage.conn import Conn


def place(memory: Memory) -> tuple[str, str, int] | None:
    """(project, thread, position) of a turn of a conversation, else None: a thread is
    one conversation of one project ('' for global memories; migration m101)."""
    thread = memory.extra.get("thread")
    position = memory.extra.get("position")
    if thread is None or position is None:
        return None
    return memory.project or "", str(thread), int(position)


def places(memories: Iterable[Memory]) -> list[tuple[str, str, int]]:
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
    """rowid -> what it inherits, for each scored turn whose predecessor (same project
    and thread, position - 1) is scored too and gives it more than its own similarity.
    Read from the own similarities only, so nothing inherits along a chain."""
    if share <= 0:
        return {}
    at: dict[tuple[str, str, int], int] = {}
    for rowid in similarity:
        where = place(memories[rowid])
        if where is not None:
            at[where] = rowid
    found: dict[int, Inherited] = {}
    for (project, thread, position), rowid in at.items():
        before = at.get((project, thread, position - 1))
        if before is None:
            continue
        lent = share * similarity[before]
        if lent > similarity[rowid]:
            found[rowid] = Inherited(
                memories[before].id, share, similarity[before], similarity[rowid]
            )
    return found


def after_predecessors(ranked: list[Scored]) -> list[Scored]:
    """``ranked`` with each reply that inherited (``explain["thread"]``) moved to right
    after the turn it inherited from, when that turn is ranked too; everything else
    keeps its order. Inheriting less than the predecessor has is not enough: relevance
    bands order memories within ``retrieval.relevance_band`` of each other by the
    blended score, and exploration may put a rival first, so a reply with a category
    boost or more confidence would otherwise be listed before the turn it answers."""
    ranked_ids = {item.memory.id for item in ranked}
    waiting: dict[str, list[Scored]] = {}  # a predecessor's id -> its replies held back
    placed: set[str] = set()
    out: list[Scored] = []
    for item in ranked:
        follows = (item.explain.get("thread") or {}).get("follows")
        if follows in ranked_ids and follows not in placed:
            waiting.setdefault(follows, []).append(item)
            continue
        # A reply may itself lend to the next turn: place the whole chain, in order.
        stack = [item]
        while stack:
            current = stack.pop()
            out.append(current)
            placed.add(current.memory.id)
            stack.extend(reversed(waiting.pop(current.memory.id, [])))
    return out
