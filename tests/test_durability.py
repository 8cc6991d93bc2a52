"""Issue 14, point 1: an event the engine acknowledged is never lost.

Through the real boundary: hooks spawned as Claude Code spawns them, with the real
PostToolUse payload shape, acknowledged by a detached engine whose worker is busy with
a long transcript; then the engine is stopped (`memory-layer engine stop`), sent
SIGTERM or SIGKILL, and the next engine must write every acknowledged event, and read
the transcript the Stop hook handed over.
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

from memory_layer.engine import journal, lifecycle
from tests.test_hooks_support import Claude, engine_pids, make_project, write_config

FIXTURES = Path(__file__).parent / "fixtures"
ENGINE_KEYWORD = "embedding:\n  enabled: false\nengine:\n  enabled: true\n  idle_timeout_s: 60\n"
EVENTS = 10
# The captured tool_response of a real PostToolUse Bash call (tests/fixtures/hooks).
BASH_RESPONSE = json.loads(
    (FIXTURES / "hooks" / "post_tool_use_bash.tool_response.captured.json").read_text()
)["template"]


def wait_for(predicate, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(autouse=True)
def no_engine_left(user_home: Path) -> Iterator[None]:
    yield
    lifecycle.stop(timeout=5.0)
    for pid in list(engine_pids(user_home)):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def claude(user_home: Path, tmp_path: Path) -> Claude:
    write_config(user_home, ENGINE_KEYWORD)
    return Claude(user_home, make_project(tmp_path / "shop"))


def transcript(claude: Claude) -> None:
    """A transcript of real-shaped turns: the fixture transcripts, one after the other,
    with this session's id and cwd."""
    lines = []
    for path in sorted((FIXTURES / "transcripts").glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue  # the fixtures' deliberately torn lines
            if not isinstance(entry, dict):
                continue
            entry["sessionId"], entry["cwd"] = claude.session_id, str(claude.project)
            lines.append(json.dumps(entry))
    claude.transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")


def hold_write_lock(claude: Claude) -> sqlite3.Connection:
    """Another process's long write: the engine's worker waits behind it, as behind a
    long transcript, while hooks go on being acknowledged."""
    conn = sqlite3.connect(str(claude.home / "memories.db"), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def tool_events(claude: Claude) -> list[str]:
    conn = claude.db()
    try:
        rows = conn.execute(
            "SELECT command FROM session_events WHERE session_id = ? AND kind = 'tool' "
            "ORDER BY id",
            [claude.session_id],
        ).fetchall()
    finally:
        conn.close()
    return [r[0] for r in rows]


def transcript_read(claude: Claude) -> int:
    conn = claude.db()
    try:
        row = conn.execute(
            "SELECT offset FROM transcript_offsets WHERE path = ?", [str(claude.transcript)]
        ).fetchone()
    finally:
        conn.close()
    return int(row[0]) if row else 0


def busy_engine_with_acknowledged_events(claude: Claude) -> tuple[int, sqlite3.Connection]:
    """Start the engine, keep its worker waiting on the Stop's transcript behind another
    writer, then have EVENTS PostToolUse hooks acknowledged. Returns the engine's pid and
    the lock holder (the caller lets go)."""
    assert lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(30)
    pid = lifecycle.running_pid()
    assert pid and pid > 0
    transcript(claude)
    holder = hold_write_lock(claude)
    claude.hook("Stop", stop_hook_active=False, last_assistant_message="")
    assert wait_for(lambda: lifecycle.status().get("busy"), 10)
    for i in range(EVENTS):
        claude.hook(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": f"echo probe-{i}", "description": "probe"},
            tool_response={**BASH_RESPONSE, "stdout": f"probe-{i}"},
            tool_use_id=f"toolu_{i:04d}",
        )
    # Every one was acknowledged by the engine (queued behind the transcript), none
    # handled by the hook itself.
    assert lifecycle.status()["queued"] >= EVENTS
    assert tool_events(claude) == []
    assert journal.count() == EVENTS + 1  # and the Stop
    return pid, holder


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )


@pytest.mark.parametrize("how", ["engine stop", "SIGTERM", "SIGKILL", "version mismatch"])
def test_acknowledged_events_survive_the_engine(claude: Claude, how: str) -> None:
    pid, holder = busy_engine_with_acknowledged_events(claude)
    if how == "engine stop":
        done = cli("engine", "stop")
        assert done.returncode == 0, done.stderr
    elif how == "version mismatch":
        # The plugin was updated while the engine ran: it published an older version,
        # so the next hook answers by itself and asks the engine to stop.
        info = Path(lifecycle.info_path())
        info.write_text(json.dumps({**json.loads(info.read_text()), "version": "0.0.1"}))
        claude.hook("UserPromptSubmit", prompt="how do we deploy")
        assert "asked the engine to stop" in claude.log()
    else:
        os.kill(pid, getattr(signal, how))
    assert wait_for(lambda: not lifecycle._alive(pid), 10)
    if how != "SIGKILL":
        # Bounded drain: the engine itself wrote what it left in the journal and exited,
        # rather than being killed mid-write (the time it takes is measured in
        # benchmarks/durability.py, not asserted here: a loaded machine stretches it).
        assert "left in the journal" in (claude.home / "logs" / "engine.log").read_text()
    holder.rollback()
    holder.close()
    # The next engine replays what was acknowledged, the Stop's transcript included.
    done = cli("engine", "start")
    assert done.returncode == 0, done.stderr
    expected = [f"echo probe-{i}" for i in range(EVENTS)]
    assert wait_for(lambda: tool_events(claude) == expected, 120), tool_events(claude)
    assert wait_for(lambda: transcript_read(claude) == claude.transcript.stat().st_size, 120)
    assert wait_for(lambda: journal.count() == 0, 10)
    assert journal.failed() == []


def test_a_replaced_database_leaves_its_events_for_the_new_one(claude: Claude) -> None:
    """A restored (replaced) store: the old engine must not write acknowledged events
    into the file it still holds open; the engine of the new file writes them."""
    from memory_layer.storage.db import open_db

    _pid, holder = busy_engine_with_acknowledged_events(claude)
    db = claude.home / "memories.db"
    fresh = claude.home / "fresh.db"
    open_db(fresh).close()
    os.replace(fresh, db)
    # The worker's write behind the lock now goes to the old file, and is replayed.
    holder.rollback()
    holder.close()
    assert wait_for(lambda: lifecycle.running_pid() is None, 10)
    assert journal.count() >= EVENTS  # nothing was written to the replaced file
    done = cli("engine", "start")
    assert done.returncode == 0, done.stderr
    expected = [f"echo probe-{i}" for i in range(EVENTS)]
    assert wait_for(lambda: tool_events(claude) == expected, 120), tool_events(claude)


def test_an_event_the_journal_cannot_take_is_not_acknowledged(claude: Claude) -> None:
    """A journal that cannot be written (here: a read-only directory in its place)
    means no promise: the engine refuses and the hook records the event itself."""
    assert lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(30)
    folder = journal.journal_dir()
    folder.rmdir()
    folder.write_text("not a directory")  # appending below it fails for anyone, root too
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "echo handled-by-the-hook"},
        tool_response=BASH_RESPONSE,
    )
    assert tool_events(claude) == ["echo handled-by-the-hook"]
    assert "cannot journal" in claude.log()


@pytest.mark.parametrize("engine", ["not running", "frozen"])
def test_a_hook_that_cannot_write_keeps_its_event_for_the_engine(
    claude: Claude, engine: str
) -> None:
    """No engine answered (none ran, or it was frozen) and another writer held the store
    past the hook's wait: the event is journaled, not dropped, and an engine writes it
    (the one the hook starts, or the frozen one once it runs again)."""
    from memory_layer.storage.db import open_db

    open_db().close()  # an existing store (a new one would wait for its migrations)
    pid = None
    if engine == "frozen":
        assert lifecycle.spawn(force=True)
        assert lifecycle.wait_until_ready(30)
        pid = lifecycle.running_pid()
        assert pid and pid > 0
        os.kill(pid, signal.SIGSTOP)
    holder = hold_write_lock(claude)
    try:
        claude.hook(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "echo kept-for-later"},
            tool_response=BASH_RESPONSE,
        )
        assert journal.count() == 1
        assert "kept in the journal, the engine writes it" in claude.log()
    finally:
        holder.rollback()
        holder.close()
        if pid is not None:
            os.kill(pid, signal.SIGCONT)
    if engine == "not running":
        assert wait_for(lambda: lifecycle.running_pid() not in (None, -1), 30)
    assert wait_for(lambda: tool_events(claude) == ["echo kept-for-later"], 60), tool_events(claude)
    assert wait_for(lambda: journal.count() == 0, 10)


def test_an_engine_starting_keeps_a_half_written_entry_of_a_live_writer(claude: Claude) -> None:
    """A hook journals its event when the store is locked; an engine starting at that
    moment must not delete the entry it is writing (it only clears a crash's leftovers:
    partials of processes that are gone, or too old to be anyone's write in progress)."""
    folder = journal.journal_dir()
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        live = folder / f".{time.time_ns():020d}-{writer.pid}-000000.json.partial"
        dead = folder / f".{time.time_ns():020d}-{gone.pid}-000000.json.partial"
        stale = folder / f".{time.time_ns():020d}-{writer.pid}-000001.json.partial"
        for path in (live, dead, stale):
            path.write_text('{"format": 1, "rece')
        old = time.time() - journal.PARTIAL_STALE_S - 5
        os.utime(stale, (old, old))
        assert lifecycle.spawn(force=True)
        assert lifecycle.wait_until_ready(30)
        assert live.exists()
        assert not dead.exists() and not stale.exists()
    finally:
        writer.kill()
        writer.wait()
