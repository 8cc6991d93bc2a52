"""Organisations, users, projects, memberships, devices and tokens on the team server."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg


def create_org(conn: psycopg.Connection, name: str, *, allow_self_review: bool) -> int:
    row = conn.execute(
        "INSERT INTO orgs(name, allow_self_review) VALUES (%s, %s) RETURNING id",
        [name, allow_self_review],
    ).fetchone()
    return int(row[0])


def org_count(conn: psycopg.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM orgs").fetchone()[0])


def allows_self_review(conn: psycopg.Connection, org_id: int) -> bool:
    row = conn.execute("SELECT allow_self_review FROM orgs WHERE id = %s", [org_id]).fetchone()
    return bool(row and row[0])


def create_user(conn: psycopg.Connection, org_id: int, name: str, *, is_admin: bool) -> int:
    row = conn.execute(
        "INSERT INTO users(org_id, name, is_admin) VALUES (%s, %s, %s) "
        "ON CONFLICT (org_id, name) DO UPDATE SET is_admin = users.is_admin OR %s RETURNING id",
        [org_id, name, is_admin, is_admin],
    ).fetchone()
    return int(row[0])


def user_id(conn: psycopg.Connection, org_id: int, name: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM users WHERE org_id = %s AND name = %s", [org_id, name]
    ).fetchone()
    return int(row[0]) if row else None


def is_org_admin(conn: psycopg.Connection, user: int) -> bool:
    row = conn.execute("SELECT is_admin FROM users WHERE id = %s", [user]).fetchone()
    return bool(row and row[0])


def ensure_project(conn: psycopg.Connection, org_id: int, key: str) -> int:
    row = conn.execute(
        "INSERT INTO projects(org_id, key) VALUES (%s, %s) "
        "ON CONFLICT (org_id, key) DO UPDATE SET key = EXCLUDED.key RETURNING id",
        [org_id, key],
    ).fetchone()
    return int(row[0])


def project_id(conn: psycopg.Connection, org_id: int, key: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM projects WHERE org_id = %s AND key = %s", [org_id, key]
    ).fetchone()
    return int(row[0]) if row else None


def org_projects(conn: psycopg.Connection, org_id: int) -> list[int]:
    rows = conn.execute("SELECT id FROM projects WHERE org_id = %s ORDER BY id", [org_id])
    return [int(r[0]) for r in rows.fetchall()]


def set_membership(conn: psycopg.Connection, user: int, project: int, role: str) -> None:
    conn.execute(
        "INSERT INTO memberships(user_id, project_id, role) VALUES (%s, %s, %s) "
        "ON CONFLICT (user_id, project_id) DO UPDATE SET role = EXCLUDED.role",
        [user, project, role],
    )


def role_of(conn: psycopg.Connection, user: int, project: int) -> str | None:
    row = conn.execute(
        "SELECT role FROM memberships WHERE user_id = %s AND project_id = %s", [user, project]
    ).fetchone()
    return row[0] if row else None


def member_projects(conn: psycopg.Connection, user: int) -> list[tuple[int, str, str]]:
    """(project id, key, role) for every project ``user`` belongs to."""
    rows = conn.execute(
        "SELECT p.id, p.key, m.role FROM memberships m JOIN projects p ON p.id = m.project_id "
        "WHERE m.user_id = %s ORDER BY p.key",
        [user],
    ).fetchall()
    return [(int(r[0]), r[1], r[2]) for r in rows]


def ensure_device(conn: psycopg.Connection, user: int, name: str) -> int:
    row = conn.execute(
        "INSERT INTO devices(user_id, name) VALUES (%s, %s) "
        "ON CONFLICT (user_id, name) DO UPDATE SET name = EXCLUDED.name RETURNING id",
        [user, name],
    ).fetchone()
    return int(row[0])


def insert_token(
    conn: psycopg.Connection,
    *,
    user: int,
    device: int | None,
    kind: str,
    digest: str,
    prefix: str,
    scopes: list[str],
    project: int | None,
    expires_at: datetime,
) -> int:
    row = conn.execute(
        "INSERT INTO tokens(user_id, device_id, kind, hash, prefix, scopes, project_id, "
        "expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        [user, device, kind, digest, prefix, scopes, project, expires_at],
    ).fetchone()
    return int(row[0])


def token_owner(
    conn: psycopg.Connection, digest: str, *, touch_every_seconds: float
) -> dict[str, Any] | None:
    """The live token with this hash and its user, or None (unknown, revoked, expired).

    Marks it used (and its device seen) only when that was last written more than
    ``touch_every_seconds`` ago: one statement, and a plain read on most requests
    instead of a row write each (which made the commit rate the ceiling per token)."""
    row = conn.execute(
        "WITH live AS (SELECT t.id, t.kind, t.scopes, t.project_id, t.device_id, "
        "u.id AS uid, u.name, u.org_id, u.is_admin, t.expires_at, "
        "(t.last_used_at IS NULL OR t.last_used_at < now() - make_interval(secs => %s)) "
        "AS due FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = %s "
        "AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())), "
        "touched AS (UPDATE tokens SET last_used_at = now() FROM live "
        "WHERE tokens.id = live.id AND live.due RETURNING tokens.device_id), "
        "seen AS (UPDATE devices SET last_seen_at = now() FROM touched "
        "WHERE devices.id = touched.device_id) "
        "SELECT id, kind, scopes, project_id, device_id, uid, name, org_id, is_admin, "
        "expires_at FROM live",
        [touch_every_seconds, digest],
    ).fetchone()
    if row is None:
        return None
    keys = ("token_id", "kind", "scopes", "project_id", "device_id", "user_id", "user_name")
    return {**dict(zip(keys, row[:7], strict=True)), "org_id": row[7], "is_admin": row[8],
            "expires_at": row[9]}


def revoke_token(conn: psycopg.Connection, token: int, user: int) -> bool:
    cursor = conn.execute(
        "UPDATE tokens SET revoked_at = now() WHERE id = %s AND user_id = %s "
        "AND revoked_at IS NULL",
        [token, user],
    )
    return cursor.rowcount == 1
