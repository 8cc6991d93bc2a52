"""Learning over time for the overview (``api.learning_series``)."""

from __future__ import annotations

import sqlite3
from typing import Any

from memory_layer.api import learning_series
from memory_layer.web import charts

DAYS = 30


def learning(conn: sqlite3.Connection, config: dict[str, Any]) -> dict[str, Any]:
    """Two charts: tasks closed per day (successes, failures) and the proven share."""
    series = learning_series(conn, days=DAYS, config=config)
    days = [row["day"][5:] for row in series]  # MM-DD keeps the axis short
    outcomes = charts.lines(
        days,
        {
            "successes": [row["successes"] for row in series],
            "failures": [row["failures"] for row in series],
        },
        title=f"Tasks closed per day, last {DAYS} days",
    )
    proven = charts.lines(
        days,
        {"proven share of memories": [row["proven_share"] for row in series]},
        title="Share of memories proven by outcomes",
        top=1.0,
    )
    last = series[-1] if series else None
    note = (
        f"Today: {last['proven']} of {last['memories']} memories proven "
        f"({last['proven_share']:.0%})."
        if last
        else None
    )
    return {
        "outcomes_chart": outcomes,
        "proven_chart": proven,
        "note": note,
        "totals": {
            "successes": sum(row["successes"] for row in series),
            "failures": sum(row["failures"] for row in series),
        },
    }
