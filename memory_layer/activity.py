"""Placeholder until the storage branch lands: replaced at merge."""

from memory_layer.hooks.store import record_usage, shown_in_context  # noqa: F401
