"""The engine's journal: capture events it has acknowledged and not yet handled.

A capture hook (PostToolUse, Stop, PreCompact, SessionEnd...) is answered "queued"
at once so Claude Code never waits for extraction. That answer is a promise: the
event is written here first, one small file per event, and the file is removed
only once the event's writes are in the store. An engine that is stopped, sent
SIGTERM, killed with SIGKILL, replaced by a newer version or orphaned by a restored
database leaves the unfinished files behind, and the next engine replays them, in
the order they were acknowledged and with the time they were acknowledged, before
it takes new work.

A file is written beside its final name and renamed into place, so a reader never
sees half an event. There is no fsync: the promise is kept across a process dying
however it dies (the page cache survives it), like the store itself, which runs
with ``synchronous = NORMAL``; a power cut may lose the last moments of both.

Standard library only: the engine imports this before it loads anything heavy.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memory_layer.paths import user_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
SUFFIX = ".json"
# An entry that cannot be read back (written by a future version, damaged by hand), or
# whose handling failed for a reason other than the store (a bug), is kept under this
# suffix for a person to look at (`memory-layer doctor` counts them), never retried.
FAILED_SUFFIX = ".failed"
# Writing an entry takes milliseconds; a partial this old is a crash's leftover even if
# its pid now belongs to another process.
PARTIAL_STALE_S = 60.0
_sequence = itertools.count()


@dataclass(frozen=True)
class Entry:
    """One acknowledged event: its file, the event as sent, and when it was acknowledged."""

    path: Path
    event: dict[str, Any]
    received: datetime


def journal_dir() -> Path:
    """``journal/`` in the user directory (0700: events carry prompts and tool output)."""
    path = user_dir() / "journal"
    path.mkdir(mode=0o700, exist_ok=True)
    return path


def append(event: dict[str, Any], received: datetime) -> Path:
    """Write ``event`` durably before it is acknowledged; raises OSError (disk full,
    read-only directory) so the caller answers "not queued" instead of promising."""
    folder = journal_dir()
    # Names sort in acknowledgement order: nanoseconds, then pid and a counter for ties.
    name = f"{time.time_ns():020d}-{os.getpid()}-{next(_sequence):06d}{SUFFIX}"
    body = json.dumps(
        {"format": FORMAT, "received": received.isoformat(), "event": event},
        ensure_ascii=False,
    ).encode("utf-8")
    partial = folder / f".{name}.partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        partial.unlink(missing_ok=True)
        raise
    os.close(fd)
    final = folder / name
    os.rename(partial, final)
    return final


def done(entry: Entry | Path) -> None:
    """The event's writes are in the store: forget it."""
    path = entry.path if isinstance(entry, Entry) else entry
    path.unlink(missing_ok=True)


def set_aside(entry: Entry | Path) -> None:
    """Keep an entry that must not be retried as ``*.failed``."""
    path = entry.path if isinstance(entry, Entry) else entry
    try:
        path.rename(path.with_name(path.name + FAILED_SUFFIX))
    except FileNotFoundError:
        pass


def failed() -> list[Path]:
    return sorted(p for p in journal_dir().iterdir() if p.name.endswith(FAILED_SUFFIX))


def pending() -> list[Path]:
    """Acknowledged events not yet handled, oldest first."""
    folder = journal_dir()
    return sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIX) and p.name[0] != ".")


def count() -> int:
    return len(pending())


def load(path: Path) -> Entry | None:
    """Read an entry back; None (and the file set aside) when it cannot be."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"unknown journal format {data.get('format')!r}")
        event = data["event"]
        if not isinstance(event, dict):
            raise ValueError("the event is not an object")
        received = datetime.fromisoformat(str(data["received"]))
    except FileNotFoundError:
        return None  # handled meanwhile
    except (OSError, ValueError, KeyError) as exc:
        set_aside(path)
        raise UnreadableEntry(f"{path.name}: {exc}") from None
    if received.tzinfo is None:
        received = received.replace(tzinfo=UTC)
    return Entry(path, event, received)


def clear_partials(now: float | None = None) -> int:
    """Remove half-written entries left by a crash while writing (never acknowledged).

    A hook may be writing one at this very moment (it journals when the store is locked),
    so only a partial whose writer is gone, or one older than ``PARTIAL_STALE_S`` (a pid
    can be reused), is removed."""
    removed = 0
    now = time.time() if now is None else now
    for path in journal_dir().iterdir():
        if not (path.name.startswith(".") and path.name.endswith(".partial")):
            continue
        try:
            age = now - path.stat().st_mtime
        except FileNotFoundError:
            continue  # renamed into place meanwhile
        if age < PARTIAL_STALE_S and _writer_alive(path.name):
            continue
        path.unlink(missing_ok=True)
        removed += 1
    return removed


def _writer_alive(name: str) -> bool:
    """Whether the process named in ``.<ns>-<pid>-<n>.json.partial`` still runs."""
    try:
        pid = int(name[1:].split("-")[1])
    except (IndexError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone's process (not ours: the journal is 0700), but alive
    return True


class UnreadableEntry(ValueError):
    """A journal entry could not be read back; it was kept as ``*.failed``."""
