"""Settings: every config key with what it does, its default and the values it accepts,
editable and validated like the CLI; the engine and the model in words.

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
    from memory_layer.api import accepted_values, describe_setting

    out: dict[str, list[dict[str, Any]]] = {}
    for key in all_keys():
        default = get_value(key, DEFAULTS)
        current = get_value(key, config)
        out.setdefault(key.split(".")[0], []).append(
            {
                "key": key,
                "value": shown(current),
                "default": shown(default) or "(empty)",
                "changed": current != default,
                "kind": type(default).__name__,
                "help": describe_setting(key),
                "accepts": accepted_values(key, default),
            }
        )
    return [{"name": name, "keys": keys} for name, keys in out.items()]


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def engine_words(info: dict[str, Any], enabled: bool) -> str:
    """The engine's status (``engine.lifecycle.status``) as a sentence."""
    if not info.get("running"):
        if not enabled:
            return (
                "Turned off (engine.enabled is false): each hook and command loads what it "
                "needs in its own process."
            )
        return (
            "Not running. Claude Code sessions start it through the hooks; "
            "run memory-layer engine start to start it now."
        )
    if not info.get("ready"):
        return (
            f"Running as process {info.get('pid')}, but it did not answer a status request; "
            "memory-layer engine stop and a new session restart it."
        )
    queued = int(info.get("queued") or 0)
    return (
        f"Running as process {info['pid']} (version {info.get('version', '?')}) for "
        f"{_duration(float(info.get('uptime_s') or 0))}; idle for "
        f"{_duration(float(info.get('idle_s') or 0))}, it stops after "
        f"{_duration(float(info.get('idle_timeout_s') or 0))} without requests. "
        f"Model: {info.get('embedder') or 'none'}. Answered {info.get('requests', 0)} "
        f"requests; {queued} capture job{'' if queued == 1 else 's'} waiting."
    )


def engine_status(config: dict[str, Any]) -> dict[str, Any]:
    from memory_layer.engine.lifecycle import status

    info = status()
    return {"status": info, "words": engine_words(info, bool(config["engine"]["enabled"]))}


def _page(error: str | None = None, status: int = 200) -> tuple[str, int]:
    from memory_layer.api import embedder_status

    config = load_config()
    embedder(config)  # load once so the status below is the server's real one
    page = render_template(
        "settings.html",
        sections=sections(config),
        embedding=embedder_status(config),
        engine=engine_status(config),
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
