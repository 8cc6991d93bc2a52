"""Tell the session's Bash commands which Claude Code session they run in.

Claude Code gives SessionStart hooks ``CLAUDE_ENV_FILE``: lines written there are
sourced before every Bash command of the session. Exporting the session id there is
how `memory-layer recall`, run by the agent (the skill, ``/recall``), learns its
session, so what it finds is recorded as surfaced in that session and a task that
applies it is credited. Standard library only: this runs on the hook's fast path.
"""

from __future__ import annotations

import os
import re

from memory_layer.paths import SESSION_ENV

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

ENV_FILE = "CLAUDE_ENV_FILE"
# Claude Code's session ids are UUIDs; anything else is not written into a file the
# shell sources.
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def export_session(session_id: str, env: Mapping[str, str]) -> bool:
    """Append ``export MEMORY_LAYER_SESSION_ID=…`` to the session's env file, once.
    Returns whether the file now names this session. Never raises."""
    path = env.get(ENV_FILE, "")
    if not path or not _SAFE_ID.fullmatch(session_id or ""):
        return False
    line = f"export {SESSION_ENV}={session_id}\n"
    try:
        try:
            # Other hooks share the file and may write other encodings: read leniently.
            with open(path, encoding="utf-8", errors="replace") as f:
                if line in f.read():
                    return True  # resume, /clear: the session id did not change
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(line)
        return True
    except (OSError, ValueError):
        return False
