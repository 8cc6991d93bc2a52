"""Keeping team memory fresh from the hooks without waiting on the network.

Kept apart from ``api.team`` so the hook path pays for one stat, not for importing the
HTTP client.
"""

from __future__ import annotations

import os
import time

from memory_layer.paths import user_dir

LOGIN_FILE = "team.json"


SYNC_INTERVAL_SECONDS = 300
_STAMP = "team-sync.stamp"
_SYNC_LOG = "team-sync.log"


def sync_soon(*, interval: float = SYNC_INTERVAL_SECONDS) -> bool:
    """Start ``memory-layer team sync --quiet`` detached when logged in and the last
    start is older than ``interval``: called at SessionStart (after the answer) and at
    the end of each turn, so team memory stays fresh while a hook never waits on the
    network. One stat when not logged in; one stat more when synced recently."""
    if not (user_dir() / LOGIN_FILE).is_file():
        return False
    stamp = user_dir() / _STAMP
    try:
        if time.time() - stamp.stat().st_mtime < interval:
            return False
    except FileNotFoundError:
        pass
    import subprocess
    import sys

    stamp.touch()
    env = {**os.environ, "MEMORY_LAYER_HOME": str(user_dir()), "PYTHONSAFEPATH": "1"}
    with open(user_dir() / _SYNC_LOG, "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "memory_layer", "team", "sync", "--quiet"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            close_fds=True, cwd=str(user_dir()), env=env,
        )
    return True
