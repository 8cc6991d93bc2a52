"""Functions from the trust and outcomes layers, looked up when they are needed.

The hooks call ``trust.visibility.agent_visible``, ``trust.policy.initial_status``,
``outcomes.is_sinking``/``is_proven`` and ``outcomes.claude.on_hook_event``. A
layer that fails to import must not take injection or capture down with it: the
failure is logged and the hooks carry on without it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from memory_layer.hooks.log import log
from memory_layer.models import Memory


def optional(module: str, name: str) -> Callable[..., Any] | None:
    """A function from another layer if it exists yet; its absence is not an error."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None
        log(f"cannot import {module}", exc=exc)
        return None
    except Exception as exc:  # a broken layer must not take injection down with it
        log(f"cannot import {module}", exc=exc)
        return None
    fn = getattr(mod, name, None)
    return fn if callable(fn) else None


def bind(fn: Callable[..., Any], config: dict[str, Any]) -> Callable[[Memory], Any]:
    """``fn(memory, config)`` or ``fn(memory)``, decided once: inspecting the signature
    per candidate cost more than the recall itself."""
    try:
        params = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        params = 2
    if params >= 2:
        return lambda memory: fn(memory, config)
    return fn
