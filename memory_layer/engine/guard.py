"""Only this user stands behind the engine's files and socket.

Another local user who could create the socket first, or bind it after a reboot,
would receive every prompt and answer it with their own context. So:

* the socket lives in ``run/`` (0700, ours), or, when that path is too long for a
  Unix socket, in a private directory of ours: ``$XDG_RUNTIME_DIR/memory-layer``
  (systemd makes that directory per user, 0700) or ``$TMPDIR/memory-layer-<uid>``
  (created 0700, and checked, never trusted, when it already exists);
* ``run/``, that directory, the socket and ``engine.json`` must be ours (owner uid)
  and writable by nobody else, and not symbolic links;
* each side checks the other's uid on connect (``SO_PEERCRED`` on Linux): the
  client talks only to an engine of its own user, the engine serves only its user.

A refusal is an ``UnsafeFiles`` error naming the file, its owner or mode, and the
fix. Standard library only: the hooks' fast path runs this.
"""

from __future__ import annotations

import os
import stat
import sys

from memory_layer.errors import MemoryLayerError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket


class UnsafeFiles(MemoryLayerError):
    """A file or directory of the engine belongs to another user, or others may write it."""


def _me() -> int:
    return os.geteuid()


def _owner_problem(path: str, info: os.stat_result, what: str) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        return f"{what} {path} is a symbolic link"
    if info.st_uid != _me():
        return f"{what} {path} belongs to uid {info.st_uid}, not to you (uid {_me()})"
    return None


def check_private_dir(path: str, what: str = "The directory") -> None:
    """``path`` is a real directory of ours that no one else may enter or write."""
    info = os.lstat(path)
    problem = _owner_problem(path, info, what)
    if problem is None and not stat.S_ISDIR(info.st_mode):
        problem = f"{what} {path} is not a directory"
    if problem:
        raise UnsafeFiles(
            f"{problem}: another user could answer your hooks and read your prompts. "
            "memory-layer will not use it; remove it (it may need root) or set "
            "MEMORY_LAYER_HOME to a directory of your own."
        )
    if info.st_mode & 0o077:
        raise UnsafeFiles(
            f"{what} {path} has mode {oct(info.st_mode & 0o777)}: other users can reach it. "
            f"Run `chmod 700 {path}`."
        )


def check_own_file(path: str, what: str) -> None:
    """``path`` (the socket, engine.json) is ours and no one else may write it.
    A missing file raises FileNotFoundError: the caller knows what that means."""
    info = os.lstat(path)
    problem = _owner_problem(path, info, what)
    if problem:
        raise UnsafeFiles(
            f"{problem}: memory-layer will not talk to it. Stop whoever made it, then "
            f"remove it (`rm {path}`, which may need root)."
        )
    if info.st_mode & 0o022:
        raise UnsafeFiles(
            f"{what} {path} has mode {oct(info.st_mode & 0o777)}: other users can change it. "
            f"Remove it (`rm {path}`); the engine makes a new one when it starts."
        )


def is_own_file(path: str) -> bool:
    """``check_own_file`` as a yes/no for a cache that is simply ignored when foreign."""
    try:
        check_own_file(path, "The file")
    except (OSError, UnsafeFiles):
        return False
    return True


def private_dir(path: str, what: str) -> str:
    """Create ``path`` (0700) unless it exists, then check it: a directory someone else
    made first is refused, never adopted."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    check_private_dir(path, what)
    return path


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a connected Unix socket; None where
    the platform has no SO_PEERCRED (there the private directory is the guard)."""
    import socket as socket_module

    option = getattr(socket_module, "SO_PEERCRED", None)
    if option is None or not sys.platform.startswith("linux"):
        return None
    import struct

    creds = sock.getsockopt(socket_module.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def check_peer(sock: socket.socket, who: str) -> None:
    """Refuse a connection whose other end runs as another user."""
    uid = peer_uid(sock)
    if uid is not None and uid != _me():
        raise UnsafeFiles(
            f"The {who} on the engine's socket runs as uid {uid}, not as you (uid {_me()}): "
            "refused. Another user may be trying to intercept memory-layer; stop it, then "
            "`memory-layer engine stop` and start again."
        )


def home_problems(home: str, run: str) -> list[str]:
    """What `doctor` flags: a home others may write (they could swap run/ or the
    database), and a run/ that is not ours alone."""
    problems: list[str] = []
    info = os.stat(home)
    if info.st_uid != _me():
        problems.append(f"{home} belongs to uid {info.st_uid}, not to you (uid {_me()})")
    if info.st_mode & 0o022:
        problems.append(
            f"{home} has mode {oct(info.st_mode & 0o777)}: other users can replace its "
            f"files (run `chmod 700 {home}`)"
        )
    try:
        check_private_dir(run, "The engine's directory")
    except FileNotFoundError:
        pass
    except UnsafeFiles as exc:
        problems.append(str(exc).removeprefix("The engine's directory "))
    return problems
