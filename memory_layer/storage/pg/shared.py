"""Team memories, proposals, the team operations log, disputes and outcome events.

Writes that add to the log first lock the project's row: ``ops.seq`` then grows in
commit order within a project, so a device that pulled up to seq N never misses a
later-committed op with a smaller seq (clients keep one cursor per project).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

_MEMORY_COLUMNS = (
    "id", "project_id", "text", "category", "subject", "fact_key", "status", "revision",
    "author_id", "reviewer_id", "created_at", "updated_at",
)
_PROPOSAL_COLUMNS = (
    "id", "client_key", "project_id", "memory_id", "base_revision", "text", "category",
    "subject", "fact_key", "reason", "author_id", "token_kind", "status", "conflicts_with",
    "decided_by", "decided_at", "decision_reason", "created_at",
)
_MEMORY_SELECT = "SELECT " + ", ".join("m." + c for c in _MEMORY_COLUMNS) + " FROM memories m"
_PROPOSAL_SELECT = "SELECT " + ", ".join("p." + c for c in _PROPOSAL_COLUMNS) + " FROM proposals p"


def _memory(row: Any) -> dict[str, Any]:
    return dict(zip(_MEMORY_COLUMNS, row, strict=True))


def _proposal(row: Any) -> dict[str, Any]:
    return dict(zip(_PROPOSAL_COLUMNS, row, strict=True))


def lock_project(conn: psycopg.Connection, project: int) -> None:
    conn.execute("SELECT id FROM projects WHERE id = %s FOR UPDATE", [project])


def proposal_by_client_key(
    conn: psycopg.Connection, client_key: str, author: int
) -> dict[str, Any] | None:
    """The author's own earlier proposal with this key (never someone else's)."""
    row = conn.execute(
        _PROPOSAL_SELECT + " WHERE p.client_key = %s AND p.author_id = %s", [client_key, author]
    ).fetchone()
    return _proposal(row) if row else None


def insert_proposal(conn: psycopg.Connection, values: dict[str, Any]) -> dict[str, Any]:
    columns = [c for c in _PROPOSAL_COLUMNS if c in values]
    from psycopg import sql

    statement = sql.SQL("INSERT INTO proposals ({}) VALUES ({}) RETURNING {}").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(columns)),
        sql.SQL(", ").join(map(sql.Identifier, _PROPOSAL_COLUMNS)),
    )
    return _proposal(conn.execute(statement, [values[c] for c in columns]).fetchone())


def get_proposal(conn: psycopg.Connection, proposal_id: str, *, lock: bool = False) -> Any:
    suffix = " FOR UPDATE" if lock else ""
    row = conn.execute(_PROPOSAL_SELECT + " WHERE p.id = %s" + suffix, [proposal_id]).fetchone()
    return _proposal(row) if row else None


def open_proposals(conn: psycopg.Connection, projects: list[int]) -> list[dict[str, Any]]:
    rows = conn.execute(
        _PROPOSAL_SELECT + " WHERE p.status = 'open' AND p.project_id = ANY(%s) "
        "ORDER BY p.created_at",
        [projects],
    ).fetchall()
    return [_proposal(r) for r in rows]


def open_proposal_count(conn: psycopg.Connection, author: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM proposals WHERE author_id = %s AND status = 'open'", [author]
    ).fetchone()
    return int(row[0])


def decide_proposal(
    conn: psycopg.Connection, proposal_id: str, *, status: str, by: int, reason: str | None
) -> None:
    conn.execute(
        "UPDATE proposals SET status = %s, decided_by = %s, decided_at = now(), "
        "decision_reason = %s WHERE id = %s",
        [status, by, reason, proposal_id],
    )


def mark_stale(conn: psycopg.Connection, memory_id: str, revision: int, by: int) -> int:
    """Open change proposals made against an older revision of ``memory_id`` become stale."""
    cursor = conn.execute(
        "UPDATE proposals SET status = 'stale', decided_by = %s, decided_at = now(), "
        "decision_reason = 'the memory changed since; propose again against the new text' "
        "WHERE status = 'open' AND memory_id = %s AND base_revision < %s",
        [by, memory_id, revision],
    )
    return cursor.rowcount


def get_memory(conn: psycopg.Connection, memory_id: str, *, lock: bool = False) -> Any:
    suffix = " FOR UPDATE" if lock else ""
    row = conn.execute(_MEMORY_SELECT + " WHERE m.id = %s" + suffix, [memory_id]).fetchone()
    return _memory(row) if row else None


def active_fact(
    conn: psycopg.Connection, project: int, subject: str, fact_key: str
) -> dict[str, Any] | None:
    row = conn.execute(
        _MEMORY_SELECT + " WHERE m.project_id = %s AND m.subject = %s AND m.fact_key = %s "
        "AND m.status <> 'withdrawn' ORDER BY m.updated_at DESC LIMIT 1",
        [project, subject, fact_key],
    ).fetchone()
    return _memory(row) if row else None


def insert_memory(conn: psycopg.Connection, values: dict[str, Any]) -> None:
    conn.execute(
        "INSERT INTO memories(id, project_id, text, category, subject, fact_key, status, "
        "author_id, reviewer_id, embedding) VALUES (%s, %s, %s, %s, %s, %s, 'active', %s, %s, "
        "%s::vector)",
        [
            values["id"], values["project_id"], values["text"], values["category"],
            values.get("subject"), values.get("fact_key"), values["author_id"],
            values["reviewer_id"], values.get("embedding"),
        ],
    )


def revise_memory(
    conn: psycopg.Connection, memory_id: str, *, text: str, category: str, reviewer: int,
    embedding: str | None,
) -> int:
    row = conn.execute(
        "UPDATE memories SET text = %s, category = %s, reviewer_id = %s, embedding = "
        "%s::vector, revision = revision + 1, updated_at = now() WHERE id = %s "
        "RETURNING revision",
        [text, category, reviewer, embedding, memory_id],
    ).fetchone()
    return int(row[0])


def set_status(conn: psycopg.Connection, memory_id: str, status: str) -> int:
    """A new status is a new revision too, so stale changes are caught across it."""
    row = conn.execute(
        "UPDATE memories SET status = %s, revision = revision + 1, updated_at = now() "
        "WHERE id = %s RETURNING revision",
        [status, memory_id],
    ).fetchone()
    return int(row[0])


def append_op(
    conn: psycopg.Connection, *, project: int, memory_id: str, kind: str, revision: int,
    actor: int,
) -> int:
    row = conn.execute(
        "INSERT INTO ops(project_id, memory_id, kind, revision, actor_id) "
        "VALUES (%s, %s, %s, %s, %s) RETURNING seq",
        [project, memory_id, kind, revision, actor],
    ).fetchone()
    return int(row[0])


def ops_after(
    conn: psycopg.Connection, project: int, after: int, limit: int
) -> list[dict[str, Any]]:
    """The project's log after ``after``, each op with the memory's current state (a
    device only needs where each memory is now; replaying an op twice is harmless)."""
    rows = conn.execute(
        "SELECT o.seq, o.kind, o.revision, o.at, u.name, r.name, a.name, "
        + ", ".join("m." + c for c in _MEMORY_COLUMNS)
        + " FROM ops o JOIN memories m ON m.id = o.memory_id JOIN users u ON u.id = o.actor_id"
        " JOIN users a ON a.id = m.author_id LEFT JOIN users r ON r.id = m.reviewer_id"
        " WHERE o.project_id = %s AND o.seq > %s ORDER BY o.seq LIMIT %s",
        [project, after, limit],
    ).fetchall()
    out = []
    for row in rows:
        memory = _memory(row[7:])
        memory.update(author=row[6], reviewer=row[5])
        out.append(
            {"seq": row[0], "kind": row[1], "revision": row[2], "at": row[3], "actor": row[4],
             "memory": memory}
        )
    return out


def last_seq(conn: psycopg.Connection, project: int) -> int:
    row = conn.execute(
        "SELECT coalesce(max(seq), 0) FROM ops WHERE project_id = %s", [project]
    ).fetchone()
    return int(row[0])


def dispute_by_client_key(conn: psycopg.Connection, client_key: str) -> Any:
    row = conn.execute(
        "SELECT id, memory_id FROM disputes WHERE client_key = %s", [client_key]
    ).fetchone()
    return row


def insert_dispute(
    conn: psycopg.Connection, *, client_key: str, memory_id: str, user: int, reason: str
) -> int:
    row = conn.execute(
        "INSERT INTO disputes(client_key, memory_id, user_id, reason) VALUES (%s, %s, %s, %s) "
        "RETURNING id",
        [client_key, memory_id, user, reason],
    ).fetchone()
    return int(row[0])


def resolve_disputes(conn: psycopg.Connection, memory_id: str, by: int, resolution: str) -> int:
    cursor = conn.execute(
        "UPDATE disputes SET resolved_at = now(), resolved_by = %s, resolution = %s "
        "WHERE memory_id = %s AND resolved_at IS NULL",
        [by, resolution, memory_id],
    )
    return cursor.rowcount


def insert_outcome(
    conn: psycopg.Connection, *, client_key: str, memory_id: str, user: int, worked: bool
) -> bool:
    """False when this event (by its client key) was already recorded."""
    cursor = conn.execute(
        "INSERT INTO outcome_events(client_key, memory_id, user_id, worked) "
        "VALUES (%s, %s, %s, %s) ON CONFLICT (client_key) DO NOTHING",
        [client_key, memory_id, user, worked],
    )
    return cursor.rowcount == 1


def outcome_counts(conn: psycopg.Connection, memory_ids: list[str]) -> dict[str, list[Any]]:
    """Per memory: [(user id, successes, failures), ...]."""
    rows = conn.execute(
        "SELECT memory_id, user_id, count(*) FILTER (WHERE worked), "
        "count(*) FILTER (WHERE NOT worked) FROM outcome_events WHERE memory_id = ANY(%s) "
        "GROUP BY memory_id, user_id",
        [memory_ids],
    ).fetchall()
    out: dict[str, list[Any]] = {}
    for memory_id, user, worked, failed in rows:
        out.setdefault(memory_id, []).append((int(user), int(worked), int(failed)))
    return out


def keyword_search(
    conn: psycopg.Connection, project: int, query: str, limit: int
) -> list[tuple[str, float]]:
    rows = conn.execute(
        "SELECT id, ts_rank_cd(tsv, q) FROM memories, websearch_to_tsquery('english', %s) q "
        "WHERE project_id = %s AND status = 'active' AND tsv @@ q "
        "ORDER BY 2 DESC LIMIT %s",
        [query, project, limit],
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def vector_search(
    conn: psycopg.Connection, project: int, vector: str, limit: int
) -> list[tuple[str, float]]:
    """Nearest active memories of one project by cosine. With a filter, HNSW alone can
    return fewer rows than asked (the filter runs after the index's candidate list), so
    the scan is iterative (pgvector 0.8+), bounded by hnsw.max_scan_tuples."""
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.execute("SET LOCAL hnsw.ef_search = 100")
        rows = conn.execute(
            "SELECT id, 1 - (embedding <=> %s::vector) FROM memories "
            "WHERE project_id = %s AND status = 'active' AND embedding IS NOT NULL "
            "ORDER BY embedding <=> %s::vector LIMIT %s",
            [vector, project, vector, limit],
        ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def memories_by_id(conn: psycopg.Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    rows = conn.execute(_MEMORY_SELECT + " WHERE m.id = ANY(%s)", [ids]).fetchall()
    return {r[0]: _memory(r) for r in rows}
