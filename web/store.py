"""What every page shares: the per-request store connection and the process's embedder.

Apart from ``app`` so the pages can import it while ``app`` imports the pages.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from flask import g


def db() -> sqlite3.Connection:
    """One connection per request, opened on first use and closed at teardown."""
    if "db" not in g:
        from memory_layer.api import open_db

        g.db = open_db()
    return g.db


_embedder_lock = threading.Lock()


def embedder(config: dict[str, Any]) -> Any:
    """The process-wide embedder the CLI uses too (None = keyword-only).

    The lock keeps two first requests from loading the model twice at once.
    """
    from memory_layer.api import get_embedder

    with _embedder_lock:
        return get_embedder(config)


def close_db(_exc: BaseException | None) -> None:
    conn = g.pop("db", None)
    if conn is not None:
        conn.close()
