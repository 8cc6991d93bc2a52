"""Outcome learning: tasks from Claude Code and Beads credit the memories that were used.

See docs/outcomes.md for the rules. The public functions are re-exported here so
every door (CLI, hooks, MCP, dashboard) calls the same code.
"""

from __future__ import annotations

from memory_layer.outcomes.rules import (
    FAILURE,
    SUCCESS,
    close_outcome,
    is_proven,
    is_sinking,
    settings,
)

__all__ = [
    "FAILURE",
    "SUCCESS",
    "close_outcome",
    "is_proven",
    "is_sinking",
    "settings",
]
