"""The login form for a token-protected dashboard (non-loopback binds, or --token)."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, Response, current_app, redirect, render_template, request, url_for

from memory_layer.web.security import LoginThrottle, cookie_value, same, token_cookie_name

bp = Blueprint("auth", __name__)


def _local_target(target: str | None) -> str:
    """Only same-site paths: never redirect to another host after login."""
    if not target:
        return url_for("overview.index")
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return url_for("overview.index")
    # Browsers read a backslash as "/" and drop tabs and newlines, so "/<backslash>evil"
    # and "/<tab>/evil" would both lead off site.
    if "\\" in target or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return url_for("overview.index")
    return target


@bp.get("/login")
def login_form() -> str:
    return render_template("login.html", next=request.args.get("next", ""), error=None)


@bp.post("/login")
def login() -> Response | tuple[str, int] | tuple[str, int, dict[str, str]]:
    token = current_app.config.get("ML_TOKEN")
    if not token:
        return redirect(url_for("overview.index"))
    throttle: LoginThrottle = current_app.extensions["ml_login_throttle"]
    client = request.remote_addr or "unknown"
    # Checked before the token: during a lockout even the right token waits, so the
    # answer tells a guesser nothing.
    wait = throttle.retry_after(client)
    if wait:
        error = f"Too many wrong tokens from this address. Try again in {wait} seconds."
        page = render_template("login.html", next=request.form.get("next", ""), error=error)
        return page, 429, {"Retry-After": str(wait)}
    if not same(request.form.get("token", ""), token):
        throttle.failed(client)
        page = render_template(
            "login.html", next=request.form.get("next", ""), error="That token is not right."
        )
        return page, 401
    throttle.succeeded(client)
    response = redirect(_local_target(request.form.get("next")))
    response.set_cookie(token_cookie_name(), cookie_value(token), httponly=True, samesite="Strict")
    return response


@bp.post("/logout")
def logout() -> Response:
    response = redirect(url_for("auth.login_form"))
    response.delete_cookie(token_cookie_name())
    return response
