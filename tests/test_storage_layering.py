"""Storage is the bottom layer: its modules import nothing above it, and no module
outside it runs SQL on the tables the session-activity move gave it."""

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
)
# Tables whose SQL lives only in storage/.
OWNED = re.compile(
    r"\b(FROM|INTO|UPDATE|JOIN)\s+(sessions|session_events|usage|transcript_offsets|llm_calls)\b"
)
NOT_YET: set[Path] = set()


def project_imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            found |= {n for n in names if n.startswith("memory_layer")}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("memory_layer")}
    return found


def test_storage_imports_nothing_above_it() -> None:
    for path in sorted((PACKAGE / "storage").glob("*.py")):
        above = {m for m in project_imports(path) if not m.startswith(ALLOWED)}
        assert not above, f"{path.name} imports {sorted(above)}"


def test_session_tables_have_their_sql_only_in_storage() -> None:
    outside = [
        p
        for p in [*PACKAGE.rglob("*.py"), *WEB.rglob("*.py")]
        if "storage" not in p.relative_to(PACKAGE.parent).parts and p not in NOT_YET
    ]
    offenders = [str(p) for p in outside if OWNED.search(p.read_text(encoding="utf-8"))]
    assert offenders == []
