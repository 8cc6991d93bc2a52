"""The reads keyword recall runs: FTS5 matches scored by BM25, how many memories hold a
term, the collection's size, and the scope filter they share (with a sample of the
texts in scope).

Read-only queries on ``memories`` and ``memories_fts``; every write, and the index's
text (``textindex.fts_document``), is ``storage.records``'s. Ranking, the caches and
what the numbers mean stay in ``retrieval.search``: this module returns rows. On the
UserPromptSubmit hook path, so it imports nothing but ``storage.conn``.
"""

from __future__ import annotations

from memory_layer.storage.conn import Conn, raw

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _scope_where(
    projects: tuple[str | None, ...] | None,
    statuses: tuple[str, ...],
    category: str | None,
    scenes: tuple[str, ...] | None,
) -> tuple[str, list[Any]]:
    """The WHERE clause on ``memories m`` (with its parameters) of the scope arguments
    the functions below share: ``projects`` None for every project, a None in it for
    global memories; ``statuses`` empty for any status; ``category`` None for any;
    ``scenes`` None for no scene filter, else memories without a scene plus those in
    one of them. Built per call: a few microseconds, and no caller holds SQL."""
    clauses: list[str] = []
    args: list[Any] = []
    if statuses:
        clauses.append("m.status IN (" + ", ".join("?" for _ in statuses) + ")")
        args.extend(statuses)
    if projects is not None:
        named = [p for p in projects if p is not None]
        parts = []
        if named:
            parts.append("m.project IN (" + ", ".join("?" for _ in named) + ")")
            args.extend(named)
        if None in projects:
            parts.append("m.project IS NULL")
        clauses.append("(" + (" OR ".join(parts) or "0") + ")")
    if category:
        clauses.append("m.category = ?")
        args.append(category)
    if scenes is not None:
        marks = ", ".join("?" for _ in scenes)
        clauses.append("(m.scene IS NULL" + (f" OR m.scene IN ({marks})" if marks else "") + ")")
        args.extend(scenes)
    return (" AND ".join(clauses) or "1"), args


def collection_size(db: Conn) -> int:
    """The largest rowid: what IDF and the caches measure the collection by. It reads one
    b-tree leaf where count(*) walks the whole table, and it moves with count(*) closely
    enough (rows are rarely deleted) for a number that only has to be roughly right."""
    return int(raw(db).execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0)


def document_frequency(db: Conn, phrase: str) -> int:
    """How many memories the FTS5 ``phrase`` matches, whatever their status or project."""
    query = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
    return int(raw(db).execute(query, [phrase]).fetchone()[0])


def bm25_matches(
    db: Conn,
    match: str,
    limit: int,
    *,
    projects: tuple[str | None, ...] | None,
    statuses: tuple[str, ...],
    category: str | None = None,
    scenes: tuple[str, ...] | None = None,
) -> dict[int, float]:
    """rowid -> relevance (BM25 negated: positive, larger is better) of the best ``limit``
    memories in scope (``_scope_where``) matching the FTS5 expression ``match``."""
    clause, args = _scope_where(projects, statuses, category, scenes)
    rows = (
        raw(db)
        .execute(
            "SELECT f.rowid, -bm25(memories_fts) AS score FROM memories_fts f "
            "JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? AND "
            + clause
            + " ORDER BY bm25(memories_fts) LIMIT ?",
            [match, *args, limit],
        )
        .fetchall()
    )
    return {int(rowid): float(score) for rowid, score in rows}


def sample_texts(
    db: Conn,
    limit: int,
    *,
    projects: tuple[str | None, ...] | None,
    statuses: tuple[str, ...],
    category: str | None = None,
    scenes: tuple[str, ...] | None = None,
) -> list[str]:
    """The texts of up to ``limit`` memories in scope (``_scope_where``): all of them in
    a small scope, else a fixed pseudo-random spread (a hash of the rowid), so the same
    data always gives the same sample."""
    clause, args = _scope_where(projects, statuses, category, scenes)
    rows = (
        raw(db)
        .execute(
            "SELECT text FROM memories WHERE rowid IN (SELECT m.rowid FROM memories m WHERE "
            + clause
            + " ORDER BY (m.rowid * 2654435761) % 4294967296 LIMIT ?)",
            [*args, limit],
        )
        .fetchall()
    )
    return [str(text) for (text,) in rows]
