"""The hook door: stdin → event → engine or in-process handler → stdout, always exit 0.

The fast path imports only the standard library plus ``events``, ``where`` and
the engine client: parse stdin, check the opt-out files, hand the event to the
warm engine. Only when the engine is absent, slow or refuses does the hook load
config, open the database and handle the event itself, keyword-only, and then
start the engine for the hooks that follow.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from memory_layer import __version__
from memory_layer.hooks.events import Event, InvalidEvent, parse_event
from memory_layer.hooks.log import log

# typing costs a few ms to import and the hook's fast path needs it only for type
# checkers (annotations are strings here), so it is imported for them alone.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TextIO

# Claude Code's payloads are small; a bigger stdin is not an event worth parsing.
MAX_STDIN_BYTES = 64 * 1024 * 1024
DEFAULT_PROMPT_DEADLINE_MS = 150
DEFAULT_DEADLINE_MS = 300
QUERY_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
HOOK_BUSY_TIMEOUT_MS = 1000
# What SQLite says when the store is readable but cannot take a write right now.
_UNWRITABLE_WORDS = ("disk is full", "is full", "readonly", "disk I/O")


def _via_engine(event: Event) -> str | None:
    """The engine's answer, or None when the hook must answer by itself (also when the
    engine's files or the process on its socket are another user's: logged why)."""
    from memory_layer.engine.guard import UnsafeFiles

    try:
        return _ask_engine(event)
    except UnsafeFiles as exc:
        log(f"{event.name}: not using the engine: {exc}")
        return None


def _ask_engine(event: Event) -> str | None:
    from memory_layer.engine.client import client_settings, request

    settings = client_settings()
    if settings is None:  # no engine is ready (it publishes this file when it is)
        return None
    engine_version = settings.get("version")
    if engine_version != __version__:
        # An engine started by another install (the plugin was updated while it ran)
        # would answer with that install's code: this hook answers by itself. An older
        # engine is asked to stop so the next hook starts one of this version; a newer
        # one is left alone, so two installs in use never keep stopping each other.
        newer = _version_key(engine_version) > _version_key(__version__)
        log(
            f"{event.name}: the engine runs memory-layer {engine_version!r}, this hook "
            f"{__version__!r}: answering in-process"
            + ("" if newer else "; asked the engine to stop")
        )
        if not newer:
            request({"op": "stop"}, 0.2)
        return None
    key = "prompt_deadline_ms" if event.name in QUERY_EVENTS else "deadline_ms"
    default = DEFAULT_PROMPT_DEADLINE_MS if event.name in QUERY_EVENTS else DEFAULT_DEADLINE_MS
    try:
        timeout = float(settings.get(key, default)) / 1000.0
    except (TypeError, ValueError):
        timeout = default / 1000.0
    reply = request({"op": "hook", "event": event.to_dict()}, timeout)
    if not reply or not reply.get("ok"):
        if reply and reply.get("error"):
            log(f"{event.name}: engine error: {reply['error']}")
        return None
    output = reply.get("output", "")
    return output if isinstance(output, str) else ""


def _version_key(version: object) -> tuple[int, ...]:
    """"0.10.2" → (0, 10, 2); anything unreadable (an engine from before versions were
    published) sorts first, as the oldest."""
    parts = []
    for part in str(version or "").split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _in_process(event: Event) -> str:
    from memory_layer.api import open_db, set_busy_timeout
    from memory_layer.config import load_config
    from memory_layer.hooks.handlers import handle

    config = load_config()
    # Claude Code waits for this process: read less of a long transcript per run here
    # than the engine does in the background (the rest is read by the next event).
    hooks = config["hooks"]
    limit = min(int(hooks["transcript_max_bytes"]), int(hooks["in_process_transcript_max_bytes"]))
    config = {**config, "hooks": {**hooks, "transcript_max_bytes": limit}}
    conn = open_db()
    # Reads never wait in WAL mode; a write does while another holds the lock. A hook
    # would rather skip its bookkeeping than make the user wait (SessionEnd: 1.5 s).
    set_busy_timeout(conn, HOOK_BUSY_TIMEOUT_MS)
    try:
        if event.name in QUERY_EVENTS:
            output = handle(event, conn, config, embedder=None)
        else:
            output = ""
            _capture(event, conn, config)
        engine_on = bool(config["engine"]["enabled"])
        if event.name == "SessionStart" and not engine_on:
            # No engine to do SessionStart's slow part after the answer: do it now.
            from memory_layer.hooks.handlers import deferred

            try:
                deferred(event, conn, config)
            except Exception as exc:
                log("SessionStart: deferred work failed", exc=exc)
    finally:
        conn.close()
    # The engine needs POSIX (flock, Unix sockets); elsewhere every hook works in-process.
    if engine_on and event.name != "SessionEnd" and os.name == "posix":
        # SessionEnd has 1.5 s shared by every hook: the next session starts the engine.
        from memory_layer.engine.guard import UnsafeFiles

        try:
            from memory_layer.engine.lifecycle import spawn

            spawn()
        except UnsafeFiles as exc:  # says what and how to fix: no traceback needed
            log(f"{event.name}: not starting the engine: {exc}")
        except Exception as exc:
            log(f"{event.name}: could not start the engine", exc=exc)
    return output


def _capture(event: Event, conn: Any, config: dict[str, Any]) -> None:
    """Handle a capture event here; when the store cannot take it now (another
    writer's lock outlasting the hook's wait, a full disk), keep it in the engine's
    journal instead of losing it: the engine writes it when it can."""
    from memory_layer.api import is_locked
    from memory_layer.errors import DatabaseError
    from memory_layer.hooks.handlers import handle_captured
    from memory_layer.models import utcnow

    now = utcnow()
    try:
        handle_captured(event, conn, config, embedder=None, now=now)
    except Exception as exc:
        import sqlite3

        if not isinstance(exc, DatabaseError | sqlite3.OperationalError) or not (
            is_locked(exc) or any(word in str(exc) for word in _UNWRITABLE_WORDS)
        ):
            raise
        from memory_layer.engine import journal

        try:
            journal.append(event.to_dict(), now)
        except OSError as err:
            log(f"{event.name}: not captured: the store cannot take it ({exc}), nor the "
                f"journal ({err})")
            return
        log(f"{event.name}: the store cannot take it now ({exc}); kept in the journal, "
            "the engine writes it")


def dispatch(name: str, raw: bytes, env: Mapping[str, str] | None = None) -> str:
    """What the hook for event ``name`` prints for stdin ``raw``; never raises."""
    if (env if env is not None else os.environ).get("MEMORY_LAYER_HOOKS") == "off":
        return ""  # the `claude` our LLM extraction runs: stay out of its session
    try:
        event = parse_event(name, raw, env)
    except InvalidEvent as exc:
        log(f"{name or '(no event name)'}: ignored: {exc}")
        return ""
    try:
        from memory_layer.hooks.where import ignore_file

        if ignore_file([event.directory, event.project_dir]):
            return ""  # opted out: no capture, no injection, no engine
        if event.name == "SessionStart":
            # Without CLAUDE_ENV_FILE (an older Claude Code) `recall --session` still works.
            from memory_layer.hooks.session_env import export_session

            export_session(event.session_id, env if env is not None else os.environ)
        output = _via_engine(event)
        if output is None:
            output = _in_process(event)
        return output
    except Exception as exc:
        log(f"{name}: failed (fail-open, nothing injected or captured)", exc=exc)
        return _memory_off_notice(event, exc)


def _memory_off_notice(event: Event, exc: Exception) -> str:
    """When the store itself is the trouble (corrupt, unreadable, not a database),
    SessionStart says so, once per session and briefly: to the user, with how to fix
    it, and to the agent, so it does not count on memories. Every other hook stays
    silent (fail-open)."""
    import sqlite3

    from memory_layer.errors import DatabaseError

    store_error = isinstance(exc, DatabaseError) or (
        isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError)
    )
    # A compaction is the same session, already told; a lock is not "memory is off".
    if not store_error or event.name != "SessionStart" or getattr(event, "source", "") == "compact":
        return ""
    if "locked" in str(exc):
        return ""
    import json

    from memory_layer.paths import db_path

    reason = str(exc).split(". ", 1)[0][:300]
    message = (
        f"memory-layer: memory is off for this session: {reason}. "
        "Run `memory-layer doctor` to see why; `memory-layer backup restore FILE` "
        "puts back a backup (kept in the backups/ folder beside the store)."
    )
    return json.dumps(
        {
            "systemMessage": message,
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": (
                    f"memory-layer is off for this session: its store ({db_path()}) cannot "
                    "be read, so no memories are injected or captured."
                ),
            },
        },
        ensure_ascii=False,
    )


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO, env: Mapping[str, Any]) -> int:
    name = argv[0] if argv else ""
    try:
        raw = stdin.read(MAX_STDIN_BYTES)
    except Exception as exc:
        log(f"{name}: cannot read stdin", exc=exc)
        return 0
    output = dispatch(name, raw, env)
    if output:
        try:
            stdout.write(output + "\n")
            stdout.flush()
        except Exception as exc:  # Claude Code went away: nothing left to tell it
            log(f"{name}: cannot write the output", exc=exc)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m memory_layer.hooks <EventName>``: exits 0 always."""
    try:
        return run(
            list(sys.argv[1:] if argv is None else argv), sys.stdin.buffer, sys.stdout, os.environ
        )
    except BaseException as exc:  # even KeyboardInterrupt: a hook must not fail the session
        log("hook crashed", exc=exc)
        return 0
