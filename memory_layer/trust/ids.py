"""Inbox item ids as people type them: the full id or a unique prefix.

`memory-layer review` prints full ids but its examples (and people) use short ones;
an item may be a change proposal (``p...``), a conflict (``c...``) or a memory (hex,
which may also start with ``c``), so a prefix is looked up in all three.
"""

from __future__ import annotations

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.storage import conflicts, proposals, records
from memory_layer.storage.conn import Conn

# Where an inbox item's id can live, in the order looked up, with the word an error
# uses for it.
_ITEM_KINDS = ((proposals, "proposal"), (conflicts, "conflict"), (records, "memory"))
MIN_PREFIX = 4
# How many ids a prefix may fit per kind: more than one is refused anyway.
_PREFIX_FITS = 3


def resolve_item_id(db: Conn, item_id: str) -> str:
    """The full id of an inbox item given its id or a unique prefix (at least 4
    characters, as for memories): a proposal, a conflict or a memory. A prefix that
    fits several items is refused rather than guessed."""
    item_id = (item_id or "").strip()
    if not item_id:
        raise InvalidInput("An inbox item id is required. `memory-layer review` lists them.")
    matches: list[tuple[str, str]] = []
    prefix_fits = _PREFIX_FITS if len(item_id) >= MIN_PREFIX else 0
    for store, kind in _ITEM_KINDS:
        found = store.ids_matching(db, item_id, prefix_fits)
        if found == [item_id]:
            # The exact id (an id a prefix fits is longer): it wins over other kinds' fits.
            return item_id
        matches.extend((kind, full) for full in found)
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
