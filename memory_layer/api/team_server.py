"""The team server's use cases, over its PostgreSQL store (``storage.pg``).

Each takes a connection and the caller (``team.access.Principal``), checks the caller's
role and token, and writes in one transaction. Nothing is last-writer-wins: a change
names the revision it was made against and is refused once the memory moved on; a
different value for a fact becomes a conflict a reviewer settles.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memory_layer.capture.privacy import clean
from memory_layer.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    RateLimited,
    Stale,
    Unauthorized,
)
from memory_layer.storage.pg import identity, joins, schema, shared
from memory_layer.team import access, scores
from memory_layer.team.access import Principal
from memory_layer.team.wire import Decision, Dispute, Invite, Outcome, Proposal, TokenRequest

if TYPE_CHECKING:
    import psycopg

# Open proposals one member may have waiting at once: a runaway agent cannot flood
# the reviewers' inbox (it is told the limit and how to clear it).
MAX_OPEN_PROPOSALS = 200
MAX_PULL = 1_000
ADMIN_TOKEN_DAYS = "90d"
INVITE_TOKEN_DAYS = "30d"
# A token's last_used_at (and its device's last_seen_at) is written at most this often:
# enough to tell a live token from a forgotten one, without a write per request.
TOKEN_TOUCH_SECONDS = 60.0
_WITHHELD = "No team memory with that id in your projects."


def _now() -> datetime:
    return datetime.now(UTC)


def init_server(
    url: str, *, org: str, admin: str, solo: bool
) -> dict[str, Any]:
    """Apply the migrations (and CREATE EXTENSION vector); on a new database also make
    the organisation, its first admin and that admin's token (shown once)."""
    with schema.connect(url) as conn:
        applied = schema.migrate(conn)
        with conn.transaction():
            if identity.org_count(conn):
                return {"applied": applied, "token": None, "org": None}
            org_id = identity.create_org(conn, org, allow_self_review=solo)
            user = identity.create_user(conn, org_id, admin, is_admin=True)
            secret, _token_id = _issue(conn, user, kind=access.PERSON,
                                       scopes=list(access.SCOPES), project=None,
                                       expires=ADMIN_TOKEN_DAYS, device=None)
    return {"applied": applied, "token": secret, "org": org, "admin": admin}


def _issue(
    conn: psycopg.Connection, user: int, *, kind: str, scopes: list[str], project: int | None,
    expires: str, device: str | None, not_after: datetime | None = None,
) -> tuple[str, int]:
    """A new token (the secret, shown once, and its id); it expires no later than
    ``not_after`` (the token that asked for it)."""
    secret, digest, prefix = access.new_token()
    device_id = identity.ensure_device(conn, user, device) if device else None
    expires_at = _now() + access.parse_expiry(expires)
    if not_after is not None:
        expires_at = min(expires_at, not_after)
    token_id = identity.insert_token(
        conn, user=user, device=device_id, kind=kind, digest=digest, prefix=prefix,
        scopes=scopes, project=project, expires_at=expires_at,
    )
    return secret, token_id


def authenticate(conn: psycopg.Connection, secret: str | None) -> Principal:
    if not secret or not secret.startswith(access.TOKEN_PREFIX):
        raise Unauthorized(
            "A bearer token is required: `memory-layer team login URL --token mlt_...`."
        )
    row = identity.token_owner(conn, access.token_hash(secret),
                               touch_every_seconds=TOKEN_TOUCH_SECONDS)
    if row is None:
        raise Unauthorized("This token is unknown, revoked or expired; ask for a new one.")
    return Principal(
        user_id=int(row["user_id"]), user_name=row["user_name"], org_id=int(row["org_id"]),
        token_id=int(row["token_id"]), kind=row["kind"], scopes=frozenset(row["scopes"]),
        project_id=row["project_id"], is_admin=bool(row["is_admin"]),
        expires_at=row["expires_at"],
    )


def _project(conn: psycopg.Connection, caller: Principal, key: str, action: str) -> int:
    project = identity.project_id(conn, caller.org_id, key)
    if project is None:
        raise Forbidden("You are not a member of this project; ask a team admin to invite you.")
    access.require(caller, action, _role(conn, caller, project), project)
    return project


def _role(conn: psycopg.Connection, caller: Principal, project: int) -> str | None:
    return "admin" if caller.is_admin else identity.role_of(conn, caller.user_id, project)


def me(conn: psycopg.Connection, caller: Principal) -> dict[str, Any]:
    projects = identity.member_projects(conn, caller.user_id)
    return {
        "user": caller.user_name, "kind": caller.kind, "scopes": sorted(caller.scopes),
        "admin": caller.is_admin,
        "projects": [{"project": key, "role": role} for _pid, key, role in projects
                     if caller.project_id in (None, _pid)],
    }


def invite(conn: psycopg.Connection, caller: Principal, request: Invite) -> dict[str, Any]:
    """Make (or find) a user, give them a role in a project, and a person token."""
    if access.ADMIN not in caller.scopes:
        raise Forbidden("Inviting needs a token with the admin scope.")
    with conn.transaction():
        if caller.is_admin and caller.project_id is None:
            project = identity.ensure_project(conn, caller.org_id, request.project)
        else:
            project = _project(conn, caller, request.project, access.ADMIN)
        if caller.is_admin and identity.role_of(conn, caller.user_id, project) is None:
            # The org admin who opens a project administers it: its inbox is theirs too.
            identity.set_membership(conn, caller.user_id, project, "admin")
        existing = identity.user_id(conn, caller.org_id, request.name)
        if existing is not None:
            # Never a token for someone who already has an account: that would let an
            # admin of one project log in as anyone (the org admin included).
            if identity.is_org_admin(conn, existing) and not caller.is_admin:
                raise Forbidden("Only an organisation admin changes an organisation admin.")
            identity.set_membership(conn, existing, project, request.role)
            joins.settle_open(conn, user=existing, project=project, role=request.role,
                              by=caller.user_id)
            return {"user": request.name, "project": request.project, "role": request.role,
                    "token": None, "expires_in": None, "existing": True}
        user = identity.create_user(conn, caller.org_id, request.name, is_admin=False)
        identity.set_membership(conn, user, project, request.role)
        scopes = sorted(access.ROLES[request.role])
        secret, _token_id = _issue(conn, user, kind=access.PERSON, scopes=scopes, project=None,
                                   expires=INVITE_TOKEN_DAYS, device=None)
    return {"user": request.name, "project": request.project, "role": request.role,
            "token": secret, "expires_in": INVITE_TOKEN_DAYS, "existing": False}


def create_token(
    conn: psycopg.Connection, caller: Principal, request: TokenRequest
) -> dict[str, Any]:
    """A token for the caller (a device, an agent, CI): never more than the caller's
    own token may do, and an agent token never reviews or administers."""
    scopes = access.parse_scopes(request.scopes, request.kind)
    if not scopes <= caller.scopes:
        raise Forbidden(
            f"Your token cannot grant {', '.join(sorted(scopes - caller.scopes))}."
        )
    if caller.kind == access.AGENT and request.kind != access.AGENT:
        raise Forbidden("An agent token can only create agent tokens.")
    access.parse_expiry(request.expires)
    with conn.transaction():
        project = (
            _project(conn, caller, request.project, access.READ) if request.project else None
        )
        if caller.project_id is not None:
            # A token limited to one project makes tokens for that project only.
            if project not in (None, caller.project_id):
                raise Forbidden("This token is limited to another project.")
            project = caller.project_id
        secret, token_id = _issue(conn, caller.user_id, kind=request.kind,
                                  scopes=sorted(scopes), project=project,
                                  expires=request.expires, device=request.device,
                                  not_after=caller.expires_at)
    return {"token": secret, "id": token_id, "kind": request.kind, "scopes": sorted(scopes),
            "project": request.project, "expires_in": request.expires}


def revoke_token(conn: psycopg.Connection, caller: Principal, token_id: int) -> dict[str, Any]:
    """Revoke one of the caller's own tokens (a lost laptop, a retired CI job)."""
    with conn.transaction():
        revoked = identity.revoke_token(conn, token_id, caller.user_id)
    if not revoked:
        raise NotFound("No live token of yours with that id.")
    return {"id": token_id, "revoked": True}


def propose(conn: psycopg.Connection, caller: Principal, request: Proposal) -> dict[str, Any]:
    """A share or a change, pending a reviewer. Sending the same client key again
    returns the first proposal (a retry after a lost answer adds nothing)."""
    text = clean(request.text)  # the server redacts again: clients may be old or wrong
    with conn.transaction():
        project = _project(conn, caller, request.project, access.PROPOSE)
        earlier = shared.proposal_by_client_key(conn, request.client_key, caller.user_id)
        if earlier is not None:
            return _proposal_view(earlier, repeated=True)
        if shared.open_proposal_count(conn, caller.user_id) >= MAX_OPEN_PROPOSALS:
            raise RateLimited(
                f"You have {MAX_OPEN_PROPOSALS} proposals waiting for review, the limit; "
                "ask a reviewer to work through them first."
            )
        conflicts_with = None
        if request.memory_id:
            memory = shared.get_memory(conn, request.memory_id)
            if memory is None or memory["project_id"] != project:
                raise NotFound(_WITHHELD)
        elif request.subject and request.fact_key:
            fact = shared.active_fact(conn, project, request.subject, request.fact_key)
            if fact is not None and fact["text"] != text:
                conflicts_with = fact["id"]
        row = shared.insert_proposal(conn, {
            "id": "tp" + uuid.uuid4().hex[:14], "client_key": request.client_key,
            "project_id": project, "memory_id": request.memory_id,
            "base_revision": request.base_revision, "text": text,
            "category": request.category, "subject": request.subject,
            "fact_key": request.fact_key, "reason": request.reason,
            "author_id": caller.user_id, "token_kind": caller.kind,
            "conflicts_with": conflicts_with,
        })
    return _proposal_view(row, repeated=False)


def _proposal_view(row: dict[str, Any], *, repeated: bool) -> dict[str, Any]:
    keep = ("id", "memory_id", "base_revision", "text", "category", "subject", "fact_key",
            "reason", "status", "conflicts_with", "decision_reason")
    view = {k: row[k] for k in keep}
    view["created_at"] = row["created_at"].isoformat() if row.get("created_at") else None
    view["repeated"] = repeated
    return view


def inbox(conn: psycopg.Connection, caller: Principal) -> list[dict[str, Any]]:
    """Open proposals in the projects the caller reviews, with rival proposals for the
    same fact named so a reviewer sees the candidates side by side."""
    if access.REVIEW not in caller.scopes:
        raise Forbidden("The team inbox needs a token with the review scope.")
    projects = {
        pid: key for pid, key, role in identity.member_projects(conn, caller.user_id)
        if (caller.is_admin or access.REVIEW in access.ROLES[role])
        and caller.project_id in (None, pid)
    }
    rows = shared.open_proposals(conn, list(projects))
    facts: dict[tuple[Any, ...], list[str]] = {}
    for row in rows:
        if row["subject"]:
            facts.setdefault((row["project_id"], row["subject"], row["fact_key"]), []).append(
                row["id"])
    out = []
    for row in rows:
        view = _proposal_view(row, repeated=False)
        view["project"] = projects[row["project_id"]]
        view["own"] = row["author_id"] == caller.user_id
        rivals = facts.get((row["project_id"], row["subject"], row["fact_key"]), [])
        view["rivals"] = [r for r in rivals if r != row["id"]]
        out.append(view)
    return out


def _vector(text: str) -> str | None:
    """The text's vector as pgvector's literal, when the server's model makes
    VECTOR_DIM-sized vectors (the default MiniLM); otherwise keyword search only."""
    from memory_layer import embed
    from memory_layer.config import load_config

    embedder = embed.get_embedder(load_config())
    if embedder is None or embedder.dim != schema.VECTOR_DIM:
        return None
    vector = embedder.embed([text])[0]
    return "[" + ",".join(f"{float(x):.6f}" for x in vector) + "]"


def decide(conn: psycopg.Connection, caller: Principal, decision: Decision) -> dict[str, Any]:
    """Accept or reject an open proposal. Nobody approves their own (unless the
    organisation was set up for one person); a change made against an older revision
    is refused as stale; a new value for a held fact needs ``supersede``."""
    peek = shared.get_proposal(conn, decision.proposal_id)
    vector = _vector(peek["text"]) if peek is not None and decision.accept else None
    with conn.transaction():
        if peek is not None:
            # The project first, as every other write takes it: accepting one proposal
            # marks its rivals stale, which must not wait on a reviewer holding a rival.
            shared.lock_project(conn, peek["project_id"])
        proposal = shared.get_proposal(conn, decision.proposal_id, lock=True)
        if proposal is None:
            raise NotFound("No open team proposal with that id; `memory-layer team review`.")
        project = proposal["project_id"]
        access.require(caller, access.REVIEW, _role(conn, caller, project), project)
        if proposal["status"] != "open":
            raise InvalidInput(f"This proposal was already decided ({proposal['status']}).")
        if proposal["author_id"] == caller.user_id and not identity.allows_self_review(
            conn, caller.org_id
        ):
            raise Forbidden("Nobody approves their own proposal; ask another reviewer.")
        if not decision.accept:
            shared.decide_proposal(conn, proposal["id"], status="rejected",
                                   by=caller.user_id, reason=decision.reason)
            return {"proposal": proposal["id"], "status": "rejected"}
        shared.lock_project(conn, project)
        refused: Stale | None = None
        try:
            with conn.transaction():  # a savepoint: a stale change writes nothing here
                memory_id, kind, revision = _apply(conn, caller, proposal, decision, vector)
        except Stale as exc:
            # Recorded (and committed) as stale, then refused, so it leaves the inbox.
            shared.decide_proposal(conn, proposal["id"], status="stale", by=caller.user_id,
                                   reason=str(exc)[:500])
            refused = exc
        else:
            shared.decide_proposal(conn, proposal["id"], status="accepted",
                                   by=caller.user_id, reason=decision.reason)
            seq = None
            made_stale = 0
            if kind:  # "" = the team already held exactly this text: nothing new to log
                seq = shared.append_op(conn, project=project, memory_id=memory_id, kind=kind,
                                       revision=revision, actor=caller.user_id)
                made_stale = shared.mark_stale(conn, memory_id, revision, caller.user_id)
    if refused is not None:
        raise refused
    return {"proposal": proposal["id"], "status": "accepted", "memory_id": memory_id,
            "revision": revision, "seq": seq, "made_stale": made_stale}


def _apply(
    conn: psycopg.Connection, caller: Principal, proposal: dict[str, Any], decision: Decision,
    vector: str | None,
) -> tuple[str, str, int]:
    """Write an accepted proposal: (memory id, op kind, new revision)."""
    target = proposal["memory_id"] or proposal["conflicts_with"]
    if proposal["subject"] and not proposal["memory_id"]:
        fact = shared.active_fact(conn, proposal["project_id"], proposal["subject"],
                                  proposal["fact_key"])
        if fact is not None and fact["text"] == proposal["text"]:
            return fact["id"], "", int(fact["revision"])  # already the team's value
        target = fact["id"] if fact is not None else None
        if target and not decision.supersede:
            raise Conflict(
                f"The team already holds {proposal['subject']} / {proposal['fact_key']} = "
                f"{fact['text'][:120]!r} (memory {target}). Accept with supersede to replace "
                "it, or reject this proposal."
            )
    if target is None:
        memory_id = "tm" + uuid.uuid4().hex[:14]
        shared.insert_memory(conn, {**proposal, "id": memory_id, "reviewer_id": caller.user_id,
                                    "embedding": vector})
        return memory_id, "publish", 1
    memory = shared.get_memory(conn, target, lock=True)
    if memory is None or memory["status"] == "withdrawn":
        raise Stale("The memory this change was for has been withdrawn; propose it anew.")
    base = proposal["base_revision"]
    if proposal["memory_id"] and base != memory["revision"]:
        raise Stale(
            f"This change was made against revision {base}; the memory is at revision "
            f"{memory['revision']} now. Propose the change again against the current text."
        )
    revision = shared.revise_memory(conn, target, text=proposal["text"],
                                    category=proposal["category"], reviewer=caller.user_id,
                                    embedding=vector)
    return target, "revise", revision


def _member_memory(
    conn: psycopg.Connection, caller: Principal, memory_id: str, action: str
) -> dict[str, Any]:
    """The memory, locked, when the caller may ``action`` it; one uniform refusal for a
    memory that does not exist and one in a project the caller is not in."""
    peek = shared.get_memory(conn, memory_id)
    if peek is None:
        raise NotFound(_WITHHELD)
    # Project first, then the memory: the order `decide` takes them in, so two
    # reviewers' writes wait for each other instead of deadlocking.
    shared.lock_project(conn, peek["project_id"])
    memory = shared.get_memory(conn, memory_id, lock=True)
    if memory is None:
        raise NotFound(_WITHHELD)
    role = _role(conn, caller, memory["project_id"])
    if role is None or caller.project_id not in (None, memory["project_id"]):
        raise NotFound(_WITHHELD)
    access.require(caller, action, role, memory["project_id"])
    return memory


def _log(conn: psycopg.Connection, caller: Principal, memory: dict[str, Any], kind: str,
         status: str | None) -> int:
    shared.lock_project(conn, memory["project_id"])
    revision = (
        shared.set_status(conn, memory["id"], status) if status else memory["revision"]
    )
    return shared.append_op(conn, project=memory["project_id"], memory_id=memory["id"],
                            kind=kind, revision=revision, actor=caller.user_id)


def withdraw(conn: psycopg.Connection, caller: Principal, memory_id: str) -> dict[str, Any]:
    """Take a team memory back: every device retires it on its next pull."""
    with conn.transaction():
        memory = _member_memory(conn, caller, memory_id, access.REVIEW)
        if memory["status"] == "withdrawn":
            return {"memory_id": memory_id, "status": "withdrawn", "changed": False}
        seq = _log(conn, caller, memory, "withdraw", "withdrawn")
        shared.resolve_disputes(conn, memory_id, caller.user_id, "withdrawn")
    return {"memory_id": memory_id, "status": "withdrawn", "changed": True, "seq": seq}


def dispute(conn: psycopg.Connection, caller: Principal, request: Dispute) -> dict[str, Any]:
    """Any member may dispute: the memory is hidden from everyone's agents until a
    reviewer keeps or withdraws it."""
    with conn.transaction():
        memory = _member_memory(conn, caller, request.memory_id, access.DISPUTE)
        if memory["status"] == "withdrawn":
            raise InvalidInput("This team memory was withdrawn; there is nothing to dispute.")
        if shared.dispute_by_client_key(conn, request.client_key) is not None:
            return {"memory_id": memory["id"], "status": memory["status"], "repeated": True}
        shared.insert_dispute(conn, client_key=request.client_key, memory_id=memory["id"],
                              user=caller.user_id, reason=request.reason)
        if memory["status"] == "active":
            _log(conn, caller, memory, "dispute", "disputed")
    return {"memory_id": memory["id"], "status": "disputed", "repeated": False}


def resolve(conn: psycopg.Connection, caller: Principal, memory_id: str) -> dict[str, Any]:
    """A reviewer keeps a disputed memory: it is shown to agents again."""
    with conn.transaction():
        memory = _member_memory(conn, caller, memory_id, access.REVIEW)
        if memory["status"] != "disputed":
            raise InvalidInput(f"This memory is {memory['status']}, not disputed.")
        seq = _log(conn, caller, memory, "resolve", "active")
        shared.resolve_disputes(conn, memory_id, caller.user_id, "kept")
    return {"memory_id": memory_id, "status": "active", "seq": seq}


def report_outcome(conn: psycopg.Connection, caller: Principal, request: Outcome) -> dict[str, Any]:
    """One member's evidence for a shared memory; the new team score reaches devices
    through the log (a ``score`` op)."""
    with conn.transaction():
        memory = _member_memory(conn, caller, request.memory_id, access.OUTCOME)
        added = shared.insert_outcome(conn, client_key=request.client_key,
                                      memory_id=memory["id"], user=caller.user_id,
                                      worked=request.worked)
        if added:
            _log(conn, caller, memory, "score", None)
        score, proven = scores.team_score(shared.outcome_counts(conn, [memory["id"]]).get(
            memory["id"], []))
    return {"memory_id": memory["id"], "recorded": added, "team_score": score, "proven": proven}


def pull(
    conn: psycopg.Connection, caller: Principal, cursors: dict[str, int], limit: int
) -> dict[str, Any]:
    """The log after each project's cursor, for every project the caller reads."""
    limit = max(1, min(MAX_PULL, limit))
    projects = []
    for pid, key, role in identity.member_projects(conn, caller.user_id):
        if caller.project_id not in (None, pid) or access.READ not in access.ROLES[role]:
            continue
        if access.READ not in caller.scopes:
            raise Forbidden("Pulling needs a token with the read scope.")
        ops = shared.ops_after(conn, pid, int(cursors.get(key, 0)), limit)
        counts = shared.outcome_counts(conn, sorted({o["memory"]["id"] for o in ops}))
        for op in ops:
            score, proven = scores.team_score(counts.get(op["memory"]["id"], []))
            op["memory"].update(team_score=score, proven=proven)
        projects.append({"project": key, "role": role, "ops": [_op_view(o) for o in ops],
                         "last": shared.last_seq(conn, pid)})
    return {"projects": projects}


def _op_view(op: dict[str, Any]) -> dict[str, Any]:
    memory = dict(op["memory"])
    if memory["status"] == "withdrawn":
        # Withdrawn means withdrawn: its words go to no device from now on (an
        # accidental secret included); devices that hold it retire their copy.
        memory.update(text="", subject=None, fact_key=None)
    for key in ("created_at", "updated_at"):
        memory[key] = memory[key].isoformat() if memory.get(key) else None
    memory.pop("author_id", None)
    memory.pop("reviewer_id", None)
    memory.pop("project_id", None)
    return {"seq": op["seq"], "kind": op["kind"], "revision": op["revision"],
            "at": op["at"].isoformat(), "actor": op["actor"], "memory": memory}


def search(
    conn: psycopg.Connection, caller: Principal, project_key: str, query: str, limit: int
) -> list[dict[str, Any]]:
    """Team search for one project: Postgres full-text and pgvector, fused by rank."""
    project = _project(conn, caller, project_key, access.READ)
    limit = max(1, min(50, limit))
    keyword = shared.keyword_search(conn, project, query, limit * 2)
    vector = _vector(query)
    nearest = shared.vector_search(conn, project, vector, limit * 2) if vector else []
    fused: dict[str, float] = {}
    for hits in (keyword, nearest):
        for rank, (memory_id, _score) in enumerate(hits):
            # Reciprocal rank fusion: the two legs' scores are not comparable.
            fused[memory_id] = fused.get(memory_id, 0.0) + 1.0 / (60 + rank)
    best = sorted(fused, key=lambda m: -fused[m])[:limit]
    rows = shared.memories_by_id(conn, best)
    return [{"id": m, "text": rows[m]["text"], "category": rows[m]["category"],
             "revision": rows[m]["revision"], "score": round(fused[m], 5)} for m in best]


def connect(url: str) -> psycopg.Connection:
    """A connection for one server worker; the schema was checked at start."""
    return schema.connect(url)


def check_database(url: str) -> None:
    """Refuse to serve a database that is unreachable or not initialised."""
    with schema.connect(url) as conn:
        schema.check_current(conn)
