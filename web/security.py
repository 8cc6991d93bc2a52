"""Defences for a server that every web page the user visits can reach.

A page on any origin can make the browser send requests to 127.0.0.1, so every
request is checked for: the Host header (DNS rebinding), an access token (when the
dashboard is exposed beyond loopback, or a token was given), and, for anything that
changes state, the Origin/Referer/Sec-Fetch-Site headers and a CSRF token.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from urllib.parse import urlsplit

from flask import Flask, Response, abort, redirect, request, session, url_for

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
TOKEN_HEADER = "X-Memory-Layer-Token"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
# Reachable without the access token: the login form itself and the stylesheet.
OPEN_ENDPOINTS = frozenset({"auth.login", "auth.login_form", "static"})

# Off loopback the token is all that stands between the network and the store: a short
# one falls to guessing. 16 characters of `openssl rand -hex 16` (32) are far beyond it.
MIN_EXPOSED_TOKEN_CHARS = 16
# Failed logins allowed per client address in LOGIN_WINDOW_S; past that the login form
# answers 429 (with Retry-After) until the oldest failure leaves the window, whatever is
# typed, so guessing runs at most this many tries a minute.
LOGIN_FAILURES = 5
LOGIN_WINDOW_S = 60.0
# Addresses remembered at once: a flood of new addresses cannot grow memory without end.
LOGIN_TRACKED_CLIENTS = 4096

# No inline script or style anywhere: the pages need no JavaScript at all.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'none'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def is_loopback(host: str) -> bool:
    name = host.strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_label(host: str) -> str:
    """How an address appears in a Host header: IPv6 in brackets."""
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def allowed_hosts(bind_host: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """Host header values accepted: the loopback names and the bound address, with port.

    Port 80 is also accepted without a port because browsers omit the default port.
    """
    names = {*LOOPBACK_NAMES, host_label(bind_host), *(host_label(h) for h in extra)}
    names = {n.lower() for n in names}
    allowed = {f"{name}:{port}" for name in names}
    if port == 80:
        allowed |= names
    return frozenset(allowed)


def token_problem(host: str, token: str | None) -> str | None:
    """Why ``serve`` must not start with this token on this address, or None."""
    if is_loopback(host):
        return None
    if not token:
        return "it is reachable from other machines and no access token is set"
    if len(token) < MIN_EXPOSED_TOKEN_CHARS:
        return (
            f"the access token is {len(token)} characters; off loopback it must be at least "
            f"{MIN_EXPOSED_TOKEN_CHARS} (e.g. `openssl rand -hex 16`)"
        )
    return None


class LoginThrottle:
    """Failed logins per client address in a sliding window (the server is threaded)."""

    def __init__(
        self, failures: int = LOGIN_FAILURES, window_s: float = LOGIN_WINDOW_S
    ) -> None:
        self.failures = failures
        self.window_s = window_s
        self.lock = threading.Lock()
        self.seen: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self.seen.get(client, deque())
        while times and now - times[0] >= self.window_s:
            times.popleft()
        return times

    def retry_after(self, client: str) -> int:
        """Seconds until ``client`` may try again; 0 when it may now."""
        now = time.monotonic()
        with self.lock:
            times = self._recent(client, now)
            if len(times) < self.failures:
                return 0
            return max(1, int(self.window_s - (now - times[0]) + 0.999))

    def failed(self, client: str) -> None:
        now = time.monotonic()
        with self.lock:
            times = self._recent(client, now)
            times.append(now)
            self.seen[client] = times
            self.seen.move_to_end(client)
            while len(self.seen) > LOGIN_TRACKED_CLIENTS:
                self.seen.popitem(last=False)

    def succeeded(self, client: str) -> None:
        with self.lock:
            self.seen.pop(client, None)


def cookie_value(token: str) -> str:
    """What the login cookie holds: a digest, so the token itself never sits in a cookie."""
    return hashlib.sha256(b"memory-layer-web:" + token.encode("utf-8")).hexdigest()


def same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def has_access(token: str) -> bool:
    if same(request.headers.get(TOKEN_HEADER), token):
        return True
    bearer = request.headers.get("Authorization", "")
    if bearer.startswith("Bearer ") and same(bearer[7:].strip(), token):
        return True
    return same(request.cookies.get(token_cookie_name()), cookie_value(token))


def token_cookie_name() -> str:
    from flask import current_app

    return f"memory_layer_token_{current_app.config['ML_PORT']}"


def csrf_token() -> str:
    """The session's CSRF token, created on first use (templates call this)."""
    token = session.get("csrf")
    if not token:
        token = secrets.token_urlsafe(32)
        session["csrf"] = token
    return str(token)


def _origin_ok(value: str, hosts: frozenset[str]) -> bool:
    parts = urlsplit(value)
    return parts.scheme in {"http", "https"} and parts.netloc.lower() in hosts


def check_request() -> Response | None:
    """Runs before every request; aborts with a clear status when a check fails."""
    from flask import current_app

    hosts: frozenset[str] = current_app.config["ML_ALLOWED_HOSTS"]
    if request.host.lower() not in hosts:
        abort(400, description=f"Host '{request.host}' is not allowed (DNS rebinding guard).")
    token = current_app.config.get("ML_TOKEN")
    if token and request.endpoint not in OPEN_ENDPOINTS and not has_access(token):
        if request.method in SAFE_METHODS:
            return redirect(url_for("auth.login_form", next=request.full_path.rstrip("?")))
        abort(401, description="An access token is required. Log in first.")
    if request.method in SAFE_METHODS:
        return None
    if request.headers.get("Sec-Fetch-Site") == "cross-site":
        abort(403, description="Cross-site requests are refused.")
    origin = request.headers.get("Origin")
    referer = request.headers.get("Referer")
    if origin is not None:
        if not _origin_ok(origin, hosts):
            abort(403, description=f"Origin '{origin}' is not allowed.")
    elif referer is not None:
        if not _origin_ok(referer, hosts):
            abort(403, description="The Referer is not this dashboard.")
    else:
        abort(403, description="Requests that change data must carry an Origin or Referer.")
    sent = request.form.get(CSRF_FIELD) or request.headers.get(CSRF_HEADER)
    expected = session.get("csrf")
    if not expected or not same(sent, str(expected)):
        abort(
            400,
            description="The form's security token is missing or expired. Reload the page "
            "and try again.",
        )
    return None


def add_headers(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    # Never let another origin read our answers.
    response.headers.pop("Access-Control-Allow-Origin", None)
    return response


def install(app: Flask) -> None:
    app.before_request(check_request)
    app.after_request(add_headers)
    app.jinja_env.globals["csrf_token"] = csrf_token
