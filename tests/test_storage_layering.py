"""Storage is the bottom layer: its modules import nothing above it, and no module
outside it runs SQL on the tables storage owns (or any SQL at all), or hands storage a
WHERE clause of its own (but the hook door listed below, until its rewiring)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import memory_layer

PACKAGE = Path(memory_layer.__file__).parent
WEB = PACKAGE.parent / "web"
# What a storage module may import from this project.
ALLOWED = (
    "memory_layer.storage",
    "memory_layer.models",
    "memory_layer.errors",
    "memory_layer.paths",
    "memory_layer.text",  # the lexical rules shared with retrieval and outcomes (a leaf)
    "memory_layer.frozen",  # the light frozen-record base (a leaf)
)
# Tables whose SQL lives only in storage/.
OWNED_TABLES = (
    "sessions",
    "session_events",
    "usage",
    "transcript_offsets",
    "llm_calls",
    "memories",
    "memories_fts",
    "operations",
    "conflicts",
    "proposals",
    "tasks",
    "task_events",
    "task_credits",
    "memory_changes",  # the vector index's change log (storage.embeddings)
    "meta",  # the store's generation counter (storage.db)
    "instruction_items",  # imported instruction files (storage.instructions)
    "team_outbox",  # team sync (storage.team_sync)
    "team_cursors",
    "team_state",
)
OWNED = re.compile(r"\b(?:FROM|INTO|UPDATE|JOIN)\s+(" + "|".join(OWNED_TABLES) + r")\b")
# Running a statement at all: the table names above miss a table in an f-string.
EXECUTES = re.compile(r"\.(?:execute|executemany|executescript)\(")
# ``records.memories_where`` takes the caller's WHERE clause; only storage may write one.
CALLER_SQL = re.compile(r"\bmemories_where\(")
CALLER_SQL_NOT_YET: set[Path] = set()


def project_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found |= {n for n in names if n.startswith("memory_layer")}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("memory_layer")}
    return found


def outside_storage() -> list[Path]:
    return [
        p
        for p in [*PACKAGE.rglob("*.py"), *WEB.rglob("*.py")]
        if "storage" not in p.relative_to(PACKAGE.parent).parts
        and not p.is_relative_to(PACKAGE / "models")  # model data files, not code
    ]


def test_storage_imports_nothing_above_it() -> None:
    for path in sorted((PACKAGE / "storage").glob("*.py")):
        above = {m for m in project_imports(path) if not m.startswith(ALLOWED)}
        assert not above, f"{path.name} imports {sorted(above)}"


def test_owned_tables_have_their_sql_only_in_storage() -> None:
    offenders = sorted(
        f"{p.relative_to(PACKAGE.parent)}: {table}"
        for p in outside_storage()
        for table in set(OWNED.findall(p.read_text(encoding="utf-8")))
    )
    assert offenders == []


def files_matching(pattern: re.Pattern[str], exempt: set[Path]) -> list[str]:
    return [
        str(p.relative_to(PACKAGE.parent))
        for p in outside_storage()
        if p not in exempt and pattern.search(p.read_text(encoding="utf-8"))
    ]


def test_only_storage_runs_sql() -> None:
    assert files_matching(EXECUTES, set()) == []


def test_no_caller_writes_a_where_clause_for_storage() -> None:
    assert files_matching(CALLER_SQL, CALLER_SQL_NOT_YET) == []


def test_the_checks_see_sql_where_it_is() -> None:
    # The patterns find what they must: storage's own SQL, recall's reads among it.
    fts = (PACKAGE / "storage" / "fts.py").read_text(encoding="utf-8")
    assert set(OWNED.findall(fts)) == {"memories", "memories_fts"} and EXECUTES.search(fts)
    embeddings = (PACKAGE / "storage" / "embeddings.py").read_text(encoding="utf-8")
    assert set(OWNED.findall(embeddings)) == {"memories", "memory_changes"}
    tasks = (PACKAGE / "storage" / "tasks.py").read_text(encoding="utf-8")
    assert {"tasks", "task_events"} <= set(OWNED.findall(tasks)) and EXECUTES.search(tasks)
    found = OWNED.findall("DELETE FROM task_credits WHERE id = ?; SELECT * FROM memories_fts")
    assert found == ["task_credits", "memories_fts"]
    assert not OWNED.search("SELECT * FROM memories_archive")  # a table not listed
