"""Issue 14, points 3, 9, 10 and 11: faults of the store, seen through the real doors.

A write-locked store still injects; a full disk is a one-line error that loses
nothing acknowledged; stale read-only ``-wal``/``-shm`` files are named by `doctor`;
a corrupt store makes SessionStart say once that memory is off and how to fix it.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_layer.engine import lifecycle
from tests.test_hooks_support import (
    KEYWORD_ONLY,
    Claude,
    engine_pids,
    make_project,
    write_config,
)

MEMORY = "psycopg2 connection refused on port 5432: run `docker compose up -d db` first."
PROMPT = "psycopg2 connection refused on port 5432"
ENGINE_KEYWORD = "embedding:\n  enabled: false\nengine:\n  enabled: true\n  idle_timeout_s: 60\n"


@pytest.fixture(autouse=True)
def no_engine_left(user_home: Path) -> Iterator[None]:
    yield
    for pid in list(engine_pids(user_home)):
        os.kill(pid, signal.SIGCONT)  # a frozen one must be able to hear the stop
    lifecycle.stop(timeout=5.0)
    for pid in list(engine_pids(user_home)):
        os.kill(pid, signal.SIGKILL)


def seed(text: str = MEMORY) -> str:
    from memory_layer.config import load_config
    from memory_layer.memories import remember
    from memory_layer.storage.db import open_db

    conn = open_db()
    try:
        return remember(
            conn, text, config=load_config(), category="troubleshooting",
            project="github.com/acme/shop",
        ).memory.id
    finally:
        conn.close()


def hold_write_lock(home: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(home / "memories.db"), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE meta SET value = value WHERE key = 'generation'")
    return conn


def cli(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True, text=True, timeout=60, **kwargs,  # type: ignore[call-overload]
    )


# --- 3: a write-locked store must not starve injection --------------------------------


@pytest.mark.parametrize("event", ["UserPromptSubmit", "SessionStart"])
def test_a_write_locked_store_still_injects(user_home: Path, tmp_path: Path, event: str) -> None:
    write_config(user_home, KEYWORD_ONLY)
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    seed()
    holder = hold_write_lock(user_home)
    try:
        fields = {"prompt": PROMPT} if event == "UserPromptSubmit" else {"source": "startup"}
        context = claude.context(event, **fields)
    finally:
        holder.rollback()
        holder.close()
    assert "docker compose up -d db" in context
    assert "skipped: another process holds the store's write lock" in claude.log()


def test_a_frozen_engine_and_a_locked_store_still_inject(
    user_home: Path, tmp_path: Path
) -> None:
    """The engine stopped with SIGSTOP (its socket accepts, nobody answers) while another
    process holds the write lock: the hook waits out the engine's deadline, answers by
    itself from the store it can still read, and skips its bookkeeping."""
    write_config(user_home, ENGINE_KEYWORD)
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    seed()
    assert lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(30)
    pid = lifecycle.running_pid()
    assert pid and pid > 0
    os.kill(pid, signal.SIGSTOP)
    holder = hold_write_lock(user_home)
    try:
        context = claude.context("UserPromptSubmit", prompt=PROMPT)
    finally:
        holder.rollback()
        holder.close()
        os.kill(pid, signal.SIGCONT)
    assert "docker compose up -d db" in context
    assert "skipped: another process holds the store's write lock" in claude.log()
    conn = claude.db()
    usage = conn.execute("SELECT count(*) FROM usage").fetchone()[0]
    conn.close()
    assert usage == 0  # the surfacing was skipped, not written late by anyone


def test_bookkeeping_is_written_when_the_store_is_free(
    user_home: Path, tmp_path: Path
) -> None:
    write_config(user_home, KEYWORD_ONLY)
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    memory_id = seed()
    assert "docker compose" in claude.context("UserPromptSubmit", prompt=PROMPT)
    conn = claude.db()
    rows = conn.execute("SELECT memory_id, kind FROM usage").fetchall()
    prompts = conn.execute("SELECT text FROM session_events WHERE kind = 'prompt'").fetchall()
    conn.close()
    assert rows == [(memory_id, "injected")]
    assert prompts == [(PROMPT,)]
    assert "skipped" not in claude.log()
