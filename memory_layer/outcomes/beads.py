"""Beads (`bd`): close and reopen hooks, and catching up from its files.

bd runs executable ``.beads/hooks/on_create|on_update|on_close`` as
``<hook> <issue_id> <event>`` with the issue JSON on stdin, fire-and-forget with a 10 s
timeout. ``install`` writes ``on_close`` and ``on_update`` scripts that call
``memory-layer beads hook``; they discard output and always exit 0, so they can never
block or fail bd.

A close is a success unless its reason says otherwise as a whole word, or carries an
explicit marker (rules.close_outcome). An update whose status is no longer
``closed`` is a reopen and reverses the credit. ``sync`` catches up from
``.beads/issues.jsonl`` (the export), ``.beads/interactions.jsonl`` (the append-only
audit log: status changes and ``bd audit label good|bad`` verdicts), and from
``bd list --status closed --json`` when bd is installed.

bd's JSON is read once, at the door, into frozen values (``outcomes.beads_issue``):
everything past ``parse_issue`` / ``issue_from_json`` / ``interaction_from_json`` reads
a ``BeadsIssue`` or ``BeadsInteraction``, never a dict.

Tasks are keyed ``beads:<project>:<issue id>``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import iso, now_stamp, parse_time
from memory_layer.outcomes.beads_issue import (
    CLOSED,
    LABEL,
    BeadsInteraction,
    BeadsIssue,
    interaction_from_json,
    issue_from_json,
    parse_issue,
)
from memory_layer.outcomes.lifecycle import (
    CLOSE,
    OPEN,
    REOPEN,
    START,
    OutcomeResult,
    ensure_task,
    transition,
)
from memory_layer.outcomes.rules import FAILURE, SUCCESS, close_outcome, settings
from memory_layer.outcomes.store import manual_verdict, task_key
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import transaction
from memory_layer.storage.tasks import find_task, log_event, task_of_event

SOURCE = "beads"
HOOKS = ("on_close", "on_update")
MARKER = "# memory-layer-beads-hook v1"
OPEN_STATUSES = {"open", "in_progress", "blocked", "deferred", "pinned", "hooked"}


class BeadsNotFound(NotFound):
    """No .beads directory where one was expected."""


class HookConflict(InvalidInput):
    """A Beads hook that memory-layer did not write is in the way."""


def find_beads_repo(start: Path | None = None) -> Path:
    """The nearest directory at or above ``start`` that holds a ``.beads`` directory."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".beads").is_dir():
            return candidate
    raise BeadsNotFound(
        f"No .beads directory in {here} or above. Run `bd init` there first, or pass --repo."
    )


def hook_script(repo: Path, python: str) -> str:
    """The hook bd runs. The interpreter that installed it comes first (it has
    memory-layer importable even when no venv is active); `memory-layer` on PATH is
    the fallback when that interpreter is gone."""
    quoted_py = shlex.quote(python)
    quoted_repo = shlex.quote(str(repo))
    return f"""#!/bin/sh
{MARKER}
# Installed by `memory-layer beads install`: credits the memories used for an issue
# when it closes (reverses the credit when it reopens). Never blocks or fails bd:
# all output is discarded and the exit status is always 0.
PY={quoted_py}
REPO={quoted_repo}
if [ -x "$PY" ]; then
  "$PY" -m memory_layer beads hook --repo "$REPO" "$@" >/dev/null 2>&1
elif command -v memory-layer >/dev/null 2>&1; then
  memory-layer beads hook --repo "$REPO" "$@" >/dev/null 2>&1
fi
exit 0
"""


def install(repo: Path, *, force: bool = False, python: str | None = None) -> list[Path]:
    """Write the on_close and on_update hooks into ``repo/.beads/hooks``.

    An existing hook written by memory-layer is replaced (upgrade); any other hook is
    kept unless ``force``, which saves it as ``<name>.bak`` first.
    """
    repo = repo.resolve()
    if not (repo / ".beads").is_dir():
        raise BeadsNotFound(f"{repo} has no .beads directory. Run `bd init` there first.")
    hooks = repo / ".beads" / "hooks"
    hooks.mkdir(exist_ok=True)
    script = hook_script(repo, python or sys.executable)
    written = []
    for name in HOOKS:
        path = hooks / name
        if path.exists() and MARKER not in path.read_text(encoding="utf-8", errors="replace"):
            if not force:
                raise HookConflict(
                    f"{path} exists and was not written by memory-layer. Merge it by hand, "
                    "or rerun with --force to keep it as "
                    f"{name}.bak and install ours."
                )
            path.replace(path.with_name(name + ".bak"))
        tmp = path.with_name(name + ".tmp")
        tmp.write_text(script, encoding="utf-8")
        tmp.chmod(0o755)
        tmp.replace(path)
        written.append(path)
    return written


def _project(repo: Path | None, project: str | None) -> str | None:
    if project:
        return project
    if repo is None:
        return None
    from memory_layer.project import project_for

    return project_for(str(repo))


def apply_issue(
    conn: Conn,
    issue: BeadsIssue,
    *,
    project: str | None,
    source: str,
    config: dict[str, Any] | None = None,
    event_key: str | None = None,
) -> OutcomeResult | None:
    """Apply what an issue's current state says about its task."""
    issue_id, status = issue.id, issue.status
    opened = issue.created_at
    with transaction(conn):
        key = task_key(SOURCE, project, issue_id)
        known = find_task(conn, key)
        if status == CLOSED:
            kind = CLOSE
            at = issue.closed_at or issue.updated_at or now_stamp()
        elif status in OPEN_STATUSES or (status and status != CLOSED):
            at = issue.updated_at or now_stamp()
            if known is not None and not known.is_open:
                kind = REOPEN
            elif status == "in_progress":
                kind = START
            else:
                kind = OPEN
        else:
            return None  # an update without a status says nothing about the outcome
        if known is not None and not known.is_open and manual_verdict(conn, known.id):
            # A person's outcome outranks what bd says later, as for Claude tasks;
            # `memory-layer outcome --task ID --undo` hands the issue back to bd.
            note = f"outcome set by hand; `memory-layer outcome --task {issue_id} --undo` frees it"
            log_event(
                conn,
                known.id,
                at=at,
                source=source,
                event=kind,
                status=status,
                session_id=issue.closed_by_session,
                applied=False,
                note=note,
                event_key=event_key,
            )
            return OutcomeResult(known.id, known.outcome, "unchanged", note)
        if opened is None and known is None and kind == CLOSE:
            # First heard of at its close: assume the usual stretch of work before it,
            # so a later reopen and close still judge that work.
            hours = settings(config).fallback_window_hours
            opened = iso(parse_time(at) - timedelta(hours=hours))
        task, created = ensure_task(
            conn,
            task_id=key,
            source=SOURCE,
            external_id=issue_id,
            at=at,
            opened_at=opened,
            status=status,
            project=project,
            session_id=issue.closed_by_session,
            subject=issue.title,
            description=issue.description,
            started_at=issue.started_at,
        )
        reason = issue.close_reason
        outcome = close_outcome(reason, issue.metadata) if kind == CLOSE else None
        return transition(
            conn,
            task,
            kind,
            at=at,
            status=status,
            source=source,
            actor="bd",
            config=config,
            outcome=outcome,
            reason=reason,
            session_id=issue.closed_by_session,
            event_key=event_key,
            created=created,
        )


def on_beads_hook(
    conn: Conn,
    issue_id: str,
    event: str,
    payload: str | bytes,
    *,
    repo: Path | None = None,
    project: str | None = None,
    config: dict[str, Any] | None = None,
) -> OutcomeResult | None:
    """What `.beads/hooks/on_close|on_update|on_create <id> <event>` reports."""
    issue = parse_issue(payload, issue_id, event=event)
    return apply_issue(
        conn, issue, project=_project(repo, project), source=f"beads:on_{event}", config=config
    )


# --- catching up -------------------------------------------------------------------


@dataclass
class SyncReport:
    issues: int = 0
    interactions: int = 0
    bd: str = "not used"
    applied: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def add(self, result: OutcomeResult | None) -> None:
        if result is not None and result.changed:
            self.applied.append(result.to_dict())

    def to_dict(self) -> dict[str, Any]:
        return {
            "issues": self.issues,
            "interactions": self.interactions,
            "bd": self.bd,
            "applied": self.applied,
            "skipped": self.skipped,
        }


def _jsonl(path: Path, report: SyncReport) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            report.skipped.append(f"{path.name}:{number}: not JSON")
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def bd_closed_issues(repo: Path, report: SyncReport) -> list[dict[str, Any]]:
    """Closed issues from `bd list` (bare array, or the v2 envelope); [] without bd."""
    exe = shutil.which("bd")
    if exe is None:
        report.bd = "not installed"
        return []
    try:
        done = subprocess.run(
            [exe, "list", "--status", "closed", "--json", "--limit", "0"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "BD_NO_HOOKS": "1"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        report.bd = f"failed: {exc}"
        return []
    if done.returncode != 0:
        report.bd = f"failed: exit {done.returncode}: {done.stderr.strip()[:200]}"
        return []
    try:
        data = json.loads(done.stdout or "[]")
    except ValueError:
        report.bd = "failed: output is not JSON"
        return []
    if isinstance(data, dict):
        data = data.get("data") or []
    report.bd = "used"
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def sync(
    conn: Conn,
    repo: Path,
    *,
    use_bd: bool = True,
    project: str | None = None,
    config: dict[str, Any] | None = None,
) -> SyncReport:
    """Apply every close, reopen and verdict recorded in the repo's Beads files that
    our hooks missed. Safe to run any number of times."""
    repo = repo.resolve()
    beads = repo / ".beads"
    if not beads.is_dir():
        raise BeadsNotFound(f"{repo} has no .beads directory. Run `bd init` there first.")
    project = _project(repo, project)
    report = SyncReport()
    issues = _read_issues(repo, beads, use_bd, report)

    # The audit log first, in order: it holds the history (close, reopen, close again).
    for row in _jsonl(beads / "interactions.jsonl", report):
        report.interactions += 1
        try:
            line = interaction_from_json(row)
            report.add(_apply_interaction(conn, line, issues, project, config))
        except InvalidInput as exc:
            report.skipped.append(f"interaction {row.get('id')}: {exc}")
    # Then each issue's current state: a close the log did not have.
    for issue in issues.values():
        if issue.status == CLOSED:
            try:
                report.add(
                    apply_issue(conn, issue, project=project, source="sync:issues", config=config)
                )
            except InvalidInput as exc:
                report.skipped.append(f"issue {issue.id}: {exc}")
    return report


def _read_issues(
    repo: Path, beads: Path, use_bd: bool, report: SyncReport
) -> dict[str, BeadsIssue]:
    """Every issue the export (and ``bd list``, when used) describes, by id. What bd
    lists is newer than the export, so its fields win; each merged issue is then
    parsed once."""
    rows: dict[str, dict[str, Any]] = {}
    for row in _jsonl(beads / "issues.jsonl", report):
        if row.get("_type", "issue") == "issue" and row.get("id"):
            rows[str(row["id"])] = row
    if use_bd:
        for row in bd_closed_issues(repo, report):
            if row.get("id"):
                rows[str(row["id"])] = {**rows.get(str(row["id"]), {}), **row}
    report.issues = len(rows)
    issues: dict[str, BeadsIssue] = {}
    for key, row in rows.items():
        try:
            issues[key] = issue_from_json(row)
        except InvalidInput as exc:
            report.skipped.append(f"issue {key}: {exc}")
    return issues


def _apply_interaction(
    conn: Conn,
    line: BeadsInteraction,
    issues: dict[str, BeadsIssue],
    project: str | None,
    config: dict[str, Any] | None,
) -> OutcomeResult | None:
    if line.kind == LABEL:
        return _apply_label(conn, line, config)
    if not line.is_status_change:
        return None
    issue_id = line.issue_id or ""  # a status change always names its issue
    closing = line.new_value == CLOSED
    # What the export knew about the issue, then the state this line records.
    known = issues.get(issue_id) or BeadsIssue(id=issue_id)
    issue = replace(
        known,
        id=issue_id,
        status=line.new_value,
        updated_at=line.at,
        closed_at=line.at if closing else None,
        close_reason=line.reason if closing else None,
        closed_by_session=None,
    )
    return apply_issue(
        conn,
        issue,
        project=project,
        source="sync:interactions",
        config=config,
        event_key=line.id,
    )


def _apply_label(
    conn: Conn, line: BeadsInteraction, config: dict[str, Any] | None
) -> OutcomeResult | None:
    """`bd audit label <close-interaction> --label good|bad`: a reviewer's verdict on a
    close; it corrects the outcome when it disagrees."""
    label, parent = line.label, line.parent_id
    if label not in {"good", "bad"} or not parent:
        return None
    task_id = task_of_event(conn, parent)
    if not task_id:
        return None
    with transaction(conn):
        task = find_task(conn, task_id)
        if task is None or task.is_open:
            return None
        outcome = SUCCESS if label == "good" else FAILURE
        return transition(
            conn,
            task,
            CLOSE,
            at=line.at or now_stamp(),
            status=task.status,
            source="sync:label",
            actor=line.actor or "bd",
            config=config,
            outcome=outcome,
            reason=f"labelled {label}: {line.reason or ''}".strip(),
            event_key=line.id,
            correction=True,
        )
