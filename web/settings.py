"""Settings: every config key shown with its default, editable, validated like the CLI.

Writes go through ``memory_layer.config.set_value``/``unset_value``, the functions
behind `memory-layer config set/unset`, so the same checks apply.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from memory_layer.config import (
    DEFAULTS,
    all_keys,
    coerce,
    get_value,
    load_config,
    set_value,
    unset_value,
)
from memory_layer.errors import ConfigError
from memory_layer.web.store import embedder

bp = Blueprint("settings", __name__)


def shown(value: Any) -> str:
    """A value as the form shows it, and as `memory-layer config set` would accept it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def sections(config: dict[str, Any]) -> list[dict[str, Any]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for key in all_keys():
        default = get_value(key, DEFAULTS)
        current = get_value(key, config)
        out.setdefault(key.split(".")[0], []).append(
            {
                "key": key,
                "value": shown(current),
                "default": shown(default),
                "changed": current != default,
                "kind": type(default).__name__,
            }
        )
    return [{"name": name, "keys": keys} for name, keys in out.items()]


def engine_status() -> dict[str, Any]:
    from memory_layer.engine.lifecycle import status

    return {"status": status()}


def _page(error: str | None = None, status: int = 200) -> tuple[str, int]:
    from memory_layer.api import embedder_status

    config = load_config()
    embedder(config)  # load once so the status below is the server's real one
    page = render_template(
        "settings.html",
        sections=sections(config),
        embedding=embedder_status(config),
        engine=engine_status(),
        error=error,
    )
    return page, status


@bp.get("/settings")
def index() -> tuple[str, int]:
    return _page()


@bp.post("/settings")
def save() -> Response | tuple[str, int]:
    section = request.form.get("section", "")
    keys = [k for k in all_keys() if k.split(".")[0] == section]
    if not keys:
        raise ConfigError(f"Unknown settings section '{section}'.")
    config = load_config()
    changed = {
        key: request.form[key]
        for key in keys
        if key in request.form and request.form[key].strip() != shown(get_value(key, config))
    }
    try:
        # Check every value before writing any, so a bad one leaves the file untouched.
        for key, value in changed.items():
            coerce(key, value)
    except ConfigError as exc:
        return _page(error=str(exc), status=400)
    for key, value in changed.items():
        set_value(key, value)
    flash(f"Saved {len(changed)} setting(s) in {section}." if changed else "Nothing changed.")
    return redirect(url_for("settings.index") + f"#{section}")


@bp.post("/settings/reset")
def reset() -> Response:
    key = request.form.get("key", "")
    unset_value(key)
    flash(f"{key} is back to its default.")
    return redirect(url_for("settings.index") + f"#{key.split('.')[0]}")
