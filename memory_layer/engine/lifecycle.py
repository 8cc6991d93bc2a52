"""Starting, finding and stopping the one engine per user.

Files in ``run_dir()``:

* ``engine.lock``: the engine holds an exclusive ``flock`` on it for its whole
  life and writes its pid there. The kernel drops the lock when the process
  dies, however it dies, so "is an engine running?" never trusts a stale pid.
* ``engine.sock`` (see ``client.socket_path``): created only after the lock is
  held and the model is loaded; a socket left by a crash is removed by the
  next engine, or by anyone who finds the lock free.
* ``engine.json``: the client settings (deadlines) the hooks read without
  loading config.yaml.
* ``engine.spawned``: when a hook last started an engine, so a burst of hooks
  starts one process, not one each.

``run/`` must be ours and private, and so must the socket and engine.json
(``guard``): otherwise nothing here starts or talks to an engine (``UnsafeFiles``).

Standard library only: hooks import this to start the engine.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from typing import Any

from memory_layer.engine.client import (
    check_runtime,
    client_settings,
    info_path,
    request,
    socket_path,
)
from memory_layer.engine.guard import UnsafeFiles
from memory_layer.paths import logs_dir, run_dir, user_dir

SPAWN_COOLDOWN_S = 10.0
__all__ = ["client_settings", "info_path", "running_pid", "spawn", "status", "stop"]


def lock_path() -> str:
    return os.path.join(str(run_dir()), "engine.lock")


def log_path() -> str:
    return os.path.join(str(logs_dir()), "engine.log")


def _stamp_path() -> str:
    return os.path.join(str(run_dir()), "engine.spawned")


def running_pid() -> int | None:
    """The engine's pid if one holds the lock; otherwise clean up after a crash."""
    try:
        fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(raw) if raw.isdigit() else -1
        # Nobody holds the lock, so no engine runs: whatever socket or info file is
        # left belongs to a dead one. Safe to remove while we hold the lock, because
        # an engine creates them only after taking it.
        for stale in (socket_path(), info_path()):
            try:
                os.unlink(stale)
            except FileNotFoundError:
                pass
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def spawn(*, force: bool = False) -> bool:
    """Start the engine fully detached, unless one runs or was just started.

    Detached means: its own session (no controlling terminal, not in the hook's
    process group), stdin from /dev/null and stdout/stderr to engine.log, and no
    inherited descriptors. Claude Code waits for the hook's stdout and stderr to
    close, so an engine holding them would block the user's session.
    """
    check_runtime()  # UnsafeFiles: an engine must not start where others could answer
    if running_pid() is not None:
        return False
    stamp = _stamp_path()
    if not force and _recently_spawned(stamp):
        return False
    log = log_path()
    try:
        if os.path.getsize(log) > 1024 * 1024:
            os.replace(log, log + ".1")
    except OSError:
        pass
    env = dict(os.environ)
    env["PYTHONSAFEPATH"] = "1"  # never import a memory_layer/ from the cwd
    env["MEMORY_LAYER_HOME"] = str(user_dir())
    with open(log, "ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "memory_layer.engine"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
            close_fds=True,
            cwd=str(user_dir()),
            env=env,
        )
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(str(child.pid))
    return True


def _recently_spawned(stamp: str) -> bool:
    """An engine started moments ago that is still alive is starting up (it takes the
    lock within ~0.1 s); one that died since is not waited for."""
    try:
        if time.time() - os.stat(stamp).st_mtime >= SPAWN_COOLDOWN_S:
            return False
        with open(stamp, encoding="ascii") as f:
            pid = int(f.read().strip() or 0)
    except (OSError, ValueError):
        return False
    return pid > 0 and _alive(pid)


def wait_until_ready(timeout: float) -> bool:
    """True once the engine answers a ping (used by `engine start` and tests)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        reply = request({"op": "ping"}, 0.5)
        if reply and reply.get("ok"):
            return True
        time.sleep(0.05)
    return False


def status() -> dict[str, Any]:
    pid = running_pid()
    if pid is None:
        return {"running": False, "socket": socket_path()}
    reply = request({"op": "status"}, 2.0) or {}
    info = reply.get("status") if isinstance(reply.get("status"), dict) else {}
    return {"running": True, "pid": pid, "ready": bool(reply.get("ok")), **info}


def _alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True  # no /proc (macOS): kill(0) said it exists


def _ours(pid: int) -> bool:
    """The process runs as this user, or is gone already (its /proc entry's owner; no
    /proc: assume so, as kill() refuses another user's process to anyone but root)."""
    try:
        return os.stat(f"/proc/{pid}").st_uid == os.geteuid()
    except OSError:
        return True  # exited meanwhile (it was asked to stop), or no /proc


def stop(timeout: float = 5.0) -> bool:
    """Ask the engine to exit; SIGTERM, then SIGKILL, if it does not. True if one ran."""
    pid = running_pid()
    if pid is None and _recently_spawned(_stamp_path()):
        # Started moments ago and not yet holding the lock: let it take it, then stop it.
        for _ in range(60):
            time.sleep(0.05)
            pid = running_pid()
            if pid is not None or not _recently_spawned(_stamp_path()):
                break
    if pid is None:
        return False
    try:
        request({"op": "stop"}, 1.0)
    except UnsafeFiles:
        pass  # not talking to that socket; the signals below reach only our own process
    if pid > 0 and not _ours(pid):
        raise UnsafeFiles(
            f"engine.lock names pid {pid}, which is not your process: not signalling it. "
            "Check who writes to the memory-layer directory (`memory-layer doctor`)."
        )
    end = time.monotonic() + timeout
    sent_term = False
    while running_pid() is not None:
        if time.monotonic() > end:
            if pid > 0 and _alive(pid):
                os.kill(pid, signal.SIGKILL)
            break
        if not sent_term and time.monotonic() > end - timeout / 2 and pid > 0 and _alive(pid):
            os.kill(pid, signal.SIGTERM)
            sent_term = True
        time.sleep(0.05)
    # The lock is released just before the process ends; wait for the end itself, so
    # "stopped" means no engine process is left.
    while pid > 0 and _alive(pid):
        if time.monotonic() > end + timeout:
            os.kill(pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    running_pid()  # tidies a socket or info file a killed engine left
    return True
