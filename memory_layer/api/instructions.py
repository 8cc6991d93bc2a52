"""Importing what a team already wrote down: CLAUDE.md, AGENTS.md, ``.cursorrules``,
``.github/copilot-instructions.md`` and CONTRIBUTING files, one memory per item.

Every write goes through the ordinary use cases, so the trust machinery and the
operations log see it: new items through ``remember`` (source ``import:<file>``, a
trusted source), a changed item through ``edit`` (the log keeps the old text), a
removed item through ``forget`` (retired, restorable). A memory a person edited since
it was imported is never overwritten: the file's new wording becomes a change
proposal in the review inbox instead. Importing the same file twice changes nothing.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from memory_layer.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.capture.instructions import Instruction
    from memory_layer.storage.conn import Conn
    from memory_layer.storage.instructions import ImportedItem

# The files a directory is searched for, in this order (Cursor's rule files by glob).
KNOWN_FILES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    "AGENTS.md",
    "GEMINI.md",
    ".cursorrules",
    ".windsurfrules",
    ".github/copilot-instructions.md",
    "CONTRIBUTING.md",
    ".github/CONTRIBUTING.md",
    "docs/CONTRIBUTING.md",
)
KNOWN_GLOBS = (".cursor/rules/*.mdc", ".github/instructions/*.instructions.md")
# A changed item is the same item reworded when its words are at least this similar to
# a removed one (difflib ratio): "Python 3.9-3.13 support" -> "Python 3.10-3.13 support".
REWORD_RATIO = 0.6
MAX_FILE_BYTES = 1_000_000
# Actions a change reports, in the order a summary lists them.
ACTIONS = ("new", "updated", "proposed", "retired", "released", "unchanged", "moved", "existing")


@dataclass(frozen=True)
class ItemChange:
    """What the import did (or, with ``dry_run``, would do) to one item."""

    action: str  # one of ACTIONS
    text: str
    category: str
    section: str
    memory_id: str | None = None
    old_text: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


@dataclass(frozen=True)
class FileImport:
    path: str
    project: str | None
    items: int
    changes: tuple[ItemChange, ...] = field(default=())

    def counts(self) -> dict[str, int]:
        return {a: n for a in ACTIONS if (n := sum(c.action == a for c in self.changes))}

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "project": self.project,
            "items": self.items,
            "counts": self.counts(),
            "changes": [c.to_dict() for c in self.changes],
        }


def instruction_files(paths: list[str]) -> list[Path]:
    """The files named, with each directory replaced by the instruction files in it.
    Raises ``InvalidInput`` naming what is missing."""
    found: list[Path] = []
    for given in paths:
        path = Path(given).expanduser()
        if path.is_dir():
            inside = [path / name for name in KNOWN_FILES if (path / name).is_file()]
            for pattern in KNOWN_GLOBS:
                inside.extend(sorted(path.glob(pattern)))
            if not inside:
                raise InvalidInput(
                    f"No instruction file in {given}: looked for {', '.join(KNOWN_FILES)} "
                    f"and {', '.join(KNOWN_GLOBS)}. Name the file to import it."
                )
            found.extend(inside)
        elif path.is_file():
            found.append(path)
        else:
            raise InvalidInput(f"No such file or directory: {given}")
    unique: dict[str, Path] = {}
    for path in found:
        unique.setdefault(str(path.resolve()), path.resolve())
    return list(unique.values())


def _read(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InvalidInput(
            f"{path} is {size} bytes; instruction files over {MAX_FILE_BYTES} bytes are not "
            "imported. Split it, or import the sections you want as separate files."
        )
    data = path.read_bytes()
    if b"\x00" in data:
        raise InvalidInput(f"{path} is a binary file, not an instruction file.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})."
        ) from None


def default_project(path: Path) -> str | None:
    """The project a file's directory belongs to; a file in ``~/.claude`` (the user's
    own CLAUDE.md, read in every project) is global."""
    from memory_layer.project import project_for

    claude_home = Path(os.path.expanduser("~/.claude")).resolve()
    if path.parent == claude_home:
        return None
    directory = path.parent
    if directory.name in (".github", ".claude", "rules", "instructions", "docs"):
        directory = directory.parent
        if directory.name == ".cursor":
            directory = directory.parent
    return project_for(directory)


def import_instructions(
    db: Conn,
    paths: list[str],
    *,
    config: dict[str, Any],
    project: str | None = None,
    is_global: bool = False,
    dry_run: bool = False,
    embedder: Any = None,
) -> list[FileImport]:
    """Import every file ``paths`` names (directories: their instruction files).

    ``project`` / ``is_global`` override the project each file's directory gives."""
    if is_global and project:
        raise InvalidInput("Use either --project or --global, not both.")
    files = instruction_files(paths)
    texts = [(path, _read(path)) for path in files]  # every file readable before any write
    reports = []
    for path, text in texts:
        target = None if is_global else (project or default_project(path))
        reports.append(
            _import_file(
                db, path, text, project=target, config=config, dry_run=dry_run, embedder=embedder
            )
        )
    return reports


def _import_file(
    db: Conn,
    path: Path,
    text: str,
    *,
    project: str | None,
    config: dict[str, Any],
    dry_run: bool,
    embedder: Any,
) -> FileImport:
    from memory_layer.capture.instructions import split_instructions
    from memory_layer.storage.instructions import items_of
    from memory_layer.storage.records import transaction

    items = split_instructions(text, path.name)
    writer = _Writer(db, str(path), project, config, embedder, dry_run)
    with transaction(db):  # one file is imported whole or not at all
        old = items_of(db, str(path))
        old_by_hash = {row.text_hash: row for row in old}
        keys = {item.key for item in items}
        fresh = [(n, item) for n, item in enumerate(items) if item.key not in old_by_hash]
        gone = [row for row in old if row.text_hash not in keys]
        pairs = _pair_rewordings(gone, fresh)
        changes: list[ItemChange] = []
        for position, item in enumerate(items):
            row = old_by_hash.get(item.key)
            if row is not None:
                changes.append(writer.keep(row, item, position))
            elif position in pairs:
                changes.append(writer.reword(pairs[position], item, position))
            else:
                changes.append(writer.add(item, position))
        paired = {row.id for row in pairs.values()}
        changes.extend(writer.remove(row) for row in gone if row.id not in paired)
    return FileImport(str(path), project, len(items), tuple(changes))


def _pair_rewordings(
    gone: list[ImportedItem], fresh: list[tuple[int, Instruction]]
) -> dict[int, ImportedItem]:
    """Removed items matched to new items in the same section that reword them, best
    match first: {position of the new item: the old row}."""
    ranked = []
    for row in gone:
        for position, item in fresh:
            if item.section != row.section:
                continue
            ratio = difflib.SequenceMatcher(None, row.text.lower(), item.text.lower()).ratio()
            if ratio >= REWORD_RATIO:
                ranked.append((ratio, row, position))
    ranked.sort(key=lambda r: (-r[0], r[2], r[1].id))
    pairs: dict[int, ImportedItem] = {}
    used: set[int] = set()
    for _ratio, row, position in ranked:
        if row.id not in used and position not in pairs:
            used.add(row.id)
            pairs[position] = row
    return pairs


class _Writer:
    """The writes of one file's import, through the ordinary use cases; with
    ``dry_run`` it only says what each would do."""

    def __init__(
        self,
        db: Conn,
        path: str,
        project: str | None,
        config: dict[str, Any],
        embedder: Any,
        dry_run: bool,
    ) -> None:
        from memory_layer.models import now_stamp

        self.db, self.path, self.project = db, path, project
        self.config, self.embedder, self.dry_run = config, embedder, dry_run
        self.name = Path(path).name
        self.source = f"import:{self.name}"
        self.at = now_stamp()

    def _where(self, section: str) -> str:
        return f"{self.name} ({section})" if section else self.name

    def _record(
        self, item: Instruction, position: int, memory_id: str, stored: str, *, owned: bool
    ) -> None:
        from memory_layer.capture.instructions import item_hash
        from memory_layer.storage.instructions import add_item

        add_item(
            self.db,
            path=self.path,
            project=self.project,
            section=item.section,
            position=position,
            text=item.text,
            text_hash=item.key,
            stored_hash=item_hash(stored),
            memory_id=memory_id,
            owned=owned,
            at=self.at,
        )

    def keep(self, row: ImportedItem, item: Instruction, position: int) -> ItemChange:
        """An item already imported: nothing changes but its place in the file."""
        from memory_layer.storage.instructions import move_item

        moved = row.section != item.section or row.position != position
        if moved and not self.dry_run:
            move_item(self.db, row.id, section=item.section, position=position)
        action = "moved" if row.section != item.section else "unchanged"
        return ItemChange(action, item.text, item.category, item.section, row.memory_id)

    def add(self, item: Instruction, position: int) -> ItemChange:
        if self.dry_run:
            return ItemChange("new", item.text, item.category, item.section)
        from memory_layer.api.writing import remember
        from memory_layer.storage.records import text_stored

        done = remember(
            self.db,
            item.text,
            config=self.config,
            source=self.source,
            category=item.category,
            project=self.project,
            tags=[self.name],
            embedder=self.embedder,
            # Items of one file are distinct by construction: "Run test file: `pytest x`"
            # and "Run with debug: `pytest x -s`" are near-duplicates to the model, not
            # to the reader. Only the very same text reinforces what is stored.
            dedupe=text_stored(self.db, item.text, self.project),
        )
        self._record(item, position, done.memory.id, done.memory.text, owned=done.created)
        if done.created:
            return ItemChange("new", item.text, item.category, item.section, done.memory.id)
        return ItemChange(
            "existing",
            item.text,
            done.memory.category,
            item.section,
            done.memory.id,
            note=f"already stored as {done.memory.id} ({done.memory.source}); counted again",
        )

    def reword(self, row: ImportedItem, item: Instruction, position: int) -> ItemChange:
        """An item the file now words differently: the memory follows the file, unless
        a person edited it since the import (then the new wording goes to review)."""
        from memory_layer.capture.instructions import item_hash
        from memory_layer.storage.records import get_memory

        memory = get_memory(self.db, row.memory_id)
        edited = item_hash(memory.text) != row.stored_hash
        gone_by_hand = memory.status != "active" and row.owned
        reason = f"changed in {self._where(item.section)}"
        if self.dry_run:
            action = "proposed" if edited or gone_by_hand else "updated"
            return ItemChange(
                action, item.text, item.category, item.section, memory.id, old_text=memory.text
            )
        from memory_layer.storage.instructions import drop_item

        drop_item(self.db, row.id)
        if edited or gone_by_hand or not row.owned:
            from memory_layer.api.writing import remember

            done = remember(
                self.db,
                item.text,
                config=self.config,
                source=self.source,
                category=item.category,
                project=self.project,
                change_of=memory.id,
                reason=reason + "; the memory was changed since it was imported",
                embedder=self.embedder,
            )
            self._record(item, position, memory.id, memory.text, owned=row.owned)
            return ItemChange(
                "proposed",
                item.text,
                item.category,
                item.section,
                memory.id,
                old_text=memory.text,
                note=f"review item {done.item_id}",
            )
        from memory_layer.api.writing import edit

        updated = edit(
            self.db,
            memory.id,
            config=self.config,
            actor=self.source,
            text=item.text,
            category=item.category,
            embedder=self.embedder,
            context={"reason": reason, "file": self.path, "section": item.section},
        )
        self._record(item, position, updated.id, updated.text, owned=True)
        return ItemChange(
            "updated", item.text, item.category, item.section, updated.id, old_text=memory.text
        )

    def remove(self, row: ImportedItem) -> ItemChange:
        """An item no longer in the file: its memory is retired (restorable), unless
        the import did not create it or it is no longer active."""
        from memory_layer.errors import NotFound
        from memory_layer.storage.records import get_memory

        try:
            memory = get_memory(self.db, row.memory_id)
        except NotFound:  # purged by a person since: nothing left to retire
            memory = None
        category = memory.category if memory else "general"
        retire = bool(memory and row.owned and memory.status == "active")
        if not self.dry_run:
            from memory_layer.storage.instructions import drop_item

            drop_item(self.db, row.id)
            if retire and memory is not None:
                from memory_layer.api.writing import forget

                forget(
                    self.db,
                    memory.id,
                    actor=self.source,
                    reason=f"removed from {self._where(row.section)}",
                )
        note = "" if retire else "no longer tracked; the memory was not created by the import"
        return ItemChange(
            "retired" if retire else "released",
            row.text,
            category,
            row.section,
            row.memory_id,
            note=note,
        )
