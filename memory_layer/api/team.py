"""The team client's use cases: log in, share, sync (push the outbox, pull the log),
status, and the reviewer's calls, on the local store and the team server's HTTP API.

Team memories live in the local store as read-only rows (``team_server`` set), with
local FTS and vectors, so recall and injection never wait on the network and work
offline. What goes up waits in ``team_outbox`` until the server has it, under a key
the server deduplicates on, so a sync cut off half-way is simply run again.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from memory_layer.api.team_soon import LOGIN_FILE
from memory_layer.config import load_config
from memory_layer.errors import InvalidInput, NotFound, TeamUnavailable, Unauthorized
from memory_layer.models import check_category, utcnow
from memory_layer.paths import user_dir
from memory_layer.storage import operations, records, team_sync
from memory_layer.storage.db import open_db
from memory_layer.team.client import Remote
from memory_layer.trust.verify import stamp_fields

PUSH_TIMEOUT = 5.0
# A sync stops pulling after this long; the next one continues from the cursors.
SYNC_BUDGET_SECONDS = 60.0
PAGE = 500
_LOCAL_STATUS = {"active": "active", "disputed": "disputed", "withdrawn": "retired"}
# Refusals that no retry can change (bad input, unknown id, no permission, a conflict
# or stale change): the item leaves the outbox with the reason kept, so one refused
# item never blocks the rest. An expired token (Unauthorized) and "try later" (429,
# an unreachable server) keep it queued.
_PERMANENT = (InvalidInput, NotFound)


def _login_path() -> Path:
    return user_dir() / LOGIN_FILE


def login(url: str, token: str) -> dict[str, Any]:
    """Check the token against the server and keep it (mode 0600) for sync."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise InvalidInput(f"The team server URL must start with https:// (or http://), not {url!r}.")
    who = Remote(url, token.strip()).call("GET", "/v1/me")
    path = _login_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"url": url, "token": token.strip(), "user": who["user"]}, out)
    return who


def remote() -> Remote:
    try:
        data = json.loads(_login_path().read_text(encoding="utf-8"))
        return Remote(data["url"], data["token"])
    except FileNotFoundError:
        raise InvalidInput(
            "Not logged in to a team server. Run `memory-layer team login URL --token mlt_...`."
        ) from None
    except (ValueError, KeyError):
        raise InvalidInput(
            f"{_login_path()} is unreadable; run `memory-layer team login` again."
        ) from None


def logged_in() -> bool:
    return _login_path().is_file()


def share(memory_id: str, *, reason: str | None = None) -> dict[str, Any]:
    """Propose a local memory to the team: it waits for a reviewer there. Queued first,
    so it survives being offline; sent at once when the server answers."""
    server = remote()
    db = open_db()
    try:
        memory = records.get_memory(db, memory_id)
        if memory.extra.get("team_server"):
            raise InvalidInput(
                f"{memory.id} is already a team memory; propose a change with "
                f"`memory-layer team propose {memory.id[:8]} \"new text\"`."
            )
        if memory.status == "conflict":
            raise InvalidInput(
                f"{memory.id} is a rival value for a fact this store already holds; if the "
                "team holds it, propose the new value with `memory-layer team propose "
                "TEAM_ID \"new value\"` (`memory-layer review` shows the conflict)."
            )
        if memory.status != "active":
            raise InvalidInput(
                f"{memory.id} is {memory.status}; only active memories are shared "
                "(review or restore it first)."
            )
        if memory.project is None:
            raise InvalidInput(
                "Only project memories are shared (the team keys memory by repository); "
                "run this inside the project, or `memory-layer edit ID --scope project`."
            )
        body = {"project": memory.project, "text": memory.text, "category": memory.category,
                "subject": memory.extra.get("subject"), "fact_key": memory.extra.get("fact_key"),
                "reason": reason}
        key = uuid.uuid4().hex
        team_sync.enqueue(db, key=key, kind="propose", memory_id=memory.id,
                          body={**body, "client_key": key})
        return {"memory_id": memory.id, "queued": key, **_own(_push(db, server), key)}
    finally:
        db.close()


def propose_change(
    memory_id: str, text: str | None, *, reason: str | None = None, category: str | None = None
) -> dict[str, Any]:
    """A change to a team memory: a proposal against the revision this device holds,
    queued in the outbox (so it survives being offline) and sent at once when the server
    answers. The local copy stays as it is until a reviewer accepts and a pull brings it."""
    server = remote()
    db = open_db()
    try:
        memory = records.get_memory(db, memory_id)
        if not memory.extra.get("team_server"):
            raise InvalidInput(f"{memory.id} is not a team memory; `memory-layer share` it.")
        if memory.status == "retired":
            raise InvalidInput(f"{memory.id} was withdrawn by the team; there is nothing to "
                               "change. Share a new memory instead.")
        new_text = memory.text if text is None else text
        new_category = check_category(category) if category else memory.category
        if new_text.strip() == memory.text.strip() and new_category == memory.category:
            raise InvalidInput(f"That is the team's current text and category of {memory.id}; "
                               "nothing to propose.")
        key = uuid.uuid4().hex
        revision = memory.extra.get("team_revision")
        body = {"project": memory.project, "text": new_text, "category": new_category,
                "memory_id": memory.id, "base_revision": revision,
                "reason": reason, "client_key": key}
        team_sync.enqueue(db, key=key, kind="propose", memory_id=memory.id, body=body)
        return {"memory_id": memory.id, "queued": key, "base_revision": revision,
                "server": server.url, **_own(_push(db, server), key)}
    finally:
        db.close()


def propose_edit(
    memory_id: str, *, text: str | None = None, category: str | None = None,
    tags: Any = None, confidence: float | None = None, reason: str | None = None,
) -> dict[str, Any]:
    """`edit` of a team memory (CLI or dashboard): its text and category are the team's,
    so the edit becomes a change proposal (``propose_change``); tags and confidence have
    no team counterpart, and are refused rather than silently dropped."""
    if tags is not None or confidence is not None:
        raise InvalidInput(
            f"{memory_id} is a team memory: only its text and category can be proposed to "
            "the team; its tags and confidence come from the team and are not edited here."
        )
    return propose_change(memory_id, text, reason=reason, category=category)


def join(project: str, *, role: str | None = None, reason: str | None = None) -> dict[str, Any]:
    """Ask to join a team project (or for a higher role in it). A member already, or an
    org admin, is in at once: this device then pulls the project straight away."""
    answer = dict(server_call("POST", "/v1/joins",
                              {"project": project, "role": role, "reason": reason}))
    if answer.get("status") == "member":
        answer["sync"] = sync()
    return answer


def _push(db: Any, server: Remote, *, timeout: float = PUSH_TIMEOUT) -> dict[str, Any]:
    """Send what waits, oldest first; stop at the first sign the server is away."""
    sent, refused = 0, []
    _queue_outcomes(db)
    for item in team_sync.waiting(db):
        path = "/v1/outcomes" if item["kind"] == "outcome" else "/v1/proposals"
        try:
            answer = server.call("POST", path, item["body"], timeout=timeout)
        except (TeamUnavailable, Unauthorized) as exc:
            team_sync.mark_failed(db, item["id"], str(exc))
            team_sync.set_state(db, {"last_error": str(exc)})
            return {"sent": sent, "refused": refused, "offline": True,
                    "waiting": team_sync.waiting_count(db)}
        except _PERMANENT as exc:
            team_sync.mark_sent(db, item["id"], {"refused": str(exc)})
            refused.append({"id": item["id"], "memory_id": item["memory_id"], "error": str(exc)})
            continue
        team_sync.mark_sent(db, item["id"], answer)
        sent += 1
    return {"sent": sent, "refused": refused, "offline": False,
            "waiting": team_sync.waiting_count(db)}


def _own(pushed: dict[str, Any], key: str) -> dict[str, Any]:
    """A push sends the whole queue: ``refused`` keeps only the refusal of the item just
    queued (``key``), and the others' go to ``others_refused``, so an older queued item's
    refusal is never reported as this one's."""
    mine = [r for r in pushed["refused"] if r["id"] == key]  # an outbox item's id is its key
    others = [r for r in pushed["refused"] if r["id"] != key]
    return {**pushed, "refused": mine, "others_refused": others}


def _queue_outcomes(db: Any) -> None:
    """Local outcome credits on team memories since the last push become team outcome
    events (keyed by this store's id and the operation's id, so each goes up once)."""
    state = team_sync.state(db)
    after = int(state.get("outcome_op_cursor") or 0)
    device = state.get("device_key") or uuid.uuid4().hex
    ops = operations.operations(db, after_id=after, limit=5_000)
    rows = records.memories_by_id(db, sorted({o.memory_id for o in ops if o.memory_id}))
    for op in ops:
        memory = rows.get(op.memory_id or "")
        delta = (op.context or {}).get("delta")
        if op.action != "outcome" or memory is None or not memory.extra.get("team_server"):
            continue
        if not isinstance(delta, int | float) or delta == 0:
            continue
        key = f"o-{device}-{op.id}"
        team_sync.enqueue(db, key=key, kind="outcome", memory_id=memory.id,
                          body={"client_key": key, "memory_id": memory.id, "worked": delta > 0})
    last = ops[-1].id if ops else after
    team_sync.set_state(db, {"outcome_op_cursor": str(last), "device_key": device})


def sync(*, budget: float = SYNC_BUDGET_SECONDS) -> dict[str, Any]:
    """Push the outbox, then pull every project's log from its cursor."""
    server = remote()
    db = open_db()
    try:
        pushed = _push(db, server)
        # Pull whatever happened to the push: approvals and withdrawals must arrive even
        # while an item waits (rate limited, say).
        try:
            pulled = _pull(db, server, budget=budget)
        except (TeamUnavailable, Unauthorized) as exc:
            team_sync.set_state(db, {"last_error": str(exc)})
            return {"pushed": pushed, "pulled": 0, "offline": True, "error": str(exc)}
        team_sync.set_state(db, {"last_error": None, "last_sync_at": utcnow().isoformat(),
                                 "lag": json.dumps(pulled["lag"])})
        return {"pushed": pushed, **pulled, "offline": False}
    finally:
        db.close()


def _pull(db: Any, server: Remote, *, budget: float) -> dict[str, Any]:
    started = time.monotonic()
    applied, lag = 0, {}
    while True:
        cursors = team_sync.cursors(db, server.url)
        answer = server.call("POST", "/v1/pull", {"cursors": cursors, "limit": PAGE})
        more = False
        for project in answer["projects"]:
            ops = project["ops"]
            applied += _apply_ops(db, server.url, project["project"], ops)
            seen = ops[-1]["seq"] if ops else cursors.get(project["project"], 0)
            lag[project["project"]] = max(0, int(project["last"]) - int(seen))
            more = more or len(ops) == PAGE
        if not more or time.monotonic() - started > budget:
            return {"pulled": applied, "lag": lag}


def _apply_ops(db: Any, server_url: str, project: str, ops: list[dict[str, Any]]) -> int:
    """Mirror each op's memory as a read-only local row, and move the cursor, in one
    transaction: a pull cut off half-way leaves either both or neither."""
    if not ops:
        return 0
    config = load_config()
    with records.transaction(db):
        for op in ops:
            _mirror(db, server_url, project, op["memory"], config)
        team_sync.set_cursor(db, server_url, project, int(ops[-1]["seq"]))
    return len(ops)


def _mirror(
    db: Any, server_url: str, project: str, memory: dict[str, Any], config: dict[str, Any]
) -> None:
    status = _LOCAL_STATUS[memory["status"]]
    exists = records.memory_exists(db, memory["id"])
    if memory["status"] == "withdrawn":
        if exists:
            records.update_memory(db, memory["id"], {
                "status": status, "team_revision": int(memory["revision"])},
                actor=f"team:{server_url}", action="team_pull")
        return  # never copied to a device that did not have it
    now = utcnow()
    fields = {
        "text": memory["text"], "category": memory["category"], "status": status,
        "subject": memory.get("subject"), "fact_key": memory.get("fact_key"),
        "outcome_score": float(memory.get("team_score") or 0.0),
        "team_server": server_url, "team_revision": int(memory["revision"]),
        # A reviewer on the team vouched for this text: stamped as verified by them.
        **stamp_fields(memory["text"], memory["category"],
                       approver=f"team:{memory.get('reviewer') or memory.get('author')}",
                       config=config, now=now),
        # Re-review belongs to the team's reviewers, not to each device's clock.
        "review_by": None,
    }
    actor = f"team:{server_url}"
    if exists:
        current = records.get_memory(db, memory["id"])
        if current.extra.get("team_revision") == fields["team_revision"] and \
                current.outcome_score == fields["outcome_score"]:
            return
        records.update_memory(db, memory["id"], fields, actor=actor, action="team_pull")
        return
    records.insert_memory(db, {
        "id": memory["id"], "project": project, "source": actor, "confidence": 0.9,
        "tags": ["team"], "created_at": memory.get("created_at") or now.isoformat(),
        "updated_at": now.isoformat(), **fields,
    }, actor=actor, context={"team": server_url})


def status() -> dict[str, Any]:
    """The cursors, the outbox, the last error and the lag, without the network."""
    data: dict[str, Any] = {"logged_in": logged_in()}
    if not data["logged_in"]:
        return data
    server = remote()
    db = open_db()
    try:
        state = team_sync.state(db)
        data.update(
            server=server.url,
            cursors=team_sync.cursors(db, server.url),
            outbox=team_sync.waiting_count(db),
            waiting=[{k: i[k] for k in ("id", "kind", "memory_id", "attempts", "last_error")}
                     for i in team_sync.waiting(db, 20)],
            refused=[a for a in team_sync.sent_answers(db, "propose")
                     if (a["answer"] or {}).get("refused")],
            last_error=state.get("last_error"),
            last_sync_at=state.get("last_sync_at"),
            # Team log entries not yet pulled, per project, as of the last sync.
            lag=json.loads(state.get("lag") or "{}"),
            team_memories=records.team_count(db, server.url),
        )
    finally:
        db.close()
    return data


def server_call(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """A reviewer's or admin's call (inbox, accept, reject, withdraw, dispute, invite,
    token): straight to the server, since these are decisions, not queued writes."""
    return remote().call(method, path, body)


def role_actions(role: str) -> frozenset[str]:
    """What a role lets a member do (``team.access.ROLES``), for a door to compare with a
    token's scopes."""
    from memory_layer.team.access import ROLES

    return ROLES[role]


def new_client_key() -> str:
    return uuid.uuid4().hex


def is_team_memory(memory: Any) -> bool:
    return bool(memory.extra.get("team_server"))



