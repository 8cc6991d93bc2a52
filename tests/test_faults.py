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
import time
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


# --- 9: a full disk is a one-line error, and nothing acknowledged is lost -------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs: a real filesystem that fills up."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(mount)],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); CI runs as root")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_is_one_line_and_loses_nothing(small_disk: Path, tmp_path: Path) -> None:
    home = small_disk / "home"
    env = {**os.environ, "MEMORY_LAYER_HOME": str(home)}
    write_config(home, KEYWORD_ONLY)
    first = cli("remember", "Run the tests with `make test`.", "--category", "command", env=env)
    assert first.returncode == 0, first.stderr
    filler = fill(small_disk)
    big = "The deploy checklist: " + " ".join(f"step-{i} verify the canary" for i in range(900))
    done = cli("remember", big[:9000], "--category", "context", env=env)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is full" in lines[0] and "Traceback" not in done.stderr, lines
    assert "Free some space" in lines[0]
    # A hook on the full disk: fail-open, exit 0, the reason in the log.
    claude = Claude(home, make_project(tmp_path / "shop"))
    claude.hook("PostToolUse", tool_name="Bash", tool_input={"command": "make test"},
                tool_response={"stdout": "ok", "stderr": "", "interrupted": False})
    filler.unlink()
    # What was stored before is intact, and the store takes writes again.
    listed = cli("list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [m["text"] for m in json.loads(listed.stdout)] == ["Run the tests with `make test`."]
    check = cli("doctor", "--json", env=env)
    database = next(c for c in json.loads(check.stdout) if c["name"] == "database")
    assert database["ok"], database
    again = cli("remember", big[:9000], "--category", "context", env=env)
    assert again.returncode == 0, again.stderr


def test_an_engine_on_a_full_disk_acknowledges_nothing_it_cannot_keep(
    small_disk: Path, tmp_path: Path
) -> None:
    home = small_disk / "home"
    write_config(home, ENGINE_KEYWORD)
    claude = Claude(home, make_project(tmp_path / "shop"))
    env = {**os.environ, "MEMORY_LAYER_HOME": str(home)}
    started = cli("engine", "start", env=env)
    assert started.returncode == 0, started.stderr
    filler = fill(small_disk)
    try:
        for i in range(5):
            claude.hook(
                "PostToolUse",
                tool_name="Bash",
                tool_input={"command": f"echo full-{i}"},
                tool_response={"stdout": "x" * 20000, "stderr": "", "interrupted": False},
            )
        from memory_layer.engine import journal

        os.environ["MEMORY_LAYER_HOME"] = str(home)
        acknowledged = journal.count()
        filler.unlink()
        # Whatever the engine did acknowledge before the disk filled is written now.
        stopped = cli("engine", "stop", env=env)
        assert stopped.returncode == 0, stopped.stderr
        restarted = cli("engine", "start", env=env)
        assert restarted.returncode == 0, restarted.stderr
        end = time.monotonic() + 30
        while journal.count() and time.monotonic() < end:
            time.sleep(0.1)
        conn = sqlite3.connect(str(home / "memories.db"))
        written = conn.execute("SELECT count(*) FROM session_events").fetchone()[0]
        conn.close()
        assert journal.count() == 0 and journal.failed() == []
        assert written >= acknowledged
        # Refused, not promised: the engine said it could not keep them.
        assert "cannot journal" in (home / "logs" / "engine.log").read_text()
    finally:
        filler.unlink(missing_ok=True)
        cli("engine", "stop", env=env)


# --- 10: stale read-only -wal/-shm are named by doctor ------------------------------


def leave_stale_files(store: Path) -> None:
    for suffix in ("-wal", "-shm"):
        extra = store.with_name(store.name + suffix)
        extra.touch()
        extra.chmod(0o400)  # what a read-only run leaves


def test_doctor_names_a_stale_read_only_shm_and_wal(user_home: Path) -> None:
    write_config(user_home, KEYWORD_ONLY)
    seed()
    store = user_home / "memories.db"
    leave_stale_files(store)
    done = cli("doctor", "--json")
    assert done.returncode == 1
    files = next(c for c in json.loads(done.stdout) if c["name"] == "store files")
    assert not files["ok"]
    assert "memories.db-wal is read-only (mode 0400)" in files["detail"]
    assert "memories.db-shm is read-only (mode 0400)" in files["detail"]
    assert "memories.db mode 0600" in files["detail"]
    leave_stale_files(store)  # root's SQLite resets them on open; anyone else's fails
    text = cli("doctor").stdout
    assert "!!  store files" in text and "chmod u+w" in text
    leave_stale_files(store)
    for suffix in ("-wal", "-shm"):
        store.with_name(store.name + suffix).chmod(0o600)
    files = next(c for c in json.loads(cli("doctor", "--json").stdout) if c["name"] == "store files")
    assert files["ok"], files


# --- 11: a corrupt or unreadable store: SessionStart says memory is off ------------------


@pytest.mark.parametrize("damage", ["corrupt", "unreadable"])
def test_session_start_says_once_that_memory_is_off(
    user_home: Path, tmp_path: Path, damage: str
) -> None:
    write_config(user_home, KEYWORD_ONLY)
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    store = user_home / "memories.db"
    if damage == "corrupt":
        store.write_bytes(b"SQLite format 3\0" + b"\xff" * 8192)
    else:
        store.mkdir()  # not a file at all: SQLite cannot open it
    out = json.loads(claude.hook("SessionStart", source="startup"))
    message = out["systemMessage"]
    assert message.startswith("memory-layer: memory is off for this session")
    assert "memory-layer doctor" in message and "memory-layer backup restore FILE" in message
    assert len(message) < 600
    assert "off for this session" in out["hookSpecificOutput"]["additionalContext"]
    # Said once: the prompts and a compaction of the same session stay silent.
    assert claude.hook("UserPromptSubmit", prompt=PROMPT) == ""
    assert claude.hook("SessionStart", source="compact") == ""
    assert "fail-open" in claude.log()


def test_a_read_only_store_error_names_the_file_to_fix(user_home: Path) -> None:
    """What a non-root user's write meets after a read-only run (root's SQLite writes
    anyway, so the message is checked on SQLite's own error text): the culprit named."""
    from memory_layer.storage.db import explain_error

    seed()
    store = user_home / "memories.db"
    leave_stale_files(store)
    message = str(explain_error(sqlite3.OperationalError("attempt to write a readonly database"),
                                store))
    assert "memories.db-wal is read-only (mode 0400)" in message
    assert "memories.db-shm is read-only (mode 0400)" in message
    assert "memory-layer doctor" in message
