"""The team server's HTTP door: ``memory-layer team serve``.

The remote MCP endpoint (``team_mcp``) is served at ``/mcp`` by the same process.
Stateless: every request carries a bearer token and runs on the PostgreSQL database
(one connection per worker thread), so several copies can serve one database behind a
load balancer. Tokens are read from the Authorization header only, never from the URL,
and never logged. Each token gets REQUESTS_PER_MINUTE requests per copy; a request
body may be MAX_BODY bytes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, jsonify, request

from memory_layer import api
from memory_layer.errors import (
    Conflict,
    DatabaseError,
    Forbidden,
    InvalidInput,
    MemoryLayerError,
    NotFound,
    RateLimited,
    Stale,
    Unauthorized,
)
from memory_layer.team import wire

MAX_BODY = 256 * 1024
REQUESTS_PER_MINUTE = 600
_STATUS: tuple[tuple[type[MemoryLayerError], int], ...] = (
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Stale, 409),
    (Conflict, 409),
    (RateLimited, 429),
    (InvalidInput, 400),
    (DatabaseError, 503),
)


class _Connections(threading.local):
    conn: Any = None


class RateLimit:
    """A token bucket per token id: REQUESTS_PER_MINUTE, refilled continuously."""

    def __init__(self, per_minute: int) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(per_minute)
        self.buckets: dict[int, tuple[float, float]] = {}
        self.lock = threading.Lock()

    def allow(self, key: int) -> bool:
        now = time.monotonic()
        with self.lock:
            level, then = self.buckets.get(key, (self.capacity, now))
            level = min(self.capacity, level + (now - then) * self.rate)
            if level < 1:
                self.buckets[key] = (level, now)
                return False
            self.buckets[key] = (level - 1, now)
            return True


def create_app(
    db_url: str, *, per_minute: int = REQUESTS_PER_MINUTE, limits: RateLimit | None = None
) -> Flask:
    """The team API on ``db_url``; refuses to start on a schema that is not current."""
    api.team_check_database(db_url)
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    local = _Connections()
    limits = limits or RateLimit(per_minute)

    def conn() -> Any:
        if local.conn is None or local.conn.closed or local.conn.broken:
            local.conn = api.team_connect(db_url)
        return local.conn

    def caller() -> Any:
        header = request.headers.get("Authorization", "")
        secret = header[7:].strip() if header.lower().startswith("bearer ") else None
        principal = api.team_authenticate(conn(), secret)
        if not limits.allow(principal.token_id):
            raise RateLimited("Too many requests for this token; slow down.")
        return principal

    def body() -> dict[str, Any]:
        data = request.get_json(silent=True)
        if not isinstance(data, dict):
            raise InvalidInput("Send a JSON object with Content-Type: application/json.")
        return data

    _routes(app, conn, caller, body)
    _join_routes(app, conn, caller, body)
    _errors(app, local)
    return app


def _routes(
    app: Flask, conn: Callable[[], Any], caller: Callable[[], Any],
    body: Callable[[], dict[str, Any]],
) -> None:
    @app.get("/v1/health")
    def health() -> Any:
        return jsonify(ok=True)

    @app.get("/v1/me")
    def me() -> Any:
        return jsonify(api.team_me(conn(), caller()))

    @app.post("/v1/proposals")
    def propose() -> Any:
        who = caller()
        return jsonify(api.team_propose(conn(), who, wire.Proposal.parse(body()))), 201

    @app.get("/v1/inbox")
    def inbox() -> Any:
        return jsonify(items=api.team_inbox(conn(), caller()))

    @app.post("/v1/proposals/<proposal_id>/<verb>")
    def decide(proposal_id: str, verb: str) -> Any:
        if verb not in {"accept", "reject"}:
            raise NotFound("Use /accept or /reject.")
        who = caller()
        decision = wire.Decision.parse(proposal_id, body(), accept=verb == "accept")
        return jsonify(api.team_decide(conn(), who, decision))

    @app.post("/v1/memories/<memory_id>/<verb>")
    def act(memory_id: str, verb: str) -> Any:
        who = caller()
        if verb == "withdraw":
            return jsonify(api.team_withdraw(conn(), who, memory_id))
        if verb == "resolve":
            return jsonify(api.team_resolve(conn(), who, memory_id))
        if verb == "dispute":
            return jsonify(api.team_dispute(conn(), who, wire.Dispute.parse(memory_id, body())))
        raise NotFound("Use /withdraw, /dispute or /resolve.")

    @app.post("/v1/outcomes")
    def outcome() -> Any:
        who = caller()
        return jsonify(api.team_report_outcome(conn(), who, wire.Outcome.parse(body())))

    @app.post("/v1/pull")
    def pull() -> Any:
        who = caller()
        data = body()
        cursors, limit = wire.pull_request(data)
        return jsonify(api.team_pull(conn(), who, cursors, limit))

    @app.get("/v1/search")
    def search() -> Any:
        who = caller()
        query = wire.search_request(request.args)
        return jsonify(results=api.team_search(conn(), who, *query))

    @app.post("/v1/invites")
    def invite() -> Any:
        who = caller()
        return jsonify(api.team_invite(conn(), who, wire.Invite.parse(body()))), 201

    @app.post("/v1/tokens")
    def token() -> Any:
        who = caller()
        return jsonify(api.team_create_token(conn(), who, wire.TokenRequest.parse(body()))), 201

    @app.delete("/v1/tokens/<int:token_id>")
    def revoke(token_id: int) -> Any:
        return jsonify(api.team_revoke_token(conn(), caller(), token_id))


def _join_routes(
    app: Flask, conn: Callable[[], Any], caller: Callable[[], Any],
    body: Callable[[], dict[str, Any]],
) -> None:
    """Asking to join a project, and its admins' answers (``memory-layer team join``)."""
    @app.post("/v1/joins")
    def join() -> Any:
        who = caller()
        answer = api.team_ask_to_join(conn(), who, wire.JoinRequest.parse(body()))
        return jsonify(answer), 201 if answer.get("made") else 200

    @app.get("/v1/joins")
    def joins() -> Any:
        return jsonify(api.team_join_requests(conn(), caller()))

    @app.post("/v1/joins/<request_id>/<verb>")
    def decide_join(request_id: str, verb: str) -> Any:
        if verb not in {"approve", "deny"}:
            raise NotFound("Use /approve or /deny.")
        who = caller()
        decision = wire.JoinDecision.parse(request_id, body(), approve=verb == "approve")
        return jsonify(api.team_decide_join(conn(), who, decision))


def asgi(db_url: str, *, host: str, per_minute: int = REQUESTS_PER_MINUTE) -> Any:
    """The whole team server as one ASGI app: the remote MCP endpoint at /mcp and the
    HTTP API (Flask, through a2wsgi) everywhere else."""
    from a2wsgi import WSGIMiddleware
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from memory_layer.team_mcp import build

    limits = RateLimit(per_minute)  # one budget per token across the API and MCP
    flask_app = create_app(db_url, limits=limits)
    # Host-header checks (DNS rebinding) only make sense on loopback; behind a public
    # name the bearer token is the gate.
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    mcp_app = build(db_url, limits).streamable_http_app(
        stateless_http=True, json_response=True, host=host, transport_security=security,
        max_request_body_size=MAX_BODY,
    )
    return Starlette(
        routes=[*mcp_app.routes, Mount("/", app=WSGIMiddleware(flask_app))],  # type: ignore[arg-type]
        middleware=mcp_app.user_middleware,
        lifespan=mcp_app.router.lifespan_context,
    )


def _rollback(local: _Connections) -> None:
    if local.conn is not None and not local.conn.closed:
        local.conn.rollback()


def _errors(app: Flask, local: _Connections) -> None:
    import psycopg
    from werkzeug.exceptions import HTTPException

    @app.errorhandler(MemoryLayerError)
    def library_error(exc: MemoryLayerError) -> Any:
        status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 400)
        return jsonify(error=str(exc)), status

    @app.errorhandler(psycopg.DataError)
    def bad_value(exc: psycopg.DataError) -> Any:
        _rollback(local)
        return jsonify(error="A value is out of range or malformed for the team database."), 400

    @app.errorhandler(psycopg.IntegrityError)
    def clash(exc: psycopg.IntegrityError) -> Any:
        # A client key another member already used, or a race two writers lost: not
        # worth retrying as it is.
        _rollback(local)
        return jsonify(error="This request clashes with one already recorded (its "
                             "client_key is taken); send it with a new key."), 409

    @app.errorhandler(psycopg.Error)
    def database_error(exc: psycopg.Error) -> Any:
        # A broken connection is replaced on the next request; the client retries.
        if local.conn is not None and not local.conn.closed:
            local.conn.rollback()
        app.logger.warning("team database error: %s", type(exc).__name__)
        return jsonify(error="The team database is unavailable; retry shortly."), 503

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Any:
        return jsonify(error=exc.description), exc.code or 500
