"""What the memory pages say about a record: whether agents receive it, its marks, and
the edit form's view of it (shared by the list, the detail page and the actions)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memory_layer import api
from memory_layer.models import Memory


def tags_field(memory: Memory) -> str:
    """The tags as the edit form shows them (and as a save that keeps them sends them)."""
    return ", ".join(memory.tags)


def form_version(memory: Memory) -> str:
    """A digest of the fields the edit form writes, carried in the form as ``version``.

    A digest rather than updated_at: outcome credits and uses bump updated_at without
    touching these fields, and must not make an open form unsaveable; a direct SQL
    change to the text does not bump it, and must still be caught."""
    fields = json.dumps([memory.text, list(memory.tags), memory.confidence])
    return hashlib.sha256(fields.encode("utf-8")).hexdigest()[:16]


def standing(memory: Memory, config: dict[str, Any]) -> dict[str, Any]:
    """Whether agents receive the memory and why not (the predicate every door that
    hands records to agents uses), and its proven/sinking marks."""
    marks = [
        mark
        for mark, test in (("proven", api.is_proven), ("sinking", api.is_sinking))
        if test(memory, config)
    ]
    return {
        "withheld": api.agent_withheld_reason(memory, config),
        "flags": api.agent_flags(memory, config),
        "marks": marks,
    }
