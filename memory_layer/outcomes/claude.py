"""Claude Code Tasks: task signals and reconciliation from ~/.claude/tasks.

The hooks and the task files are read once, into ``outcomes.signals.TaskSignal``;
this module reads only signals. Each is mapped onto lifecycle.transition:

- ``TaskCreated`` → open; ``TaskCompleted`` → close as success;
- PostToolUse ``TaskCreate`` → open; PostToolUse ``TaskUpdate`` with status
  ``pending`` → open (a reopen if it was closed), ``in_progress`` → start,
  ``completed`` → close as success, ``deleted`` → close as failure;
- SessionStart / SessionEnd / Stop → reconcile this session's task list from disk,
  catching events that were missed (a hook that timed out, a plugin installed late);
- Stop → also judge again the tasks that closed during the turn: the assistant's
  closing message arrives with Stop, usually after the task was marked completed.

A task still in progress when its session ends stays open: no credit either way.

Tasks are keyed ``claude:<list>:<id>``: the list is ``CLAUDE_CODE_TASK_LIST_ID`` when
set (shared lists), else the team name, else the session id — the same name as the
directory Claude Code writes the task files to.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_layer.models import now_stamp, parse_time, stamp
from memory_layer.outcomes.lifecycle import (
    CLOSE,
    OPEN,
    START,
    OutcomeResult,
    ensure_task,
    rejudge_turn,
    transition,
)
from memory_layer.outcomes.rules import FAILURE, SUCCESS, settings
from memory_layer.outcomes.signals import (
    CLAUDE,
    STOP,
    VIA_TASK_UPDATE,
    InvalidTaskSignal,
    TaskSignal,
    from_task_file,
)
from memory_layer.outcomes.store import manual_verdict, task_key
from memory_layer.storage.conn import Conn
from memory_layer.storage.records import transaction
from memory_layer.storage.sessions import get_session
from memory_layer.storage.tasks import Task, find_task, list_of_session_task, log_event

SOURCE = CLAUDE
# Claude status → (event, outcome). "pending" is an open task; on a closed task the
# transition turns it (and "in_progress") into a reopen.
STATUS_EVENTS: dict[str, tuple[str, str | None]] = {
    "pending": (OPEN, None),
    "in_progress": (START, None),
    "completed": (CLOSE, SUCCESS),
    "deleted": (CLOSE, FAILURE),
}


def on_task_signal(
    conn: Conn, signal: TaskSignal, config: dict[str, Any] | None = None
) -> OutcomeResult | ReconcileReport:
    """Apply one Claude Code task signal (``outcomes.signals``): the hooks build it from
    TaskCreated, TaskCompleted, PostToolUse of TaskCreate/TaskUpdate and, to catch
    missed events, SessionStart, SessionEnd and Stop.

    Returns what changed: the task's result, or for a session boundary the report of
    reconciling the session's task list from disk.
    """
    if not signal.is_boundary:
        return _apply(conn, signal, config)
    report = reconcile(conn, list_ids=[signal.list_id] if signal.list_id else [], config=config)
    if signal.kind == STOP and signal.session_id:
        for result in rejudge_turn(
            conn, signal.session_id, at=signal.at, source=signal.via, config=config
        ):
            report.applied.append(result.to_dict())
    return report


def _apply(conn: Conn, signal: TaskSignal, config: dict[str, Any] | None) -> OutcomeResult:
    session_id, status, list_id = signal.session_id, signal.status, signal.list_id
    task_id = signal.task_id or ""  # every task kind carries one (TaskSignal checks)
    if session_id and list_id == session_id and signal.via == VIA_TASK_UPDATE:
        list_id = _team_list(conn, session_id, task_id, status) or list_id
    elif session_id and list_id != session_id and signal.team_name:
        list_id = _own_list(conn, session_id, list_id, task_id, signal.at) or list_id
    project = signal.project
    if project is None and signal.cwd:
        from memory_layer.project import project_for

        project = project_for(signal.cwd)
    at, source = signal.at, signal.via
    with transaction(conn):
        task, created = ensure_task(
            conn,
            task_id=task_key(SOURCE, list_id, task_id),
            source=SOURCE,
            external_id=task_id,
            at=at,
            status=status or "pending",
            list_id=list_id,
            project=project,
            session_id=session_id,
            subject=signal.subject,
            description=signal.description,
        )
        if status is None:  # a TaskUpdate of the subject, owner or dependencies
            return OutcomeResult(
                task.id,
                task.outcome,
                "opened" if created else "unchanged",
                f"task {task.id} details updated",
            )
        kind, outcome = STATUS_EVENTS[status]
        ignored = None if created else _ignored(conn, task, signal.prior, status)
        if ignored:
            log_event(
                conn,
                task.id,
                at=at,
                source=source,
                event=kind,
                status=status,
                session_id=session_id,
                applied=False,
                note=ignored,
            )
            return OutcomeResult(task.id, task.outcome, "unchanged", ignored)
        return transition(
            conn,
            task,
            kind,
            at=at,
            status=status,
            source=source,
            actor=f"claude:{session_id or 'unknown'}",
            config=config,
            outcome=outcome,
            reason=f"Claude Code task {status}",
            session_id=session_id,
            created=created,
        )


# How recently this session must have opened its own task "N" for a team event about
# task "N" to mean the same task (the untagged PostToolUse arrived first).
SAME_TASK_WINDOW_S = 3600


def _own_list(conn: Conn, session_id: str, team_list: str, task_id: str, at: str) -> str | None:
    """The session's own list, when a team-tagged event is about a task the session
    already opened under its own key: hooks are async, and the untagged PostToolUse
    TaskCreate/TaskUpdate can land before TaskCreated/TaskCompleted. Only while no team
    task of that number exists, and only for a task opened in the last hour (numbers
    restart in every list: an old task "1" of the session's own is another task)."""
    if find_task(conn, task_key(SOURCE, team_list, task_id)) is not None:
        return None
    own = find_task(conn, task_key(SOURCE, session_id, task_id))
    if own is None:
        return None
    age = (parse_time(at) - parse_time(own.opened_at)).total_seconds()
    return session_id if 0 <= age <= SAME_TASK_WINDOW_S else None


def _team_list(conn: Conn, session_id: str, task_id: str, status: str | None) -> str | None:
    """The team list whose task ``task_id`` a TaskUpdate without ``team_name`` belongs to.

    In an agent team TaskCreated/TaskCompleted name the team, but the PostToolUse of
    TaskUpdate for the same task does not: keyed by the session it would become a
    second task and credit the same work twice. Task numbers restart in every list,
    so the update goes to the team task only while this session has no task of that
    number of its own, and only if that team task is still open (or the update repeats
    its final status): a later list of the session's own must not reopen it.
    """
    if find_task(conn, task_key(SOURCE, session_id, task_id)) is not None:
        return None
    return list_of_session_task(conn, SOURCE, task_id, session_id, status or "")


def _ignored(conn: Conn, task: Task, prior: str | None, status: str | None = None) -> str | None:
    """Why a tracker event must leave a closed task as it is, or None to apply it."""
    if task.is_open:
        return None
    if task.status == "completed" and status == "deleted":
        # Clearing finished tasks off the list is housekeeping: the work succeeded, and
        # turning that success into a failure would punish the memories that helped.
        return "deleted after it was completed: housekeeping, the success stands"
    if manual_verdict(conn, task.id):
        return (
            f"outcome set by hand; `memory-layer outcome --task {task.external_id} --undo` frees it"
        )
    if prior and task.status in STATUS_EVENTS and prior != task.status:
        # PostToolUse hooks run async and can arrive out of order: an update from a
        # status the task has already left (pending → in_progress arriving after
        # completed) is out of date, not a reopen.
        return f"out of date: changes it from {prior}, but it is {task.status}"
    return None


# --- reconciliation from disk --------------------------------------------------------


@dataclass
class ReconcileReport:
    lists: int = 0
    files: int = 0
    applied: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "lists": self.lists,
            "files": self.files,
            "applied": self.applied,
            "skipped": self.skipped,
        }


def tasks_dir(config: dict[str, Any] | None = None) -> Path:
    return Path(os.path.expanduser(settings(config).tasks_dir))


def _session_project(conn: Conn, session_id: str) -> str | None:
    session = get_session(conn, session_id)
    return session.project if session else None


def reconcile(
    conn: Conn,
    *,
    directory: Path | None = None,
    list_ids: list[str] | None = None,
    config: dict[str, Any] | None = None,
) -> ReconcileReport:
    """Bring our tasks up to date with the task files Claude Code keeps on disk.

    Each file's status is applied as an event at the file's modification time, so a
    file older than what a hook already told us changes nothing. A task seen only on
    disk is registered when its list is a session we know (that gives its project).
    """
    root = directory or tasks_dir(config)
    report = ReconcileReport()
    if not root.is_dir():
        return report
    names = list_ids if list_ids is not None else sorted(p.name for p in root.iterdir())
    for list_id in names:
        folder = root / list_id
        if not list_id or not folder.is_dir():
            continue
        report.lists += 1
        for path in sorted(folder.glob("*.json")):
            report.files += 1
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            except (OSError, ValueError) as exc:
                report.skipped.append(f"{path}: unreadable ({exc})")
                continue
            try:
                signal = from_task_file(data, list_id=list_id, at=stamp(mtime) or now_stamp())
            except InvalidTaskSignal as exc:
                report.skipped.append(f"{path}: {exc}")
                continue
            result = _reconcile_file(conn, signal, config)
            if isinstance(result, str):
                report.skipped.append(f"{path}: {result}")
            elif result.changed:
                report.applied.append(result.to_dict())
    return report


def _reconcile_file(
    conn: Conn, signal: TaskSignal, config: dict[str, Any] | None
) -> OutcomeResult | str:
    list_id, status = signal.list_id or "", signal.status
    known = find_task(conn, task_key(SOURCE, list_id, signal.task_id or ""))
    project = known.project if known else _session_project(conn, list_id)
    if known is None and project is None:
        return "list is not a known session; its project is unknown"
    if known is not None and known.status == status:
        # Already in this state: say nothing, so each Stop does not log every task again.
        return OutcomeResult(known.id, known.outcome, "unchanged", "already in this state")
    if known is not None and not known.is_open and manual_verdict(conn, known.id):
        # Quietly, for the same reason: the file says what the human overruled.
        return OutcomeResult(known.id, known.outcome, "unchanged", "outcome set by hand")
    # What only our store knows: the session a known task was opened in, and its
    # project (a shared or team list's name is not a session's).
    session_id = known.session_id if known else list_id
    return _apply(conn, replace(signal, session_id=session_id, project=project), config)
