"""Overview: counts, the outcome score distribution, learning over time, recent activity."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template

from memory_layer.api import (
    activity_in_words,
    judged_outcome_scores,
    memories_by_id,
    recent_operations,
    stats,
)
from memory_layer.config import load_config
from memory_layer.web import charts
from memory_layer.web.learning import learning
from memory_layer.web.store import db

bp = Blueprint("overview", __name__)

# How many entries the overview lists under "recent activity", and how many of the
# latest operations it reads for them: about half of the log is approval stamps that
# fold into the write before them.
RECENT_ACTIVITY = 25
RECENT_OPERATIONS = 4 * RECENT_ACTIVITY


def _top(counts: dict[str, int], n: int = 12) -> list[tuple[str, float]]:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    head = [(k, float(v)) for k, v in items[:n]]
    rest = sum(v for _, v in items[n:])
    return head + ([(f"{len(items) - n} others", float(rest))] if rest else [])


@bp.get("/")
def index() -> str:
    conn = db()
    info = stats(conn)
    figures: dict[str, Any] = {
        "category": charts.bars(_top(info["by_category"], 16), title="Memories by category"),
        "status": charts.bars(_top(info["by_status"]), title="Memories by status"),
        "project": charts.bars(_top(info["by_project"]), title="Memories by project"),
        "outcomes": charts.histogram(
            judged_outcome_scores(conn),
            title=f"Outcome scores of active memories judged by a task "
            f"({info['outcomes']['judged']}; the others have none yet)",
        ),
    }
    activity = activity_in_words(recent_operations(conn, RECENT_OPERATIONS), RECENT_ACTIVITY)
    found = memories_by_id(conn, [e.op.memory_id for e in activity if e.op.memory_id])
    texts = {memory_id: memory.text for memory_id, memory in found.items()}
    return render_template(
        "overview.html",
        info=info,
        figures=figures,
        learning=learning(conn, load_config()),
        activity=activity,
        texts=texts,
    )
