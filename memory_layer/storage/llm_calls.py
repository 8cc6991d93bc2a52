"""The optional LLM extraction's bookkeeping (table ``llm_calls``, migration m013).

One row per `claude -p` call: what it cost is what caps the calls per day, and what
``memory-layer engine status`` reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_layer.storage.conn import Conn, raw


@dataclass(frozen=True)
class LlmCall:
    """One extraction call: sizes in characters, the cost the CLI reported (None when
    it reported none), how many memories it proposed, and the error when it failed."""

    at: str
    session_id: str
    model: str
    input_chars: int
    output_chars: int
    cost_usd: float | None
    memories: int
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def record_call(db: Conn, call: LlmCall) -> int:
    cursor = raw(db).execute(
        "INSERT INTO llm_calls(at, session_id, model, input_chars, output_chars, cost_usd, "
        "memories, ok, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            call.at,
            call.session_id,
            call.model,
            call.input_chars,
            call.output_chars,
            call.cost_usd,
            call.memories,
            int(call.ok),
            call.error,
        ],
    )
    return int(cursor.lastrowid or 0)


def calls_since(db: Conn, since: str) -> tuple[int, float]:
    """(calls, total reported cost in USD) at or after ``since``."""
    row = (
        raw(db)
        .execute(
            "SELECT count(*), coalesce(sum(cost_usd), 0) FROM llm_calls WHERE at >= ?", [since]
        )
        .fetchone()
    )
    return int(row[0]), float(row[1])
