"""Requests to join a project of the organisation (table ``join_requests``).

At most one open request per person and project (a partial unique index), so asking
again, or two devices asking at once, finds the same request instead of adding one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

_COLUMNS = (
    "id", "project_id", "user_id", "role", "reason", "status", "granted_role", "decided_by",
    "decided_at", "decision_reason", "created_at",
)
_SELECT = (
    "SELECT " + ", ".join("j." + c for c in _COLUMNS)
    + ", p.key, u.name FROM join_requests j JOIN projects p ON p.id = j.project_id "
    "JOIN users u ON u.id = j.user_id"
)


ASK_ATTEMPTS = 3


def _row(row: Any) -> dict[str, Any]:
    return {**dict(zip(_COLUMNS, row[: len(_COLUMNS)], strict=True)),
            "project": row[-2], "user": row[-1]}


def open_request(
    conn: psycopg.Connection, *, request_id: str, project: int, user: int, role: str,
    reason: str | None,
) -> tuple[dict[str, Any], bool]:
    """The open request of ``user`` for ``project`` (made now unless one waits), and
    whether it was made now. Asking for another role updates the waiting request."""
    # The open request may be decided (approved, denied, settled by an invite) between the
    # insert that saw it and the read below; then ask again, which makes a new one.
    for _attempt in range(ASK_ATTEMPTS):
        made = conn.execute(
            "INSERT INTO join_requests(id, project_id, user_id, role, reason) "
            "VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (project_id, user_id) WHERE status = 'open' DO NOTHING RETURNING id",
            [request_id, project, user, role, reason],
        ).fetchone()
        if made is None:
            conn.execute(
                "UPDATE join_requests SET role = %s, reason = coalesce(%s, reason) "
                "WHERE project_id = %s AND user_id = %s AND status = 'open'",
                [role, reason, project, user],
            )
        row = conn.execute(
            _SELECT + " WHERE j.project_id = %s AND j.user_id = %s AND j.status = 'open'",
            [project, user],
        ).fetchone()
        if row is not None:
            return _row(row), made is not None
    raise psycopg.errors.SerializationFailure(
        "the join request kept being decided while it was asked again; ask once more"
    )


def get(conn: psycopg.Connection, request_id: str, *, lock: bool = False) -> dict[str, Any] | None:
    row = conn.execute(
        _SELECT + " WHERE j.id = %s" + (" FOR UPDATE OF j" if lock else ""), [request_id]
    ).fetchone()
    return _row(row) if row else None


def open_count(conn: psycopg.Connection, user: int) -> int:
    row = conn.execute(
        "SELECT count(*) FROM join_requests WHERE user_id = %s AND status = 'open'", [user]
    ).fetchone()
    return int(row[0])


def waiting_in(conn: psycopg.Connection, projects: list[int]) -> list[dict[str, Any]]:
    """Open requests in these projects, oldest first."""
    if not projects:
        return []
    rows = conn.execute(
        _SELECT + " WHERE j.status = 'open' AND j.project_id = ANY(%s) "
        "ORDER BY j.created_at, j.id",
        [projects],
    ).fetchall()
    return [_row(r) for r in rows]


def of_user(conn: psycopg.Connection, user: int, limit: int = 50) -> list[dict[str, Any]]:
    """The user's own requests, newest first (open and decided)."""
    rows = conn.execute(
        _SELECT + " WHERE j.user_id = %s ORDER BY j.created_at DESC, j.id LIMIT %s",
        [user, limit],
    ).fetchall()
    return [_row(r) for r in rows]


def decide(
    conn: psycopg.Connection, request_id: str, *, status: str, role: str | None, by: int,
    reason: str | None,
) -> None:
    conn.execute(
        "UPDATE join_requests SET status = %s, granted_role = %s, decided_by = %s, "
        "decided_at = now(), decision_reason = %s WHERE id = %s",
        [status, role, by, reason, request_id],
    )


def settle_open(conn: psycopg.Connection, *, user: int, project: int, role: str, by: int) -> None:
    """An invite answered the person's open request: it is approved, with that role."""
    conn.execute(
        "UPDATE join_requests SET status = 'approved', granted_role = %s, decided_by = %s, "
        "decided_at = now(), decision_reason = 'invited' "
        "WHERE user_id = %s AND project_id = %s AND status = 'open'",
        [role, by, user, project],
    )
