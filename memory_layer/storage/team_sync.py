"""The local side of team sync: the outbox, per-project cursors and sync state
(tables ``team_outbox``, ``team_cursors``, ``team_state``)."""

from __future__ import annotations

import json
from typing import Any

from memory_layer.models import now_stamp
from memory_layer.storage.conn import Conn, raw
from memory_layer.storage.records import transaction


def enqueue(db: Conn, *, key: str, kind: str, memory_id: str | None, body: dict[str, Any]) -> None:
    with transaction(db):
        raw(db).execute(
            "INSERT OR IGNORE INTO team_outbox(id, kind, memory_id, body, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [key, kind, memory_id, json.dumps(body, ensure_ascii=False), now_stamp()],
        )


def waiting(db: Conn, limit: int = 500) -> list[dict[str, Any]]:
    rows = raw(db).execute(
        "SELECT id, kind, memory_id, body, attempts, last_error FROM team_outbox "
        "WHERE sent_at IS NULL ORDER BY created_at, rowid LIMIT ?",
        [limit],
    ).fetchall()
    keys = ("id", "kind", "memory_id", "body", "attempts", "last_error")
    out = []
    for row in rows:
        item = dict(zip(keys, row, strict=True))
        item["body"] = json.loads(item["body"])
        out.append(item)
    return out


def waiting_count(db: Conn) -> int:
    return int(
        raw(db).execute("SELECT count(*) FROM team_outbox WHERE sent_at IS NULL").fetchone()[0]
    )


def mark_sent(db: Conn, key: str, answer: dict[str, Any]) -> None:
    with transaction(db):
        raw(db).execute(
            "UPDATE team_outbox SET sent_at = ?, answer = ?, last_error = NULL WHERE id = ?",
            [now_stamp(), json.dumps(answer, ensure_ascii=False, default=str), key],
        )


def mark_failed(db: Conn, key: str, error: str) -> None:
    with transaction(db):
        raw(db).execute(
            "UPDATE team_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?",
            [error[:500], key],
        )


def sent_answers(db: Conn, kind: str, limit: int = 50) -> list[dict[str, Any]]:
    rows = raw(db).execute(
        "SELECT id, memory_id, body, answer, sent_at FROM team_outbox WHERE kind = ? "
        "AND sent_at IS NOT NULL ORDER BY sent_at DESC LIMIT ?",
        [kind, limit],
    ).fetchall()
    return [
        {"id": r[0], "memory_id": r[1], "body": json.loads(r[2]),
         "answer": json.loads(r[3] or "null"), "sent_at": r[4]}
        for r in rows
    ]


def cursors(db: Conn, server: str) -> dict[str, int]:
    rows = raw(db).execute(
        "SELECT project, seq FROM team_cursors WHERE server = ?", [server]
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def set_cursor(db: Conn, server: str, project: str, seq: int) -> None:
    raw(db).execute(
        "INSERT INTO team_cursors(server, project, seq) VALUES (?, ?, ?) "
        "ON CONFLICT(server, project) DO UPDATE SET seq = excluded.seq",
        [server, project, seq],
    )


def state(db: Conn) -> dict[str, str]:
    return {r[0]: r[1] for r in raw(db).execute("SELECT key, value FROM team_state")}


def set_state(db: Conn, values: dict[str, str | None]) -> None:
    with transaction(db):
        for key, value in values.items():
            raw(db).execute(
                "INSERT INTO team_state(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
