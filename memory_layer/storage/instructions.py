"""Imported instruction-file items (table ``instruction_items``, migration m090).

One row per item of an imported CLAUDE.md / AGENTS.md / … file: which memory it became
and what its text was, so a re-import knows what is unchanged, changed or gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.storage.conn import Conn, raw

_COLUMNS = "id, path, project, section, position, text, text_hash, stored_hash, memory_id, owned, imported_at"


def _item(row: tuple) -> ImportedItem:  # type: ignore[type-arg]
    values = list(row)
    values[9] = bool(values[9])
    return ImportedItem(*values)


@dataclass(frozen=True)
class ImportedItem:
    id: int
    path: str
    project: str | None
    section: str
    position: int
    text: str
    text_hash: str
    stored_hash: str
    memory_id: str
    owned: bool
    imported_at: str


def items_of(db: Conn, path: str) -> list[ImportedItem]:
    """The items recorded for ``path`` at its last import, in file order."""
    rows = raw(db).execute(
        f"SELECT {_COLUMNS} FROM instruction_items WHERE path = ? ORDER BY position, id", [path]
    )
    return [_item(row) for row in rows.fetchall()]


def item_for_memory(db: Conn, memory_id: str) -> ImportedItem | None:
    """Where an imported memory came from (its file and section), if it was imported."""
    row = (
        raw(db)
        .execute(
            f"SELECT {_COLUMNS} FROM instruction_items WHERE memory_id = ? ORDER BY id DESC",
            [memory_id],
        )
        .fetchone()
    )
    return _item(row) if row else None


def add_item(
    db: Conn,
    *,
    path: str,
    project: str | None,
    section: str,
    position: int,
    text: str,
    text_hash: str,
    stored_hash: str,
    memory_id: str,
    owned: bool,
    at: str,
) -> None:
    raw(db).execute(
        "INSERT INTO instruction_items(path, project, section, position, text, text_hash, "
        "stored_hash, memory_id, owned, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(path, text_hash) DO UPDATE SET section = excluded.section, "
        "position = excluded.position, text = excluded.text, stored_hash = excluded.stored_hash, "
        "memory_id = excluded.memory_id, owned = excluded.owned, "
        "imported_at = excluded.imported_at",
        [path, project, section, position, text, text_hash, stored_hash, memory_id, int(owned), at],
    )


def move_item(db: Conn, item_id: int, *, section: str, position: int) -> None:
    """An unchanged item found under another heading or at another place in the file."""
    raw(db).execute(
        "UPDATE instruction_items SET section = ?, position = ? WHERE id = ?",
        [section, position, item_id],
    )


def drop_item(db: Conn, item_id: int) -> None:
    raw(db).execute("DELETE FROM instruction_items WHERE id = ?", [item_id])
