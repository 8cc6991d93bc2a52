"""The use cases: the one place every door gets them from.

The CLI, the hooks, the MCP server, the dashboard, the warm engine, the Markdown
mirror and import parse their input, call a function here and format the result.
None of them writes SQL or restates a rule: what an agent may see, how a write is
trusted, what counts as a surfacing and how often an agent may report are decided
here (or in the layer this delegates to), once. A layer test (tests/test_layers.py)
holds the doors to importing use cases from this package only.

Importing it costs little: the hook path imports it, so every use case imports its
layers when it runs.
"""

from __future__ import annotations

from memory_layer.api.outcomes import report_outcome
from memory_layer.api.reading import (
    AGENT,
    AUDIENCES,
    PERSON,
    SURFACE_KINDS,
    agent_flags,
    agent_scope,
    agent_withheld_reason,
    check_query,
    recall,
    recall_records,
    record_surfacing,
    scope_for,
)
from memory_layer.api.review import decide, dispute, inbox, verify
from memory_layer.api.writing import (
    Remembered,
    check_memory_input,
    edit,
    forget,
    is_proposal,
    purge,
    remember,
    remember_record,
    restore,
)

__all__ = [
    "AGENT",
    "AUDIENCES",
    "PERSON",
    "SURFACE_KINDS",
    "Remembered",
    "agent_flags",
    "agent_scope",
    "agent_withheld_reason",
    "check_memory_input",
    "check_query",
    "decide",
    "dispute",
    "edit",
    "forget",
    "inbox",
    "is_proposal",
    "purge",
    "recall",
    "recall_records",
    "record_surfacing",
    "remember",
    "remember_record",
    "report_outcome",
    "restore",
    "scope_for",
    "verify",
]
