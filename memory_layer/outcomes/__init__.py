"""Outcome learning: tasks from Claude Code and Beads credit the memories that were used.

See docs/outcomes.md for the rules. Every door (CLI, hooks, MCP, dashboard) calls the
functions re-exported here, so the rules hold the same everywhere:

- ``list_tasks``, ``task_detail``, ``memory_outcomes``, ``learning_series`` (views);
- ``record_outcome``, ``correct_outcome``, ``undo_outcome`` (a task's outcome);
- ``memory_feedback``, ``undo_credit``, ``restore_sinking`` (one memory);
- ``is_proven``, ``is_sinking`` (marks used by injection);
- ``claude.on_task_signal`` / ``claude.reconcile`` and ``beads`` (the trackers), fed
  typed values parsed once at the door (``signals.TaskSignal``, ``beads_issue``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Resolved on first use (module ``__getattr__``), not at import: the hook path needs
# only ``is_proven``/``is_sinking`` (rules.py, no database code) and importing every
# module here cost a hook 15-30 ms.
_HOMES = {
    "OutcomeResult": "lifecycle",
    "correct_outcome": "manual",
    "memory_feedback": "manual",
    "record_outcome": "manual",
    "restore_sinking": "manual",
    "undo_credit": "manual",
    "undo_outcome": "manual",
    "FAILURE": "rules",
    "SUCCESS": "rules",
    "close_outcome": "rules",
    "is_proven": "rules",
    "is_sinking": "rules",
    "settings": "rules",
    "UnknownTask": "store",
    "credit_notes": "views",
    "learning_series": "views",
    "list_tasks": "views",
    "memory_outcomes": "views",
    "task_detail": "views",
}

if TYPE_CHECKING:
    from memory_layer.outcomes.lifecycle import OutcomeResult
    from memory_layer.outcomes.manual import (
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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


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
