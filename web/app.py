"""The Flask application factory and its error pages."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterable
from typing import Any

from flask import Flask, render_template
from werkzeug.exceptions import HTTPException

from memory_layer.errors import (
    ConfigError,
    DatabaseError,
    Forbidden,
    InvalidInput,
    MemoryLayerError,
    NotFound,
    TeamUnavailable,
)
from memory_layer.web import security
from memory_layer.web.store import close_db

# Only this module turns library errors into HTTP statuses.
STATUS_FOR: tuple[tuple[type[MemoryLayerError], int], ...] = (
    (NotFound, 404),
    (Forbidden, 403),
    (TeamUnavailable, 503),
    (InvalidInput, 400),
    (ConfigError, 400),
    (DatabaseError, 503),
)


def status_for(exc: MemoryLayerError) -> int:
    for kind, status in STATUS_FOR:
        if isinstance(exc, kind):
            return status
    return 400


def create_app(
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    token: str | None = None,
    allow_hosts: Iterable[str] = (),
) -> Flask:
    """Build the dashboard for a server bound to ``host:port``.

    ``token``: when set, every request must present it (header or login cookie).
    ``allow_hosts``: extra Host names to accept besides loopback and ``host``.
    """
    app = Flask(__name__)
    app.config.update(
        # A fresh key per process: sessions (CSRF tokens) end when the server stops.
        SECRET_KEY=secrets.token_hex(32),
        # Cookies are shared by every port of a host, so name ours after the port.
        SESSION_COOKIE_NAME=f"memory_layer_session_{port}",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        MAX_CONTENT_LENGTH=1024 * 1024,
        ML_HOST=host,
        ML_PORT=port,
        ML_TOKEN=token or None,
        ML_ALLOWED_HOSTS=security.allowed_hosts(host, port, allow_hosts),
    )
    app.teardown_appcontext(close_db)
    app.extensions["ml_login_throttle"] = security.LoginThrottle()
    security.install(app)
    _register_filters(app)
    _register_errors(app)

    from memory_layer.web import (
        auth,
        overview,
        review,
        settings,
        tasks,
        team,
        views_actions,
        views_memories,
    )

    for module in (auth, overview, views_memories, views_actions, tasks, review, team, settings):
        app.register_blueprint(module.bp)
    return app


def _register_errors(app: Flask) -> None:
    @app.errorhandler(MemoryLayerError)
    def library_error(exc: MemoryLayerError) -> tuple[str, int]:
        status = status_for(exc)
        return render_template("error.html", status=status, message=str(exc)), status

    @app.errorhandler(sqlite3.DatabaseError)
    def store_error(exc: sqlite3.DatabaseError) -> tuple[str, int]:
        # A store that opens but fails on a read (malformed pages, a lock held too long)
        # surfaces as sqlite3's error, not the library's: give it the library's message.
        # Integrity and programming errors are bugs in a query, not the store: left as 500.
        from memory_layer.api import explain_error, store_trouble
        from memory_layer.paths import db_path

        if isinstance(exc, (sqlite3.IntegrityError, sqlite3.ProgrammingError)) or not store_trouble(
            exc
        ):
            raise exc  # "no such column" and the like: a bug in our query, a 500

        return library_error(explain_error(exc, db_path()))

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Any:
        if exc.code is None or exc.code < 400:
            return exc
        response = exc.get_response()
        response.data = render_template(
            "error.html", status=exc.code, message=exc.description or exc.name
        )
        response.content_type = "text/html; charset=utf-8"
        return response


def _register_filters(app: Flask) -> None:
    from memory_layer.web import charts

    app.jinja_env.filters["short"] = lambda text, width=120: _short(str(text), int(width))
    app.jinja_env.filters["fmt"] = _fmt
    app.jinja_env.filters["when"] = lambda value: (value or "")[:19].replace("T", " ")
    app.jinja_env.globals["charts"] = charts


def _short(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
