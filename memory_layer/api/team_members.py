"""The team server's membership use cases: a member of the organisation asks to join
one of its projects (or for a higher role in it), and that project's admins approve,
with the role they grant, or deny, with a reason the asker sees.

Org admins administer every project: their own "join" is immediate. Agent and CI
tokens never join anything (they act for a person, within what the person may do),
and a token limited to one project cannot ask for another.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from memory_layer.errors import Forbidden, InvalidInput, NotFound, RateLimited
from memory_layer.storage.pg import identity, joins
from memory_layer.team import access
from memory_layer.team.access import Principal
from memory_layer.team.wire import JoinDecision, JoinRequest

if TYPE_CHECKING:
    import psycopg

# Join requests one person may have waiting at once (across projects).
MAX_OPEN_JOIN_REQUESTS = 20
DEFAULT_ROLE = "contributor"
_RANK = {"reader": 0, "contributor": 1, "reviewer": 2, "admin": 3}
_NO_REQUEST = "No join request with that id in the projects you administer."


def _allowed(caller: Principal, role: str) -> list[str]:
    """What this token may do with ``role``: the role's actions the token has scopes for."""
    return sorted(access.ROLES[role] & caller.scopes)


def _member(caller: Principal, key: str, role: str, *, changed: bool) -> dict[str, Any]:
    return {"project": key, "status": "member", "role": role, "changed": changed,
            "token_allows": _allowed(caller, role)}


def ask(conn: psycopg.Connection, caller: Principal, request: JoinRequest) -> dict[str, Any]:
    """Join ``request.project``: a member already (nothing to ask), at once for an org
    admin, else an open request its admins decide (asking again finds the same one)."""
    if caller.kind == access.AGENT:
        raise Forbidden("An agent or CI token cannot join projects; ask with your own "
                        "person token (`memory-layer team join PROJECT` on your device).")
    if caller.project_id is not None:
        raise Forbidden("This token is limited to one project; ask with a token that is not.")
    with conn.transaction():
        project = identity.project_id(conn, caller.org_id, request.project)
        direct = caller.is_admin and access.ADMIN in caller.scopes
        if project is None and not direct:
            raise NotFound(
                f"No project {request.project!r} on this team server. Projects are keyed by "
                "the normalised git remote (as `memory-layer list` shows them); an admin "
                "adds one by inviting someone to it."
            )
        if project is None:
            project = identity.ensure_project(conn, caller.org_id, request.project)
        current = identity.role_of(conn, caller.user_id, project)
        if direct:
            if current != "admin":
                identity.set_membership(conn, caller.user_id, project, "admin")
            return _member(caller, request.project, "admin", changed=current != "admin")
        wanted = request.role or DEFAULT_ROLE
        if current is not None and (request.role is None or _RANK[current] >= _RANK[wanted]):
            return _member(caller, request.project, current, changed=False)
        if joins.open_count(conn, caller.user_id) >= MAX_OPEN_JOIN_REQUESTS:
            raise RateLimited(f"You have {MAX_OPEN_JOIN_REQUESTS} join requests waiting, the "
                              "limit; wait for an admin to answer them.")
        row, made = joins.open_request(
            conn, request_id="jr" + uuid.uuid4().hex[:14], project=project,
            user=caller.user_id, role=wanted, reason=request.reason)
    return {**_view(row), "made": made, "current_role": current,
            "token_allows": _allowed(caller, wanted)}


def _view(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "project", "user", "role", "reason", "status", "granted_role",
            "decision_reason")
    view = {k: row[k] for k in keep}
    for key in ("created_at", "decided_at"):
        view[key] = row[key].isoformat() if row.get(key) else None
    return view


def _administered(conn: psycopg.Connection, caller: Principal) -> list[int]:
    """The projects whose join requests the caller decides."""
    if access.ADMIN not in caller.scopes:
        return []
    if caller.is_admin and caller.project_id is None:
        return identity.org_projects(conn, caller.org_id)
    return [pid for pid, _key, role in identity.member_projects(conn, caller.user_id)
            if role == "admin" and caller.project_id in (None, pid)]


def listing(conn: psycopg.Connection, caller: Principal) -> dict[str, Any]:
    """Requests waiting for the caller's decision, and the caller's own requests."""
    projects = _administered(conn, caller)
    waiting = []
    for row in joins.waiting_in(conn, projects):
        current = identity.role_of(conn, row["user_id"], row["project_id"])
        waiting.append({**_view(row), "current_role": current})
    return {"waiting": waiting, "can_decide": bool(projects) or access.ADMIN in caller.scopes,
            "mine": [_view(r) for r in joins.of_user(conn, caller.user_id)]}


def decide(conn: psycopg.Connection, caller: Principal, decision: JoinDecision) -> dict[str, Any]:
    """Approve (the membership is made, with the role granted) or deny an open request.
    Approving never lowers a role the person already holds."""
    with conn.transaction():
        row = joins.get(conn, decision.request_id, lock=True)
        if row is None:
            raise NotFound(_NO_REQUEST)
        project = row["project_id"]
        role = "admin" if caller.is_admin else identity.role_of(conn, caller.user_id, project)
        if role is None or caller.project_id not in (None, project):
            raise NotFound(_NO_REQUEST)
        access.require(caller, access.ADMIN, role, project)
        if row["user_id"] == caller.user_id and not caller.is_admin:
            raise Forbidden("Nobody approves their own join request; ask another admin.")
        if row["status"] != "open":
            raise InvalidInput(f"This join request was already decided ({row['status']}).")
        if not decision.approve:
            joins.decide(conn, row["id"], status="denied", role=None, by=caller.user_id,
                         reason=decision.reason)
            return {"request": row["id"], "status": "denied", "user": row["user"],
                    "project": row["project"]}
        granted = decision.role or row["role"]
        held = identity.role_of(conn, row["user_id"], project)
        if held is not None and _RANK[held] > _RANK[granted]:
            granted = held  # approving a smaller role than they hold changes nothing
        identity.set_membership(conn, row["user_id"], project, granted)
        joins.decide(conn, row["id"], status="approved", role=granted, by=caller.user_id,
                     reason=decision.reason)
    return {"request": row["id"], "status": "approved", "user": row["user"],
            "project": row["project"], "role": granted, "previous_role": held}
