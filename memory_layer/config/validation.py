"""Validation of config.yaml values against the type and range of their defaults.

Separate from ``memory_layer.config`` because a hook seldom needs it: the overrides
are validated once when config.yaml changes, then every process reads them from
run/config-cache.json. Only a changed file, `memory-layer config set` and the
dashboard's settings page load this module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from memory_layer.config import DEFAULTS, _lookup, all_keys
from memory_layer.errors import ConfigError
from memory_layer.paths import config_path


def unknown_key(key: str) -> ConfigError:
    import difflib

    near = difflib.get_close_matches(key, all_keys(), n=1)
    hint = f" Did you mean '{near[0]}'?" if near else " `memory-layer config keys` lists every setting."
    return ConfigError(f"Unknown config key '{key}'.{hint}")


# Settings that take one of a few words; anything else would only fail later, in a hook.
CHOICES: dict[str, tuple[str, ...]] = {
    "trust.hook_writes": ("active", "pending"),
    "trust.other_writes": ("active", "pending"),
    "trust.external_writes": ("active", "pending"),
    "trust.overdue": ("withhold", "flag"),
    "trust.conflicts": ("show", "hide"),
}


# Documented ranges (README "Configuration", docs/outcomes.md), inclusive: a value
# outside is refused when it is set, never clamped later. Keys are exact, or a section
# ending in "." for every key in it. Weights are shares of the blend; a boost or a
# category weight multiplies a score (1.0 = none), so 0 would erase a category and
# 5 bury everything else.
RANGES: dict[str, tuple[float, float]] = {
    "weights.": (0.0, 1.0),
    "boosts.": (0.1, 3.0),
    "hooks.category_weights.": (0.1, 3.0),
    "recency.half_life_days": (0.1, 3650.0),
    "retrieval.keyword_weight": (0.0, 10.0),
    "retrieval.vector_weight": (0.0, 10.0),
    "retrieval.min_similarity": (0.0, 1.0),
    "retrieval.relative_floor": (0.0, 1.0),
    "retrieval.relevance_band": (0.0, 1.0),
    "retrieval.vector_common_share": (0.0, 1.0),
    # Under 1: a reply inherits less than the turn it answers has (recall also lists it
    # after that turn: retrieval/threads.after_predecessors).
    "retrieval.thread_share": (0.0, 0.95),
    "retrieval.min_answer": (0.0, 1.0),
    "hooks.min_cosine": (0.0, 1.0),
    "hooks.min_keyword": (0.0, 1.0),
    "hooks.min_score": (0.0, 1.0),
    "hooks.min_answer": (0.0, 1.0),
    "hooks.min_capture_confidence": (0.0, 1.0),
    "hooks.session_start_min_confidence": (0.0, 1.0),
    "hooks.session_start_min_quality": (0.0, 3.0),  # quality x category weight (<= 3)
    "remember.duplicate_threshold": (0.0, 1.0),
    "remember.default_confidence": (0.0, 1.0),
    "outcomes.success_delta": (0.0, 1.0),
    "outcomes.failure_delta": (-1.0, 0.0),
    "outcomes.floor": (-1.0, 1.0),
    "outcomes.shown_weight": (0.0, 1.0),
    "outcomes.unobserved_weight": (0.0, 1.0),
    "outcomes.proven_min_score": (-1.0, 1.0),
    "outcomes.explore": (0.0, 1.0),
    "remember.max_chars": (100, 100_000),
    "trust.max_open_proposals": (1, 500),
}


def value_range(key: str) -> tuple[float, float] | None:
    """The inclusive range a numeric setting must lie in, if it has one."""
    if key in RANGES:
        return RANGES[key]
    section = key.rsplit(".", 1)[0] + "."
    return RANGES.get(section)


def check_range(key: str, typed: float) -> None:
    bounds = value_range(key)
    if bounds is not None and not bounds[0] <= typed <= bounds[1]:
        low, high = bounds
        raise ConfigError(
            f"Config value '{key}' must be from {low:g} to {high:g}, got {typed:g} "
            f"(default: {_lookup(DEFAULTS, key)!r})."
        )


# How a value's expected type reads in an error message ("must be a whole number").
KIND_NAMES: dict[type, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    list: "a list (comma-separated)",
    str: "text",
}


def coerce(key: str, value: Any) -> Any:
    """Validate ``value`` for ``key`` against its default; return the typed value."""
    try:
        default = _lookup(DEFAULTS, key)
    except KeyError:
        raise unknown_key(key) from None
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
            f"Config value '{key}' must be {KIND_NAMES[type(default)]}, got {value!r}."
        ) from None
    if key in CHOICES:
        typed = typed.strip().lower()
        if typed not in CHOICES[key]:
            raise ConfigError(
                f"Config value '{key}' must be one of {', '.join(CHOICES[key])}, got {value!r}."
            )
    if key == "embedding.model":
        from memory_layer.embedders import check_name

        try:
            typed = check_name(typed)
        except ValueError as exc:
            raise ConfigError(f"Config value 'embedding.model' {exc}") from None
    if isinstance(typed, float) and not math.isfinite(typed):
        # nan slips through every comparison and turns each score into nan.
        raise ConfigError(f"Config value '{key}' must be a finite number, got {value!r}.")
    if isinstance(typed, (int, float)) and not isinstance(typed, bool):
        # A setting whose default is negative (outcomes.failure_delta, outcomes.floor)
        # may be negative; every other number may not.
        if typed < 0 and not default < 0:
            raise ConfigError(f"Config value '{key}' must not be negative, got {typed}.")
        if key.startswith("boosts.") and typed == 0:
            raise ConfigError(f"Config value '{key}' must be above 0 (1.0 means no boost).")
        if key == "recency.half_life_days" and typed == 0:
            raise ConfigError("recency.half_life_days must be above 0 (e.g. 30).")
        check_range(key, typed)
    return typed


def validate_tree(tree: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(tree, Mapping):
        where = prefix.rstrip(".") or "the top level"
        raise ConfigError(f"config.yaml: {where} must be a mapping of keys to values.")
    out: dict[str, Any] = {}
    for name, value in tree.items():
        full = f"{prefix}{name}"
        try:
            default = _lookup(DEFAULTS, full)
        except KeyError:
            raise unknown_key(full) from None
        if isinstance(default, Mapping):
            out[name] = validate_tree(value if value is not None else {}, full + ".")
        else:
            out[name] = coerce(full, value)
    return out
