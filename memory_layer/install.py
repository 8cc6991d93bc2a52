"""Which installation of ``memory_layer`` is running, and what else claims the name.

The PyPI name ``memory-layer`` belongs to an unrelated project whose top-level module is
also ``memory_layer``; this project is distributed as ``DISTRIBUTION``. Installing both
into one environment lets either overwrite the other's files, and a second
``memory_layer`` earlier on ``sys.path`` shadows this one silently, so `memory-layer
doctor` reports every such clash (``foreign_modules``).
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

# This project's distribution name (pyproject.toml [project] name); the command stays
# `memory-layer`.
DISTRIBUTION = "memory-layer-agents"
MODULE = "memory_layer"
# How this project's package summary begins, under any name it was installed as: an
# install from before the rename (as ``memory-layer``) says this, the stranger does not.
OWN_SUMMARY = "Memory for AI coding agents that learns what works"


def _loaded_root() -> Path:
    """The directory of the ``memory_layer`` package running now."""
    return Path(__file__).resolve().parent


def _top_level(dist: metadata.Distribution) -> set[str]:
    """The top-level names a distribution installs (top_level.txt, else its RECORD)."""
    listed = dist.read_text("top_level.txt")
    if listed:
        return {line.strip() for line in listed.splitlines() if line.strip()}
    return {Path(str(f)).parts[0].removesuffix(".py") for f in dist.files or []}


def _other_distributions(paths: list[str]) -> list[str]:
    """Each installed distribution other than this one that ships a top-level
    memory_layer, in words: which it is and how to remove it."""
    others: list[str] = []
    for dist in metadata.distributions(path=paths):
        meta = dist.metadata
        name = meta["Name"] or "?"
        if name.lower().replace("_", "-") == DISTRIBUTION or MODULE not in _top_level(dist):
            continue
        what = (
            "an older install of this project under its old name"
            if (meta["Summary"] or "").startswith(OWN_SUMMARY)
            else "an unrelated project"
        )
        problem = (
            f"the distribution {name} {meta['Version']} ({what}) also installs the module "
            f"{MODULE}: `pip uninstall {name}`, then reinstall this project ({DISTRIBUTION}) "
            "so that its files are whole again"
        )
        if problem not in others:
            others.append(problem)
    return others


def _other_copies(paths: list[str]) -> list[str]:
    """Other ``memory_layer`` packages or modules on the import path than the one loaded."""
    loaded = _loaded_root()
    found: list[str] = []
    for entry in paths:
        base = Path(entry or ".").resolve()
        for candidate in (base / MODULE, base / f"{MODULE}.py"):
            if candidate.exists() and candidate.resolve() != loaded and str(candidate) not in found:
                found.append(str(candidate))
    return found


def foreign_modules(paths: list[str] | None = None) -> list[str]:
    """Each clash in words: another distribution that installs ``memory_layer``, or another
    copy of the module on the import path. Empty when this installation is the only one."""
    paths = sys.path if paths is None else paths
    problems = _other_distributions(paths)
    problems += [
        f"another {MODULE} at {copy} is on the import path (this one runs from "
        f"{_loaded_root()}); remove it or take its directory off PYTHONPATH"
        for copy in _other_copies(paths)
    ]
    return problems
