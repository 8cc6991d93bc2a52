"""Talking to the warm engine: one JSON line out, one JSON line back, with a deadline.

Standard library only (``socket`` + ``json``): this runs in every hook process,
where importing numpy, fastembed, sqlite-utils or click would cost more than the
whole answer. Any failure (no socket, refused, slow, garbled) returns None and
the caller answers by itself; files or a peer of another user raise ``UnsafeFiles``
(``guard``), which the caller logs before it answers by itself.
"""

from __future__ import annotations

import json
import os
import time

from memory_layer.engine.guard import (
    UnsafeFiles,
    check_own_file,
    check_peer,
    check_private_dir,
    private_dir,
)
from memory_layer.paths import run_dir

# typing costs a few ms to import and the hook's fast path needs it only for type
# checkers (annotations are strings here), so it is imported for them alone.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# AF_UNIX paths are limited to 108 bytes on Linux (104 on macOS).
_MAX_SOCKET_PATH = 100
MAX_REPLY_BYTES = 4 * 1024 * 1024


def socket_path() -> str:
    """``run/engine.sock``, or, when that is too long for a Unix socket, a short name in a
    private directory of ours (``guard``): never a guessable name in a shared one."""
    run = str(run_dir())
    path = os.path.join(run, "engine.sock")
    if len(path.encode()) <= _MAX_SOCKET_PATH:
        return path
    import hashlib  # rarely needed: keep it off the hook's import path

    digest = hashlib.sha1(run.encode()).hexdigest()[:16]
    return os.path.join(short_socket_dir(), f"{digest}.sock")


def short_socket_dir() -> str:
    """``$XDG_RUNTIME_DIR/memory-layer`` when that runtime directory is ours and private,
    else ``$TMPDIR/memory-layer-<uid>`` (``/tmp`` by default); created 0700, and refused
    (``UnsafeFiles``) when someone else made it first."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        try:
            check_private_dir(runtime)
            return private_dir(os.path.join(runtime, "memory-layer"), "The socket directory")
        except (OSError, UnsafeFiles):
            pass  # not usable: fall back to the temp dir, checked the same way
    base = os.environ.get("TMPDIR") or "/tmp"
    return private_dir(os.path.join(base, f"memory-layer-{os.getuid()}"), "The socket directory")


def check_runtime() -> None:
    """run/ (and the socket's directory) are ours and private, or ``UnsafeFiles``."""
    check_private_dir(str(run_dir()), "The engine's directory")
    socket_path()  # creates and checks the short socket directory when one is used


def info_path() -> str:
    """engine.json: written by a ready engine, removed when it stops."""
    return os.path.join(str(run_dir()), "engine.json")


def client_settings() -> dict[str, Any] | None:
    """Deadlines published by the running engine; None when no engine is ready.
    ``UnsafeFiles`` when run/ or engine.json is not ours alone: nothing in it is used."""
    check_private_dir(str(run_dir()), "The engine's directory")
    path = info_path()
    try:
        check_own_file(path, "The engine's info file")
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def request(message: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """Send ``message``; the reply, or None if the engine is absent or misses the deadline."""
    return exchange(message, timeout)[1]


def exchange(message: dict[str, Any], timeout: float) -> tuple[bool, dict[str, Any] | None]:
    """Like ``request``, and whether the message reached the engine at all: a write the
    engine received but did not answer may have happened, so its sender must not simply
    do it again. Raises ``UnsafeFiles`` (nothing sent) when the socket, or the process
    behind it, is another user's."""
    import socket  # only when an engine is ready: the hook's fallback never needs it

    sent = False
    deadline = time.monotonic() + max(timeout, 0.001)
    path = socket_path()
    try:
        check_own_file(path, "The engine's socket")
    except OSError:
        return sent, None  # no socket: no engine
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(max(timeout, 0.001))
        sock.connect(path)
        # Before a byte of the request (a prompt) leaves: is that our own engine?
        check_peer(sock, "process listening")
        payload = dict(message)
        # The engine drops work for a client that has given up (wall clock: shared).
        payload["deadline"] = time.time() + max(deadline - time.monotonic(), 0.0)
        sock.sendall(json.dumps(payload, ensure_ascii=False).encode("utf-8") + b"\n")
        sent = True
        chunks: list[bytes] = []
        size = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return sent, None
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if chunk.endswith(b"\n") or size > MAX_REPLY_BYTES:
                break
        reply = json.loads(b"".join(chunks).decode("utf-8"))
        return sent, reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return sent, None
    finally:
        sock.close()
