"""Outcome learning: tasks from Claude Code and Beads credit the memories that were used.

See docs/outcomes.md for the rules. Every door (CLI, hooks, MCP, dashboard) calls the
functions re-exported here, so the rules hold the same everywhere:

- ``list_tasks``, ``task_detail``, ``memory_outcomes``, ``learning_series`` (views);
- ``record_outcome``, ``correct_outcome``, ``undo_outcome`` (a task's outcome);
- ``memory_feedback``, ``undo_credit``, ``restore_sinking`` (one memory);
- ``is_proven``, ``is_sinking`` (marks used by injection);
- ``claude.on_hook_event`` / ``claude.reconcile`` and ``beads`` (the trackers).
"""

from __future__ import annotations

from memory_layer.outcomes.lifecycle import (
    OutcomeResult,
    correct_outcome,
    memory_feedback,
    record_outcome,
    restore_sinking,
    undo_credit,
    undo_outcome,
)
from memory_layer.outcomes.rules import (
    FAILURE,
    SUCCESS,
    close_outcome,
    is_proven,
    is_sinking,
    settings,
)
from memory_layer.outcomes.store import UnknownTask
from memory_layer.outcomes.views import (
    credit_notes,
    learning_series,
    list_tasks,
    memory_outcomes,
    task_detail,
)

__all__ = [
    "FAILURE",
    "SUCCESS",
    "OutcomeResult",
    "UnknownTask",
    "close_outcome",
    "correct_outcome",
    "credit_notes",
    "is_proven",
    "is_sinking",
    "learning_series",
    "list_tasks",
    "memory_feedback",
    "memory_outcomes",
    "record_outcome",
    "restore_sinking",
    "settings",
    "task_detail",
    "undo_credit",
    "undo_outcome",
]
