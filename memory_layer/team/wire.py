"""The team API's request values, parsed once at the server's door.

Every limit is here, named, so the HTTP door, the client and the docs agree on them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memory_layer.errors import InvalidInput
from memory_layer.models import check_category

MAX_TEXT = 10_000
MAX_REASON = 2_000
MAX_SUBJECT = 200
MAX_KEY = 200
MAX_NAME = 100
MAX_PROJECT_KEY = 500
# A client key is any unique string the client chose (a uuid4 hex here).
_CLIENT_KEY = re.compile(r"^[A-Za-z0-9_.:-]{8,80}$")


def _text(data: dict[str, Any], name: str, limit: int, *, required: bool = True) -> str | None:
    value = data.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise InvalidInput(f"'{name}' is required.")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"'{name}' must be text.")
    value = value.strip()
    if len(value) > limit:
        raise InvalidInput(f"'{name}' is {len(value)} characters; the limit is {limit}.")
    return value


MAX_INT = 2**31 - 1  # revisions and limits are PostgreSQL integers
MAX_SEQ = 2**63 - 1  # the log's seq is a bigint


def _int(data: dict[str, Any], name: str, top: int = MAX_INT) -> int | None:
    value = data.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise InvalidInput(f"'{name}' must be a whole number from 0 to {top}.")
    return value


def client_key(data: dict[str, Any]) -> str:
    value = data.get("client_key")
    if not isinstance(value, str) or not _CLIENT_KEY.match(value):
        raise InvalidInput("'client_key' must be 8-80 characters of letters, digits, _.:-")
    return value


def project_key(data: dict[str, Any]) -> str:
    return str(_text(data, "project", MAX_PROJECT_KEY))


@dataclass(frozen=True)
class Proposal:
    """A share (a new memory) or a change to a team memory (``memory_id`` set)."""

    client_key: str
    project: str
    text: str
    category: str
    subject: str | None
    fact_key: str | None
    reason: str | None
    memory_id: str | None
    base_revision: int | None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Proposal:
        memory_id = _text(data, "memory_id", 80, required=False)
        base = _int(data, "base_revision")
        if memory_id and base is None:
            raise InvalidInput("A change to a team memory needs 'base_revision'.")
        subject = _text(data, "subject", MAX_SUBJECT, required=False)
        fact_key = _text(data, "fact_key", MAX_KEY, required=False)
        if (subject is None) != (fact_key is None):
            raise InvalidInput("Give both 'subject' and 'fact_key' for a fact, or neither.")
        return cls(
            client_key=client_key(data),
            project=project_key(data),
            text=str(_text(data, "text", MAX_TEXT)),
            category=check_category(str(_text(data, "category", 40))),
            subject=subject,
            fact_key=fact_key,
            reason=_text(data, "reason", MAX_REASON, required=False),
            memory_id=memory_id,
            base_revision=base,
        )


@dataclass(frozen=True)
class Decision:
    proposal_id: str
    accept: bool
    reason: str | None
    supersede: bool

    @classmethod
    def parse(cls, proposal_id: str, data: dict[str, Any], *, accept: bool) -> Decision:
        supersede = data.get("supersede", False)
        if not isinstance(supersede, bool):
            raise InvalidInput("'supersede' must be true or false.")
        return cls(
            proposal_id=proposal_id,
            accept=accept,
            reason=_text(data, "reason", MAX_REASON, required=not accept),
            supersede=supersede,
        )


@dataclass(frozen=True)
class Dispute:
    client_key: str
    memory_id: str
    reason: str

    @classmethod
    def parse(cls, memory_id: str, data: dict[str, Any]) -> Dispute:
        return cls(client_key(data), memory_id, str(_text(data, "reason", MAX_REASON)))


@dataclass(frozen=True)
class Outcome:
    client_key: str
    memory_id: str
    worked: bool

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Outcome:
        worked = data.get("worked")
        if not isinstance(worked, bool):
            raise InvalidInput("'worked' must be true or false.")
        return cls(client_key(data), str(_text(data, "memory_id", 80)), worked)


@dataclass(frozen=True)
class Invite:
    name: str
    project: str
    role: str

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Invite:
        from memory_layer.team.access import check_role

        return cls(
            name=str(_text(data, "name", MAX_NAME)),
            project=project_key(data),
            role=check_role(str(_text(data, "role", 20))),
        )


@dataclass(frozen=True)
class TokenRequest:
    scopes: str
    expires: str
    kind: str
    project: str | None
    device: str | None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> TokenRequest:
        kind = str(_text(data, "kind", 10, required=False) or "person")
        if kind not in {"person", "agent"}:
            raise InvalidInput("'kind' must be person or agent.")
        return cls(
            scopes=str(_text(data, "scopes", 200)),
            expires=str(_text(data, "expires", 10, required=False) or "90d"),
            kind=kind,
            project=_text(data, "project", MAX_PROJECT_KEY, required=False),
            device=_text(data, "device", MAX_NAME, required=False),
        )


DEFAULT_PULL = 500
MAX_QUERY = 1_000


def pull_request(data: dict[str, Any]) -> tuple[dict[str, int], int]:
    """``{"cursors": {project: seq}, "limit": n}`` as checked values."""
    cursors = data.get("cursors", {})
    if not isinstance(cursors, dict) or len(cursors) > 1_000:
        raise InvalidInput("'cursors' must be an object of project -> last seq seen.")
    checked: dict[str, int] = {}
    for key, seq in cursors.items():
        if not isinstance(key, str) or isinstance(seq, bool) or not isinstance(seq, int) \
                or not 0 <= seq <= MAX_SEQ:
            raise InvalidInput(
                f"Each cursor must be a project key and a whole number from 0 to {MAX_SEQ}."
            )
        checked[key] = seq
    limit = _int(data, "limit")
    return checked, DEFAULT_PULL if limit is None else limit


def search_request(args: Any) -> tuple[str, str, int]:
    """``?project=&q=&limit=`` for team search."""
    project = str(_text(dict(args), "project", MAX_PROJECT_KEY))
    query = str(_text(dict(args), "q", MAX_QUERY))
    raw_limit = args.get("limit", "8")
    if not str(raw_limit).isdigit() or not 1 <= int(raw_limit) <= 50:
        raise InvalidInput("'limit' must be a whole number from 1 to 50.")
    return project, query, int(raw_limit)


JOINABLE_ROLES = ("reader", "contributor", "reviewer")


@dataclass(frozen=True)
class JoinRequest:
    """Asking to join a project of the organisation, or for another role in one."""

    project: str
    role: str | None  # None: contributor for a newcomer; a member keeps their role
    reason: str | None

    @classmethod
    def parse(cls, data: dict[str, Any]) -> JoinRequest:
        role = _text(data, "role", 20, required=False)
        if role == "admin":
            raise InvalidInput(
                "Nobody asks to become an admin; an admin of the project makes you one "
                "(`memory-layer team invite NAME --role admin`)."
            )
        if role is not None and role not in JOINABLE_ROLES:
            raise InvalidInput(f"Unknown role {role!r}; ask for one of {', '.join(JOINABLE_ROLES)}.")
        return cls(project_key(data), role, _text(data, "reason", MAX_REASON, required=False))


@dataclass(frozen=True)
class JoinDecision:
    request_id: str
    approve: bool
    role: str | None  # what the admin grants; None: the role asked for
    reason: str | None

    @classmethod
    def parse(cls, request_id: str, data: dict[str, Any], *, approve: bool) -> JoinDecision:
        from memory_layer.team.access import check_role

        role = _text(data, "role", 20, required=False)
        return cls(
            request_id=request_id,
            approve=approve,
            role=check_role(role) if role is not None else None,
            reason=_text(data, "reason", MAX_REASON, required=not approve),
        )
