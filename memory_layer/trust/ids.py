"""Inbox item ids as people type them: the full id or a unique prefix.

`memory-layer review` prints full ids but its examples (and people) use short ones;
an item may be a change proposal (``p...``), a conflict (``c...``) or a memory (hex,
which may also start with ``c``), so a prefix is looked up in all three.
"""

from __future__ import annotations

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.storage.conn import Conn, raw

# Where an inbox item's id can live, with the word an error uses for it.
_ITEM_TABLES = (("proposals", "proposal"), ("conflicts", "conflict"), ("memories", "memory"))
MIN_PREFIX = 4


def resolve_item_id(db: Conn, item_id: str) -> str:
    """The full id of an inbox item given its id or a unique prefix (at least 4
    characters, as for memories): a proposal, a conflict or a memory. A prefix that
    fits several items is refused rather than guessed."""
    item_id = (item_id or "").strip()
    if not item_id:
        raise InvalidInput("An inbox item id is required. `memory-layer review` lists them.")
    matches: list[tuple[str, str]] = []
    for table, kind in _ITEM_TABLES:
        # Table names are the fixed literals above, never user input.
        exact = raw(db).execute(f"SELECT id FROM {table} WHERE id = ?", [item_id]).fetchone()
        if exact:
            return str(exact[0])
        if len(item_id) >= MIN_PREFIX:
            rows = raw(db).execute(
                f"SELECT id FROM {table} WHERE substr(id, 1, ?) = ? LIMIT 3",
                [len(item_id), item_id],
            )
            matches.extend((kind, str(row[0])) for row in rows)
    if len(matches) == 1:
        return matches[0][1]
    if matches:
        found = ", ".join(f"{kind} {full}" for kind, full in matches)
        raise InvalidInput(
            f"Id prefix '{item_id}' fits several items ({found}); type more characters."
        )
    raise NotFound(
        f"No inbox item '{item_id}': no proposal, conflict or memory has that id"
        + (
            " or prefix"
            if len(item_id) >= MIN_PREFIX
            else f" (prefixes need {MIN_PREFIX}+ characters)"
        )
        + ". `memory-layer review` lists the inbox."
    )
