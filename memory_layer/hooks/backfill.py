"""`memory-layer backfill`: past Claude Code transcripts through the hooks' own capture.

A transcript the hooks never saw (sessions from before the plugin was installed, or
from another machine) is read exactly as the Stop hook reads a live one: the same
transcript reader, the same candidates (``capture.transcript_candidates``, which also
runs the tool-event signals a live session gets from PostToolUse), the same
confidence floor and the same ``remember`` (source ``hook:backfill``, so the trust
policy for captured memories applies). The per-file offsets the hooks keep are the
bookmark: a transcript read before, by a hook or by a backfill, is read on from where
that stopped, so running backfill again changes nothing.
"""

from __future__ import annotations

import fnmatch
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memory_layer import api
from memory_layer.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCE = "hook:backfill"
DEFAULT_ROOT = "~/.claude/projects"


@dataclass(frozen=True)
class Kept:
    """A memory the backfill stored, or (dry run) would store."""

    text: str
    category: str
    confidence: float
    extractor: str
    already_stored: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class TranscriptRun:
    """One transcript: where it was read from and to, and what it gave."""

    path: str
    session_id: str
    project: str
    start: int
    end: int
    kept: tuple[Kept, ...] = field(default=())
    skipped: str = ""  # why nothing was read (an ignored project, say)

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "kept"}
        data["read_bytes"] = self.end - self.start
        data["kept"] = [k.to_dict() for k in self.kept]
        return data


def transcript_files(paths: Iterable[str], *, since: str | None = None) -> list[Path]:
    """Every ``*.jsonl`` under ``paths`` (default ``~/.claude/projects``), oldest first,
    modified at or after ``since`` (a stored-time string) when given."""
    given = list(paths) or [DEFAULT_ROOT]
    found: dict[str, Path] = {}
    for name in given:
        root = Path(os.path.expanduser(name))
        if root.is_file():
            candidates: Iterable[Path] = [root]
        elif root.is_dir():
            candidates = root.rglob("*.jsonl")
        else:
            raise InvalidInput(
                f"No such file or directory: {name}. Claude Code keeps transcripts in "
                f"{DEFAULT_ROOT}; pass --path to read another directory."
            )
        for path in candidates:
            found.setdefault(str(path.resolve()), path.resolve())
    files = sorted(found.values(), key=lambda p: (p.stat().st_mtime, str(p)))
    if since is not None:
        from memory_layer.models import parse_time

        cutoff = parse_time(since).timestamp()
        files = [p for p in files if p.stat().st_mtime >= cutoff]
    return files


def _is_subagent(path: Path) -> bool:
    """Subagent transcripts live under ``<session>/subagents/agent-*.jsonl``."""
    return "subagents" in path.parts or path.name.startswith("agent-")


def _first(entries: list[Any], attribute: str) -> str:
    return next((getattr(e, attribute) for e in entries if getattr(e, attribute)), "")


def _project(cwd: str, path: Path) -> str:
    from memory_layer.hooks.where import fast_project

    # A session whose directory is gone still has the directory's name for a project.
    return fast_project(cwd) if cwd else str(path.parent)


def _wanted(project: str, cwd: str, patterns: tuple[str, ...]) -> bool:
    if not patterns:
        return True
    return any(
        fnmatch.fnmatch(project, p) or (cwd and fnmatch.fnmatch(cwd, p)) or project == p
        for p in patterns
    )


def backfill_transcript(
    conn: sqlite3.Connection,
    path: Path,
    config: dict[str, Any],
    *,
    embedder: Any,
    now: datetime,
    projects: tuple[str, ...] = (),
    dry_run: bool = False,
) -> TranscriptRun | None:
    """Capture from what ``path`` holds past its bookmark; None when the project is not
    one of ``projects``. Each transcript is stored whole (one transaction) or not at all."""
    from memory_layer.hooks.capture import (
        classifier_embedder,
        confident,
        store_candidates,
        transcript_candidates,
    )
    from memory_layer.hooks.events import SessionStarted
    from memory_layer.hooks.where import skip_reason

    start = api.transcript_offset(conn, str(path))
    entries, end = api.read_new_entries(path, start)
    cwd = _first(entries, "cwd")
    if not entries:  # nothing new: no line says whose session it was
        return None if projects else TranscriptRun(str(path), path.stem, "", start, end)
    project = _project(cwd, path)
    if not _wanted(project, cwd, projects):
        return None
    session_id = _first(entries, "session_id") or path.stem
    run = TranscriptRun(str(path), session_id, project, start, end)
    reason = skip_reason(SessionStarted(name="SessionStart", cwd=cwd), project, config)
    if reason or not config["hooks"]["capture"]:
        return run if start == end else _skipped(run, reason or "hooks.capture is false")
    subagent = _is_subagent(path)
    tool_text = api.transcript_tool_text(conn, str(path))
    found = confident(
        transcript_candidates(
            entries,
            subagent=subagent,
            tools=True,
            cwd=cwd,
            tool_text=tool_text,
            embedder=classifier_embedder(config, embedder),
        ),
        config,
    )
    kept = tuple(
        Kept(c.text, c.category, c.confidence, c.extractor, api.text_stored(conn, c.text, project))
        for c in found
    )
    if dry_run or end == start:
        return TranscriptRun(run.path, session_id, project, start, end, kept)
    with api.transaction(conn):
        store_candidates(
            conn, found, project=project, source=SOURCE, config=config, embedder=embedder, now=now
        )
        api.set_transcript_offset(
            conn, str(path), session_id, end, main=not subagent, tool_text=tool_text
        )
    return TranscriptRun(run.path, session_id, project, start, end, kept)


def _skipped(run: TranscriptRun, reason: str) -> TranscriptRun:
    return TranscriptRun(
        run.path, run.session_id, run.project, run.start, run.start, skipped=reason
    )


def backfill(
    conn: sqlite3.Connection,
    files: list[Path],
    config: dict[str, Any],
    *,
    embedder: Any,
    now: datetime,
    projects: tuple[str, ...] = (),
    dry_run: bool = False,
    progress: Callable[[list[Path]], Iterator[Path]] = iter,
) -> list[TranscriptRun]:
    """Every transcript in ``files``, through ``backfill_transcript``; a transcript that
    cannot be read is reported and the others go on."""
    from memory_layer.hooks.log import log

    runs: list[TranscriptRun] = []
    for path in progress(files):
        try:
            run = backfill_transcript(
                conn, path, config, embedder=embedder, now=now, projects=projects, dry_run=dry_run
            )
        except OSError as exc:
            log(f"backfill: cannot read {path}", exc=exc)
            run = TranscriptRun(str(path), path.stem, "", 0, 0, skipped=f"unreadable: {exc}")
        if run is not None:
            runs.append(run)
    return runs
