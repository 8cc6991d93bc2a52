"""Who may do what on the team server: roles, token scopes, and tokens themselves.

A request is allowed when the member's role in the project allows the action AND the
token's scopes include it. Agent and CI tokens can never hold ``review`` or ``admin``:
agents propose, report outcomes and dispute, as over local MCP, but never approve.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory_layer.errors import Forbidden, InvalidInput

READ = "read"
PROPOSE = "propose"
OUTCOME = "outcome"
DISPUTE = "dispute"
REVIEW = "review"
ADMIN = "admin"
SCOPES: tuple[str, ...] = (READ, PROPOSE, OUTCOME, DISPUTE, REVIEW, ADMIN)
AGENT_SCOPES = frozenset({READ, PROPOSE, OUTCOME, DISPUTE})

ROLES: dict[str, frozenset[str]] = {
    "reader": frozenset({READ, DISPUTE}),
    "contributor": frozenset({READ, DISPUTE, PROPOSE, OUTCOME}),
    "reviewer": frozenset({READ, DISPUTE, PROPOSE, OUTCOME, REVIEW}),
    "admin": frozenset(SCOPES),
}
PERSON = "person"
AGENT = "agent"

TOKEN_PREFIX = "mlt_"
# 32 random bytes: guessing is hopeless, so a hash without salt is enough to store it.
_TOKEN_BYTES = 32
MAX_TOKEN_DAYS = 365
_DURATION = re.compile(r"^\s*(\d+)\s*([dhm])\s*$")


@dataclass(frozen=True)
class Principal:
    """The caller of one request, as its bearer token says."""

    user_id: int
    user_name: str
    org_id: int
    token_id: int
    kind: str
    scopes: frozenset[str]
    project_id: int | None  # a token limited to one project
    is_admin: bool
    expires_at: datetime | None = None


def new_token() -> tuple[str, str, str]:
    """A fresh token: (the secret shown once, its sha256 to store, a display prefix)."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(_TOKEN_BYTES)
    return secret, token_hash(secret), secret[: len(TOKEN_PREFIX) + 6]


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_scopes(text: str, kind: str) -> frozenset[str]:
    """``read,propose`` as a set, refusing unknown scopes and an agent token that asks
    for review or admin."""
    scopes = frozenset(s.strip().lower() for s in text.split(",") if s.strip())
    if not scopes:
        raise InvalidInput(f"Give at least one scope: {', '.join(SCOPES)}.")
    unknown = scopes - set(SCOPES)
    if unknown:
        raise InvalidInput(
            f"Unknown scope(s) {', '.join(sorted(unknown))}; choose from {', '.join(SCOPES)}."
        )
    if kind == AGENT and scopes - AGENT_SCOPES:
        raise InvalidInput(
            "Agent and CI tokens may only read, propose, report outcomes and dispute; "
            f"drop {', '.join(sorted(scopes - AGENT_SCOPES))} or create a person token."
        )
    return scopes


def parse_expiry(text: str) -> timedelta:
    """``30d``, ``12h`` or ``90m``, at most a year: every token expires."""
    match = _DURATION.match(text or "")
    if not match:
        raise InvalidInput(f"Cannot read the expiry {text!r}; write e.g. 30d, 12h or 90m.")
    amount, unit = int(match.group(1)), match.group(2)
    span = {"d": timedelta(days=amount), "h": timedelta(hours=amount)}.get(
        unit, timedelta(minutes=amount)
    )
    if span <= timedelta(0) or span > timedelta(days=MAX_TOKEN_DAYS):
        raise InvalidInput(f"A token expires after 1 minute to {MAX_TOKEN_DAYS} days, not {text}.")
    return span


def check_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidInput(f"Unknown role {role!r}; choose one of {', '.join(ROLES)}.")
    return role


def require(principal: Principal, action: str, role: str | None, project_id: int) -> None:
    """Refuse unless the token's scopes and the member's role in ``project_id`` both
    allow ``action``. ``role`` is None when the caller is not a member of the project:
    the refusal then says nothing about what the project holds."""
    if principal.project_id is not None and principal.project_id != project_id:
        raise Forbidden("This token is limited to another project.")
    if role is None:
        raise Forbidden("You are not a member of this project; ask a team admin to invite you.")
    if action not in ROLES[role]:
        raise Forbidden(f"Your role here is {role}, which cannot {action}.")
    if action not in principal.scopes:
        raise Forbidden(
            f"This token has no '{action}' scope (it has {', '.join(sorted(principal.scopes))})."
            " Create a token with it: `memory-layer team token create --scopes ...`."
        )
