"""The hooks' error log: ``logs/hooks.log`` under the user directory, size-capped.

Hooks must never write errors to stdout (it is the agent's context) and should
not rely on stderr (the launcher appends it to the same file, but Claude Code
may show it). Logging itself never raises.
"""

from __future__ import annotations

import os
import time

MAX_BYTES = 1024 * 1024  # then hooks.log moves to hooks.log.1 (one generation kept)


def log_path() -> str:
    from memory_layer.paths import logs_dir

    return os.path.join(str(logs_dir()), "hooks.log")


def log(message: str, *, exc: BaseException | None = None) -> None:
    """Append one line (plus a traceback when ``exc`` is given) to hooks.log."""
    try:
        path = log_path()
        try:
            if os.path.getsize(path) > MAX_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        lines = [f"{stamp} hook[{os.getpid()}] {message}"]
        if exc is not None:
            import traceback  # only when something went wrong

            tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            lines.append(tb[-4000:].rstrip())
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, ("\n".join(lines) + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # a broken log must not break the hook
        pass
