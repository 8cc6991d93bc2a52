"""Every path memory-layer uses derives from one user directory."""

from __future__ import annotations

import os
from pathlib import Path

# Which Claude Code session a `memory-layer` command runs in: the SessionStart hook
# writes it into CLAUDE_ENV_FILE, so every Bash command of that session (the skill,
# `/recall`) carries it (docs/hooks.md). Here because both the hook's fast path and
# the CLI read it, and this module is the cheapest they share.
SESSION_ENV = "MEMORY_LAYER_SESSION_ID"


def user_dir() -> Path:
    """Return ``$MEMORY_LAYER_HOME``, else ``~/.memory-layer``, creating it (mode 0700)."""
    env = os.environ.get("MEMORY_LAYER_HOME")
    path = Path(env).expanduser() if env else Path.home() / ".memory-layer"
    if not path.exists():
        # 0700: the store holds everything the user's agents have learned.
        path.mkdir(parents=True, mode=0o700, exist_ok=True)
    return path


def db_path() -> Path:
    return user_dir() / "memories.db"


def config_path() -> Path:
    return user_dir() / "config.yaml"


def logs_dir() -> Path:
    path = user_dir() / "logs"
    path.mkdir(exist_ok=True)
    return path


def run_dir() -> Path:
    """Sockets, pid files and locks for the warm engine."""
    path = user_dir() / "run"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def models_dir() -> Path:
    path = user_dir() / "models"
    path.mkdir(exist_ok=True)
    return path
