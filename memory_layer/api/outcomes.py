"""Outcomes: reports that a memory or a task worked or failed."""

from __future__ import annotations

from memory_layer.api.reading import agent_record
from memory_layer.api.writing import check_reason, is_proposal
from memory_layer.errors import InvalidInput

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.storage.conn import Conn



# An agent's direct report on a memory counts once per memory per this many hours: one
# agent repeating "it failed" must not be able to sink (and so withdraw) a memory the
# user approved. Reports on a task are bounded already: each task credits a memory once.
AGENT_REPORT_HOURS = 24


def check_agent_report(db: Conn, memory_id: str, source: str) -> None:
    """Refuse a second direct report by ``source`` on ``memory_id`` within the window."""
    from datetime import timedelta

    from memory_layer.models import iso, utcnow
    from memory_layer.storage.credits import live_direct_reports

    since = iso(utcnow() - timedelta(hours=AGENT_REPORT_HOURS))
    earlier = live_direct_reports(db, memory_id, source, since)
    if earlier:
        raise InvalidInput(
            f"You already reported on memory {memory_id} at {earlier[-1]['at'][:19]}; an "
            f"agent's report on a memory counts once per {AGENT_REPORT_HOURS} hours. Report "
            "the outcome of the task you used it in (task_id) instead, or tell the user."
        )


def report_outcome(
    db: Conn,
    *,
    worked: bool,
    source: str,
    config: dict[str, Any],
    memory_id: str | None = None,
    task_id: str | None = None,
    project: str | None = None,
    reason: str | None = None,
) -> Any:
    """A report that a memory (``memory_id``) or a task (``task_id``) worked or failed.

    From an agent (``mcp:*``), a report on a memory must be about one it could have
    been shown, and counts once per memory per ``outcomes.AGENT_REPORT_HOURS``: one
    agent repeating "it failed" must not sink a memory a person approved. A person's
    report (the CLI, the dashboard) is not limited.
    """
    from memory_layer.outcomes import memory_feedback, record_outcome
    from memory_layer.storage.records import get_memory

    if bool(memory_id) == bool(task_id):
        raise InvalidInput("Give exactly one of memory_id (a memory you used) or task_id.")
    check_reason(reason)
    if task_id:
        return record_outcome(
            db,
            str(task_id),
            worked,
            source=source,
            actor=source,
            reason=reason,
            config=config,
            project=project,
        )
    from memory_layer.storage.records import transaction

    # One write transaction: two servers reporting as the same agent cannot both pass
    # the once-per-window check.
    with transaction(db):
        if is_proposal(source):
            # An agent cannot have used what it was never shown; and the refusal is the
            # one for an unknown id, so a report is no way to probe a withheld record.
            memory = agent_record(db, memory_id, config)
            check_agent_report(db, memory.id, source)
        else:
            memory = get_memory(db, str(memory_id))
        return memory_feedback(
            db, memory.id, worked, actor=source, source=source, reason=reason, config=config
        )
