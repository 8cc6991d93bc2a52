"""The warm engine: started detached by a hook, answering hooks, falling back when absent
or slow, one instance, idle exit, stale files cleaned, never left running by a test."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_layer.engine import lifecycle
from memory_layer.engine.client import request, socket_path
from tests.test_hooks_support import Claude, engine_pids, make_project, memories, write_config

ENGINE_KEYWORD = "embedding:\n  enabled: false\nengine:\n  enabled: true\n  idle_timeout_s: 60\n"


def wait_for(predicate, timeout: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(autouse=True)
def no_engine_left(user_home: Path) -> Iterator[None]:
    """Stop every engine a test started, and fail the test if one had to be killed."""
    yield
    lifecycle.stop(timeout=5.0)
    leftover = list(engine_pids(user_home))
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert wait_for(lambda: not list(engine_pids(user_home)), 10.0)
    assert leftover == [], f"engine processes survived stop(): {leftover}"


@pytest.fixture
def claude(user_home: Path, tmp_path: Path) -> Claude:
    write_config(user_home, ENGINE_KEYWORD)
    return Claude(user_home, make_project(tmp_path / "shop"))


def seed(text: str, category: str = "troubleshooting") -> str:
    from memory_layer.config import load_config
    from memory_layer.memories import remember
    from memory_layer.storage.db import open_db

    conn = open_db()
    try:
        return remember(
            conn, text, config=load_config(), category=category, project="github.com/acme/shop"
        ).memory.id
    finally:
        conn.close()


PROMPT = "psycopg2 connection refused on port 5432"
MEMORY = "psycopg2 connection refused on port 5432: run `docker compose up -d db` first."


def test_hook_starts_engine_detached_and_returns_with_pipes_closed(claude: Claude) -> None:
    seed(MEMORY)
    proc = claude.spawn("UserPromptSubmit")
    payload = json.dumps(claude.payload("UserPromptSubmit", prompt=PROMPT)).encode()
    # communicate() reads stdout and stderr to EOF: had the engine inherited the hook's
    # pipes, this would hang until the engine exits (60 s idle timeout; 60 s test limit).
    out, _err = proc.communicate(payload, timeout=30)
    assert proc.returncode == 0
    assert "docker compose up -d db" in out.decode()  # answered in-process meanwhile
    assert wait_for(lambda: lifecycle.running_pid() not in (None, -1))
    pid = lifecycle.running_pid()
    assert pid is not None and pid > 0
    assert list(engine_pids(claude.home)) == [pid]
    assert os.getsid(pid) == pid  # a session of its own, not the hook's
    for fd in (0, 1, 2):
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
        assert "pipe:" not in target, (fd, target)
    assert lifecycle.wait_until_ready(20)


def test_engine_answers_hooks_and_records_usage(claude: Claude) -> None:
    memory_id = seed(MEMORY)
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    before = lifecycle.status()["requests"]
    context = claude.context("UserPromptSubmit", prompt=PROMPT)
    assert "docker compose up -d db" in context
    assert lifecycle.status()["requests"] > before + 1  # the hook's request (+ this status)
    conn = claude.db()
    rows = conn.execute("SELECT memory_id, kind, session_id FROM usage").fetchall()
    conn.close()
    assert rows == [(memory_id, "injected", claude.session_id)]
    # Capture events are queued in the engine and acknowledged at once.
    claude.hook(
        "PostToolUse",
        tool_name="Bash",
        tool_input={"command": "make test"},
        tool_response={"stdout": "ok", "stderr": "", "interrupted": False},
    )
    assert wait_for(
        lambda: any(m["text"] == "Run the tests with `make test`." for m in memories(claude.home))
    )
    # SessionEnd hands the pending work to the engine, which does it at once.
    claude.say("user", "Remember that the staging deploy needs the VPN up first.")
    claude.hook("SessionEnd", reason="other")
    assert wait_for(
        lambda: any("staging deploy needs the VPN" in m["text"] for m in memories(claude.home))
    )


class SilentEngine:
    """Holds the engine lock and accepts connections but never answers: a hung engine."""

    def __init__(self) -> None:
        self.lock_fd = os.open(lifecycle.lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.pwrite(self.lock_fd, str(os.getpid()).encode(), 0)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(socket_path())
        self.server.listen(8)
        self.held: list[socket.socket] = []
        Path(lifecycle.info_path()).write_text(
            json.dumps({"prompt_deadline_ms": 150, "deadline_ms": 150})
        )
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.server.close()
        for conn in self.held:
            conn.close()
        os.unlink(socket_path())
        os.unlink(lifecycle.info_path())
        os.close(self.lock_fd)


def test_slow_engine_falls_back_to_keyword_only(claude: Claude) -> None:
    seed(MEMORY)
    silent = SilentEngine()
    try:
        context = claude.context("UserPromptSubmit", prompt=PROMPT)
        assert "docker compose up -d db" in context
        assert len(silent.held) == 1  # it did ask the engine first
        conn = claude.db()
        assert conn.execute("SELECT count(*) FROM usage").fetchone() == (1,)
        conn.close()
    finally:
        silent.close()


def test_absent_engine_falls_back_and_engine_disabled_is_never_started(
    claude: Claude,
) -> None:
    seed(MEMORY)
    write_config(claude.home, "embedding:\n  enabled: false\nengine:\n  enabled: false\n")
    assert "docker compose" in claude.context("UserPromptSubmit", prompt=PROMPT)
    time.sleep(0.5)
    assert lifecycle.running_pid() is None and not list(engine_pids(claude.home))


def test_engine_exits_when_idle(claude: Claude) -> None:
    write_config(claude.home, ENGINE_KEYWORD.replace("idle_timeout_s: 60", "idle_timeout_s: 1"))
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    pid = lifecycle.running_pid()
    assert wait_for(lambda: lifecycle.running_pid() is None, 20)
    assert wait_for(lambda: not lifecycle._alive(pid), 10)  # exited (maybe unreaped: our child)
    assert not os.path.exists(socket_path())
    assert lifecycle.client_settings() is None


def test_single_instance(claude: Claude) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memory_layer.engine"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**claude.env, "PYTHONSAFEPATH": "1"},
        )
        for _ in range(3)
    ]
    assert lifecycle.wait_until_ready(20)
    # All but one see the lock taken and exit 0 at once.
    exits = sorted(p.wait(timeout=20) if p.pid != lifecycle.running_pid() else -1 for p in procs)
    assert exits == [-1, 0, 0]
    assert list(engine_pids(claude.home)) == [lifecycle.running_pid()]
    assert not lifecycle.spawn()  # already running: nothing started
    lifecycle.stop()
    for p in procs:
        p.wait(timeout=10)


def test_stale_files_from_a_crash_are_cleaned(claude: Claude) -> None:
    Path(socket_path()).write_text("left by a crashed engine")
    Path(lifecycle.info_path()).write_text('{"prompt_deadline_ms": 150}')
    Path(lifecycle.lock_path()).write_text("999999")
    seed(MEMORY)
    assert "docker compose" in claude.context("UserPromptSubmit", prompt=PROMPT)
    assert lifecycle.wait_until_ready(20)  # the hook's spawn replaced the stale socket
    assert lifecycle.running_pid() not in (None, 999999)


def test_killed_engine_is_replaced(claude: Claude) -> None:
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    pid = lifecycle.running_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    # The kernel releases the lock once the last thread is gone; files get cleaned.
    assert wait_for(lambda: lifecycle.running_pid() is None)
    assert not os.path.exists(socket_path())
    seed(MEMORY)
    assert "docker compose" in claude.context("UserPromptSubmit", prompt=PROMPT)
    assert lifecycle.wait_until_ready(20)


def test_engine_exits_when_its_socket_is_removed(claude: Claude) -> None:
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    os.unlink(socket_path())
    assert wait_for(lambda: lifecycle.running_pid() is None, 10)


def test_bad_requests_get_errors_not_crashes(claude: Claude) -> None:
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    assert request({"op": "nonsense"}, 2.0) == {"ok": False, "error": "unknown op 'nonsense'"}
    reply = request({"op": "hook", "event": {"type": "Bogus"}}, 2.0)
    assert reply is not None and reply["ok"] is False
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(socket_path())
    sock.sendall(b"{not json\n")
    assert b'"ok": false' in sock.recv(4096)
    sock.close()
    assert request({"op": "ping"}, 2.0)["ok"] is True


def test_cli_engine_start_status_stop(claude: Claude) -> None:
    cli = [sys.executable, "-m", "memory_layer", "engine"]
    env = {**claude.env, "PYTHONSAFEPATH": "1"}
    done = subprocess.run([*cli, "start"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "engine started, pid" in done.stdout
    status = subprocess.run(
        [*cli, "status", "--json"], capture_output=True, text=True, env=env, timeout=30
    )
    info = json.loads(status.stdout)
    assert (
        info["running"]
        and info["ready"]
        and info["embedder"] == ("embedding.enabled is false in config.yaml")
    )
    done = subprocess.run([*cli, "stop"], capture_output=True, text=True, env=env, timeout=30)
    assert done.stdout.strip() == "engine stopped"
    done = subprocess.run([*cli, "status"], capture_output=True, text=True, env=env, timeout=30)
    assert "not running" in done.stdout


def test_engine_with_the_real_model_backfills_keyword_only_memories(
    user_home: Path, tmp_path: Path
) -> None:
    """The one test that loads the bundled model (~1-2 s): keyword-only writes by hooks
    get embedded by the engine, and prompts are then answered with vectors."""
    # A generous deadline: this is about what the engine answers, not how fast.
    write_config(
        user_home, "engine:\n  enabled: true\n  idle_timeout_s: 60\n  prompt_deadline_ms: 5000\n"
    )
    claude = Claude(user_home, make_project(tmp_path / "shop"))
    seed("The staging database only accepts connections over the corporate VPN.", "gotcha")
    conn = claude.db()
    assert conn.execute("SELECT count(*) FROM memories WHERE embedding IS NULL").fetchone() == (1,)
    conn.close()
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(60)
    assert wait_for(lambda: lifecycle.status().get("without_embedding") == 0, 60)
    # One word in common: below the keyword-only floor, so only vectors can find it.
    prompt = "the staging db refuses me at home"
    context = claude.context("UserPromptSubmit", prompt=prompt)
    assert "corporate VPN" in context
    lifecycle.stop()
    write_config(user_home, "engine:\n  enabled: false\n")
    assert Claude(user_home, claude.project).context("UserPromptSubmit", prompt=prompt) == ""


def test_engine_exits_when_the_database_is_replaced(claude: Claude) -> None:
    seed(MEMORY)
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    db = claude.home / "memories.db"
    copy = claude.home / "restored.db"
    copy.write_bytes(db.read_bytes())
    os.replace(copy, db)  # what restoring a backup does
    assert wait_for(lambda: lifecycle.running_pid() is None, 10)


@pytest.mark.parametrize("engine", [True, False], ids=["engine", "in-process"])
def test_parallel_hooks_all_land(claude: Claude, engine: bool) -> None:
    """Claude Code runs hooks in parallel: every one exits 0 and every event is recorded,
    through the engine's queue or by concurrent writers in WAL mode."""
    if engine:
        lifecycle.spawn(force=True)
        assert lifecycle.wait_until_ready(20)
    else:
        write_config(claude.home, "embedding:\n  enabled: false\nengine:\n  enabled: false\n")
    procs = []
    for i in range(8):
        payload = claude.payload(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": f"pytest tests/test_part_{i}.py"},
            tool_response={"stdout": "ok", "stderr": "", "interrupted": False},
        )
        proc = claude.spawn("PostToolUse")
        procs.append((proc, json.dumps(payload).encode()))
    for proc, payload in procs:
        out, _err = proc.communicate(payload, timeout=60)
        assert proc.returncode == 0 and out == b""

    def recorded() -> int:
        conn = claude.db()
        try:
            return conn.execute("SELECT count(*) FROM session_events").fetchone()[0]
        finally:
            conn.close()

    assert wait_for(lambda: recorded() == 8)
    assert "failed" not in claude.log()


def test_engine_of_another_version_is_replaced(claude: Claude, tmp_path: Path) -> None:
    """A plugin update while the engine runs: the new hook must not be answered by old code."""
    import shutil

    import memory_layer

    seed(MEMORY)
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    old_pid = lifecycle.running_pid()
    assert lifecycle.client_settings()["version"] == memory_layer.__version__
    # The new install: the same package under another version, first on the path.
    newer = tmp_path / "newer"
    shutil.copytree(Path(memory_layer.__file__).parent, newer / "memory_layer",
                    ignore=shutil.ignore_patterns("__pycache__", "web", "models"))
    init = newer / "memory_layer" / "__init__.py"
    init.write_text(init.read_text().replace(memory_layer.__version__, "99.0.0"))
    env = {"PYTHONPATH": str(newer)}
    payload = json.dumps(claude.payload("UserPromptSubmit", prompt=PROMPT)).encode()
    done = claude.raw("UserPromptSubmit", payload, env)
    assert done.returncode == 0 and b"docker compose up -d db" in done.stdout  # in-process
    log = (claude.home / "logs" / "hooks.log").read_text()
    assert f"the engine runs memory-layer '{memory_layer.__version__}', this hook '99.0.0'" in log
    assert wait_for(lambda: not lifecycle._alive(old_pid), 20)
    # The next hook of the new install starts an engine of its own version.
    assert claude.raw("UserPromptSubmit", payload, env).returncode == 0
    assert wait_for(lambda: (lifecycle.client_settings() or {}).get("version") == "99.0.0", 30)
    assert lifecycle.running_pid() != old_pid


def test_an_older_hook_leaves_a_newer_engine_running(claude: Claude, tmp_path: Path) -> None:
    """Two installs in use (a dev venv and the plugin): the older one's hooks answer by
    themselves instead of stopping the newer engine, so they never keep stopping each
    other."""
    import shutil

    import memory_layer

    seed(MEMORY)
    lifecycle.spawn(force=True)
    assert lifecycle.wait_until_ready(20)
    pid = lifecycle.running_pid()
    older = tmp_path / "older"
    shutil.copytree(Path(memory_layer.__file__).parent, older / "memory_layer",
                    ignore=shutil.ignore_patterns("__pycache__", "web", "models"))
    init = older / "memory_layer" / "__init__.py"
    init.write_text(init.read_text().replace(memory_layer.__version__, "0.0.1"))
    payload = json.dumps(claude.payload("UserPromptSubmit", prompt=PROMPT)).encode()
    done = claude.raw("UserPromptSubmit", payload, {"PYTHONPATH": str(older)})
    assert done.returncode == 0 and b"docker compose up -d db" in done.stdout
    log = (claude.home / "logs" / "hooks.log").read_text()
    assert "this hook '0.0.1': answering in-process" in log and "asked the engine" not in log
    time.sleep(1.0)
    assert lifecycle.running_pid() == pid and lifecycle._alive(pid)
