"""Learning over time for the overview, from memory_layer.outcomes when it is installed."""

from __future__ import annotations

import sqlite3
from typing import Any

from memory_layer.web.optional import feature


def learning(conn: sqlite3.Connection, config: dict[str, Any]) -> dict[str, Any]:
    found = feature("memory_layer.outcomes", "learning_series")
    if not found.ok:
        return {"available": False, "missing": found.missing}
    series = found.module.learning_series(conn, days=30)  # type: ignore[union-attr]
    return {"available": True, "series": series}
