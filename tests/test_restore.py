"""Issue 14, point 2: `memory-layer backup restore FILE`, through the CLI process.

The result is exactly the backup (every page; SQLite's header counters aside), the engine is stopped first and what
it acknowledged goes to the store being set aside, a store another process has open
is refused, a bad backup is refused with the store untouched, and a corrupt store's
message points to the restore.
"""

from __future__ import annotations

import hashlib
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

from memory_layer.engine import journal, lifecycle
from memory_layer.storage.restore import content_digest
from tests.test_hooks_support import Claude, engine_pids, make_project, write_config

ENGINE_KEYWORD = "embedding:\n  enabled: false\nengine:\n  enabled: true\n  idle_timeout_s: 60\n"


@pytest.fixture(autouse=True)
def no_engine_left(user_home: Path) -> Iterator[None]:
    yield
    lifecycle.stop(timeout=5.0)
    for pid in list(engine_pids(user_home)):
        os.kill(pid, signal.SIGKILL)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def ok(*args: str) -> str:
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def texts() -> list[str]:
    return sorted(m["text"] for m in json.loads(ok("list", "--json")))


def remember(text: str, category: str) -> None:
    """Written in-process (a CLI remember would start the engine these tests control)."""
    from memory_layer.config import load_config
    from memory_layer.memories import remember as do_remember
    from memory_layer.storage.db import open_db

    conn = open_db()
    try:
        do_remember(conn, text, config=load_config(), category=category, project=None)
    finally:
        conn.close()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def backed_up(user_home: Path) -> Path:
    write_config(user_home, ENGINE_KEYWORD)
    remember("Run the tests with `make test`.", "command")
    remember("The staging deploy needs the VPN up first.", "gotcha")
    out = json.loads(ok("backup", "--json"))
    assert out["memories"] == 2
    return Path(out["path"])


def test_restore_is_exactly_the_backup_and_keeps_the_current_store(
    user_home: Path, backed_up: Path
) -> None:
    before = sha(backed_up)
    remember("Use pnpm, never npm, in this monorepo.", "convention")
    # A running engine holds the store open: restore stops it first.
    assert lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(30)
    done = cli("backup", "restore", str(backed_up), "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert lifecycle.running_pid() is None
    store = user_home / "memories.db"
    assert info["identical"] is True
    assert content_digest(store) == content_digest(backed_up)
    assert sha(backed_up) == before  # and the backup itself is untouched
    assert not (user_home / "memories.db-wal").exists()
    assert texts() == ["Run the tests with `make test`.", "The staging deploy needs the VPN up first."]
    previous = Path(info["previous"][0])
    assert previous.parent == user_home / "backups"
    conn = sqlite3.connect(previous)
    kept = [r[0] for r in conn.execute("SELECT text FROM memories")]
    conn.close()
    assert "Use pnpm, never npm, in this monorepo." in kept
    # Undoable: the kept store restores the same way.
    ok("backup", "restore", str(previous))
    assert "Use pnpm, never npm, in this monorepo." in texts()


def test_restore_refuses_while_another_process_has_the_store_open(
    user_home: Path, backed_up: Path
) -> None:
    remember("Use pnpm, never npm, in this monorepo.", "convention")
    store = user_home / "memories.db"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            f"c = sqlite3.connect({str(store)!r}); c.execute('PRAGMA journal_mode=WAL')\n"
            "c.execute('SELECT count(*) FROM memories').fetchone()\n"
            "print('open', flush=True); time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        before = sha(store)
        done = cli("backup", "restore", str(backed_up))
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 1
    assert "open in other processes" in done.stderr and f"pid {holder.pid}" in done.stderr
    assert "Traceback" not in done.stderr
    assert sha(store) == before
    assert "Use pnpm, never npm, in this monorepo." in texts()


@pytest.mark.parametrize("kind", ["not sqlite", "other schema", "torn"])
def test_a_bad_backup_is_refused_and_nothing_changes(
    user_home: Path, backed_up: Path, tmp_path: Path, kind: str
) -> None:
    bad = tmp_path / "bad.db"
    if kind == "not sqlite":
        bad.write_text("these are not the pages you are looking for\n" * 100)
        expected = "not a usable SQLite database"
    elif kind == "other schema":
        conn = sqlite3.connect(bad)
        conn.execute("CREATE TABLE notes(body TEXT)")
        conn.commit()
        conn.close()
        expected = "not a memory-layer store"
    else:
        data = backed_up.read_bytes()
        bad.write_bytes(data[: len(data) // 2])  # a copy cut short
        expected = "Nothing was changed"
    store = user_home / "memories.db"
    before = sha(store)
    done = cli("backup", "restore", str(bad))
    assert done.returncode == 1, done.stdout
    assert expected in done.stderr and "Traceback" not in done.stderr
    assert sha(store) == before
    assert len(texts()) == 2


def test_a_corrupt_store_points_to_restore_which_repairs_it(
    user_home: Path, backed_up: Path
) -> None:
    store = user_home / "memories.db"
    damaged = b"\x00garbage" * 4096
    store.write_bytes(damaged)
    done = cli("list")
    assert done.returncode == 1
    assert "memory-layer backup restore FILE" in done.stderr
    done = cli("backup", "restore", str(backed_up), "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["previous_was_sound"] is False
    assert Path(info["previous"][0]).read_bytes() == damaged  # kept for forensics
    assert len(texts()) == 2


def test_events_the_engine_acknowledged_go_to_the_store_set_aside(
    user_home: Path, backed_up: Path, tmp_path: Path
) -> None:
    """What the engine acknowledged and had not written when the restore began belongs to
    the store it was acknowledged for: written there before it is kept aside, and not
    into the restored store, which stays exactly the backup."""
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    assert lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(30)
    pid = lifecycle.running_pid()
    holder = sqlite3.connect(str(user_home / "memories.db"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the worker waits behind another writer
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "echo acknowledged"},
        tool_response={"stdout": "acknowledged", "stderr": "", "interrupted": False},
    )
    assert journal.count() == 1
    os.kill(pid, signal.SIGKILL)  # the event stays in the journal
    while lifecycle._alive(pid):
        time.sleep(0.05)
    holder.rollback()
    holder.close()
    done = cli("backup", "restore", str(backed_up), "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["identical"] is True and journal.count() == 0
    conn = sqlite3.connect(info["previous"][0])
    commands = [r[0] for r in conn.execute("SELECT command FROM session_events")]
    conn.close()
    assert commands == ["echo acknowledged"]


OPENER = """
import sys
from memory_layer.storage.db import open_db
from memory_layer.storage.records import transaction

print("ready", flush=True)
sys.stdin.readline()  # told once the restore holds the store (after its open-files check)
conn = open_db()
with transaction(conn):
    conn.execute("INSERT INTO session_events (session_id, project, kind, command, at)"
                 " VALUES ('s', 'p', 'tool', 'written during the restore', '2026-12-01')")
print("written", flush=True)
"""


def test_a_process_opening_the_store_during_the_restore_writes_to_the_restored_store(
    user_home: Path, backed_up: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook (or an engine a hook starts) that opens memories.db while the restore holds
    it waits on SQLite's lock, then reads and writes the restored store through the same
    file: its write is neither lost in the store set aside nor a stale -wal/-shm left
    beside the restored file (a rename-based swap did both)."""
    from memory_layer import backup as backup_module
    from memory_layer.storage import restore as mechanics

    remember("Use pnpm, never npm, in this monorepo.", "convention")
    opener = subprocess.Popen(
        [sys.executable, "-c", OPENER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert opener.stdout is not None and opener.stdin is not None
    assert opener.stdout.readline().strip() == "ready"
    real_copy_aside = mechanics.copy_aside

    def opens_meanwhile(held: mechanics.Held, aside: Path) -> Path:
        opener.stdin.write("go\n")
        opener.stdin.flush()
        time.sleep(0.8)  # long enough to have opened the file and to wait on the lock
        assert opener.poll() is None, "the opener must be waiting on the held store"
        return real_copy_aside(held, aside)

    monkeypatch.setattr(mechanics, "copy_aside", opens_meanwhile)
    info = backup_module.restore(backed_up)
    assert opener.stdout.readline().strip() == "written"
    assert opener.wait(timeout=30) == 0
    assert info["identical"] is True
    store = user_home / "memories.db"
    conn = sqlite3.connect(store)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    written = [r[0] for r in conn.execute("SELECT command FROM session_events")]
    conn.close()
    assert written == ["written during the restore"]
    assert texts() == ["Run the tests with `make test`.", "The staging deploy needs the VPN up first."]
    aside = sqlite3.connect(info["previous"][0])
    assert [r[0] for r in aside.execute("SELECT command FROM session_events")] == []
    assert "Use pnpm, never npm, in this monorepo." in [
        r[0] for r in aside.execute("SELECT text FROM memories")
    ]
    aside.close()
    assert not Path(info["previous"][0] + "-wal").exists()
