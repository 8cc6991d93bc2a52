"""The warm engine: one background process per user holding the model, vectors and DB.

Protocol: a client connects to the Unix socket, sends one JSON line and reads
one JSON line back. Requests:

* ``{"op": "ping"}`` / ``{"op": "status"}`` / ``{"op": "stop"}``
* ``{"op": "recall" | "remember", "request": {...}}``: a CLI command
  (``memory_layer.requests``), answered with ``{"ok": true, "records": [...]}`` or
  ``{"ok": false, "refused": true, "error": "..."}`` for input the CLI must reject
* ``{"op": "hook", "event": {...}, "deadline": t}``: a hook event
  (``events.Event.to_dict``). SessionStart and UserPromptSubmit are answered
  with ``{"ok": true, "output": "..."}``; capture events are written to the
  journal (``engine.journal``), queued for the worker thread and acknowledged at
  once (``{"ok": true, "queued": true}``), so the hook returns in milliseconds and
  an acknowledged event survives the engine (stop, SIGTERM, kill -9: the next
  engine replays it). Work arriving after the client's deadline is dropped: the
  client has already done it itself.

Two database connections (WAL): one answers queries, one is the worker's
(``engine.worker``, the background half), so a long transcript extraction never
delays a prompt. The worker also backfills
embeddings for memories written keyword-only, in batches it interrupts as soon
as a hook event waits, and finishes sessions that SessionEnd left pending.

The engine exits after ``engine.idle_timeout_s`` without requests, on
``stop``/SIGTERM, when its socket or lock file disappears (its user directory
was removed) and when the database file is replaced (a restored backup), so it
cannot outlive its purpose or serve a stale store. On the way out the worker
drains the queue for at most ``DRAIN_S``; what it has not finished stays in the
journal. When the database file was replaced it stops at once: its connections
write to the old file, so the events are left for the engine of the new one.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import threading
import time
from typing import Any

from memory_layer import __version__
from memory_layer.engine import journal
from memory_layer.engine.client import info_path, socket_path
from memory_layer.engine.lifecycle import lock_path
from memory_layer.engine.worker import (
    DRAIN_S,
    Job,
    Worker,
    file_ident,
    replay_into,
    say,
)

__all__ = ["Engine", "Job", "engine_model_config", "replay_into", "serve"]

MAX_REQUEST_BYTES = 16 * 1024 * 1024
# Requests from `memory-layer` CLI processes (memory_layer.cli.fast).
CLI_OPS = frozenset({"recall", "remember"})


class Engine(Worker):
    """The request half: answers clients on the socket with the query connection and
    the warm model, and hands capture work to the worker half (``engine.worker``)."""

    def __init__(self, config: dict[str, Any], embedder: Any) -> None:
        from memory_layer.api import open_db

        self.config = config
        self.query_conn = open_db()
        super().__init__(embedder, self.current_config)
        self.query_lock = threading.Lock()
        self.model_lock = threading.Lock()
        self.started = time.time()
        self.requests = 0

    # --- settings ------------------------------------------------------------------

    def current_config(self) -> dict[str, Any]:
        from memory_layer.config import load_config
        from memory_layer.errors import ConfigError

        try:
            config = load_config()
        except ConfigError as exc:  # keep serving with the last good config
            say(f"config.yaml is invalid, keeping the previous settings: {exc}")
            return self.config
        if config["engine"] != self.config["engine"]:
            self.publish(config)
        if config["embedding"] != self.config["embedding"]:
            self.switch_model(config)
        self.config = config
        if not config["engine"]["enabled"]:
            self.stopping.set()
        return config

    def switch_model(self, config: dict[str, Any]) -> None:
        """embedding.* changed: load the model config.yaml names now. Recall compares
        only vectors of the active model, so an engine keeping the old one would answer
        keyword-only once `memory-layer index --force` has re-embedded the store."""
        from memory_layer.api import get_embedder

        with self.model_lock:  # one load, however many requests noticed the change
            embedder = get_embedder(engine_model_config(config))
            if embedder is not self.embedder:
                self.embedder = embedder
                # The worker re-embeds, when idle, what the previous model embedded.
                self.needs_backfill = embedder is not None
                say(f"embedding model now {embedder.model_id if embedder else 'keyword-only'}")

    def publish(self, config: dict[str, Any]) -> None:
        """engine.json: what hooks need before they can talk to us (written atomically)."""
        engine = config["engine"]
        data = {
            "pid": os.getpid(),
            "version": __version__,
            "socket": socket_path(),
            "prompt_deadline_ms": engine["prompt_deadline_ms"],
            "deadline_ms": engine["deadline_ms"],
        }
        tmp = f"{info_path()}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, info_path())

    def status(self) -> dict[str, Any]:
        from memory_layer.api import embedder_status, total_memories, unembedded_count

        count = total_memories(self.query_conn)
        missing = unembedded_count(self.query_conn)
        return {
            "pid": os.getpid(),
            "version": __version__,
            "uptime_s": round(time.time() - self.started, 1),
            "idle_s": round(time.monotonic() - self.last_activity, 1),
            "idle_timeout_s": self.config["engine"]["idle_timeout_s"],
            "requests": self.requests,
            "jobs_done": self.jobs_done,
            "queued": self.waiting(),
            "busy": self.busy,
            "backfilled": self.backfilled,
            "memories": count,
            "without_embedding": missing,
            "embedder": embedder_status(self.config).reason
            if self.embedder is None
            else self.embedder.model_id,
            "socket": socket_path(),
            **self.llm_status(),
        }

    def llm_status(self) -> dict[str, Any]:
        from memory_layer.hooks.llm import calls_today

        settings = self.config["hooks"]["llm"]
        calls, cost = calls_today(self.query_conn)
        return {
            "llm_extraction": "on" if settings["enabled"] else "off",
            "llm_calls_today": f"{calls} of {settings['max_calls_per_day']}",
            "llm_cost_today_usd": round(cost, 4),
        }

    # --- requests --------------------------------------------------------------------

    def answer(self, message: dict[str, Any]) -> tuple[dict[str, Any], Job | None]:
        """The reply, and the job to queue once the reply has reached the client."""
        from memory_layer.hooks.events import event_from_dict
        from memory_layer.hooks.handlers import QUERY_EVENTS, prepare

        op = message.get("op")
        if op == "ping":
            return {"ok": True, "pid": os.getpid()}, None
        if op == "status":
            with self.query_lock:
                return {"ok": True, "status": self.status()}, None
        if op == "stop":
            self.stopping.set()
            return {"ok": True, "stopping": True}, None
        if op in CLI_OPS:
            return self.cli_answer(op, message.get("request")), None
        if op != "hook":
            return {"ok": False, "error": f"unknown op {op!r}"}, None
        deadline = float(message.get("deadline") or 0) or time.time() + 60
        event = event_from_dict(message.get("event") or {})
        config = self.current_config()
        if event.name not in QUERY_EVENTS:
            if time.time() > deadline:
                return {"ok": False, "late": True}, None
            return self.acknowledge(event)
        with self.query_lock:
            reply = prepare(event, self.query_conn, config, embedder=self.embedder)
            if time.time() > deadline:
                # The hook has answered by itself (and records its own surfacing).
                return {"ok": False, "late": True}, None
            reply.commit()
        job = Job("deferred", event) if event.name == "SessionStart" else None
        return {"ok": True, "output": reply.output}, job

    def acknowledge(self, event: Any) -> tuple[dict[str, Any], Job | None]:
        """Journal a capture event, then promise it: an event the journal cannot take
        (disk full) is refused, and the hook handles it itself."""
        from memory_layer.models import utcnow

        if self.stopping.is_set():
            return {"ok": False, "error": "the engine is stopping"}, None
        data, received = event.to_dict(), utcnow()
        try:
            path = journal.append(data, received)
        except OSError as exc:
            say(f"cannot journal {event.name}, refusing it: {exc}")
            return {"ok": False, "error": f"the engine cannot journal the event ({exc})"}, None
        return {"ok": True, "queued": True}, Job("hook", event, journal.Entry(path, data, received))

    def cli_answer(self, op: str, wire: Any) -> dict[str, Any]:
        """`memory-layer recall` / `remember` for a CLI process, with the warm model: the
        same use case the CLI would run itself (``api.recall_records`` /
        ``api.remember_record``). A refusal (bad input, a locked or damaged store) is
        the CLI's message to print; anything else lets the CLI answer by itself."""
        import sqlite3

        from memory_layer import api
        from memory_layer.api import explain_error, store_trouble
        from memory_layer.errors import MemoryLayerError
        from memory_layer.paths import db_path
        from memory_layer.requests import RecallRequest, RememberRequest

        config = self.current_config()
        try:
            with self.query_lock:
                if op == "recall":
                    recall = RecallRequest.from_wire(wire)
                    records = api.recall_records(
                        self.query_conn, recall, config=config, embedder=self.embedder
                    )
                    wanted_model = not recall.keyword_only
                else:
                    remember = RememberRequest.from_wire(wire)
                    records = [
                        api.remember_record(
                            self.query_conn, remember, config=config, embedder=self.embedder
                        )
                    ]
                    wanted_model = True
        except MemoryLayerError as exc:
            return {"ok": False, "refused": True, "error": str(exc)}
        except sqlite3.DatabaseError as exc:
            if not store_trouble(exc):
                raise
            return {"ok": False, "refused": True, "error": str(explain_error(exc, db_path()))}
        notices = []
        if wanted_model and self.embedder is None and config["embedding"]["enabled"]:
            from memory_layer.api import embedder_status

            notices.append(
                "Keyword-only: the embedding model did not load "
                f"({embedder_status(config).reason}). `memory-layer doctor` says more."
            )
        return {
            "ok": True,
            "records": records,
            "notices": notices,
            "common_share": float(config["retrieval"]["vector_common_share"]),
        }

    def serve_connection(self, conn: socket.socket) -> None:
        job: Job | None = None
        try:
            conn.settimeout(5.0)
            buf = bytearray()
            while not buf.endswith(b"\n") and len(buf) < MAX_REQUEST_BYTES:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                buf += chunk
            self.last_activity = time.monotonic()
            self.requests += 1
            try:
                message = json.loads(buf.decode("utf-8", "replace"))
                if not isinstance(message, dict):
                    raise ValueError("request is not a JSON object")
                reply, job = self.answer(message)
            except Exception as exc:  # a bad request gets an error reply, never a crash
                say(f"request failed: {type(exc).__name__}: {exc}")
                reply, job = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, None
            conn.sendall(json.dumps(reply, ensure_ascii=False).encode("utf-8") + b"\n")
            # Queued only now: the worker would otherwise compete with this thread for
            # the interpreter while the hook waits, and a client that has gone (send
            # failed) is doing the work itself.
            if job is not None:
                self.jobs.put(job)
                job = None
        except OSError:
            pass  # the client gave up (deadline); nothing to tell it
        finally:
            conn.close()
            if job is not None and job.entry is not None:
                journal.done(job.entry)  # never acknowledged: the hook does it itself


def engine_model_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config the engine loads its model with: ``engine.embed_threads`` ONNX threads."""
    threads = int(config["engine"]["embed_threads"])
    if threads <= 0:
        return config
    return {**config, "embedding": {**config["embedding"], "threads": threads}}


def _same_file(path: str, ident: tuple[int, int] | None) -> bool:
    return ident is not None and file_ident(path) == ident


def _bind(path: str) -> tuple[socket.socket, tuple[int, int]]:
    """Listen on ``path``: bound beside it, then renamed, so a client never connects to a
    half-set-up socket. Returns the socket and the file's identity."""
    for stale in (path, f"{path}.{os.getpid()}"):
        try:
            os.unlink(stale)  # left by a crashed engine: we hold the lock now
        except FileNotFoundError:
            pass
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(f"{path}.{os.getpid()}")
    os.chmod(f"{path}.{os.getpid()}", 0o600)
    server.listen(64)
    os.replace(f"{path}.{os.getpid()}", path)
    st = os.stat(path)
    return server, (st.st_dev, st.st_ino)


def _foreign(conn: socket.socket) -> bool:
    """A client running as another user is dropped unanswered (its request unread)."""
    from memory_layer.engine.guard import UnsafeFiles, peer_uid

    try:
        uid = peer_uid(conn)
    except (OSError, UnsafeFiles):
        uid = -1
    if uid is None or uid == os.geteuid():
        return False
    say(f"refused a connection from uid {uid} (the engine serves uid {os.geteuid()} only)")
    conn.close()
    return True


def _warm_engine() -> Engine:
    """Load the config, the model and the vector matrix: what makes the engine warm."""
    from memory_layer.api import get_embedder, vector_index
    from memory_layer.config import load_config

    config = load_config()
    began = time.monotonic()
    embedder = get_embedder(engine_model_config(config))
    engine = Engine(config, embedder)
    engine.replay_journal()  # acknowledged before, by an engine that did not finish them
    engine.jobs.put(Job("pending"))  # sessions that ended while no engine ran
    if embedder is not None:
        # Load the vector matrix now, not on the first prompt.
        vector_index(engine.query_conn, embedder.model_id)
    say(
        f"ready in {time.monotonic() - began:.2f}s "
        f"({'model ' + embedder.model_id if embedder else 'keyword-only'})"
    )
    return engine


def _accept_until_done(
    engine: Engine,
    server: socket.socket,
    path: str,
    idents: dict[str, tuple[int, int]],
) -> None:
    """Serve connections until stopped, idle or orphaned (socket, lock or database file
    replaced): the engine must not outlive its purpose or serve a stale store."""
    from memory_layer.paths import db_path

    server.settimeout(0.5)
    while not engine.stopping.is_set():
        try:
            conn, _ = server.accept()
        except TimeoutError:
            conn = None
        if conn is not None:
            if _foreign(conn):
                continue
            threading.Thread(target=engine.serve_connection, args=(conn,), daemon=True).start()
            continue
        idle = time.monotonic() - engine.last_activity
        timeout = float(engine.config["engine"]["idle_timeout_s"])
        if idle > timeout and not engine.waiting() and not engine.busy:
            say(f"idle for {idle:.0f}s; exiting")
            return
        if not _same_file(path, idents["socket"]) or not _same_file(lock_path(), idents["lock"]):
            say("socket or lock file removed; exiting")
            return
        if not _same_file(str(db_path()), idents["db"]):
            # Restored from a backup or moved: our connections hold the old file.
            # The next hook starts a fresh engine on the new one.
            say("the database file was replaced; exiting")
            return


def serve() -> int:
    """Run the engine until idle, stopped or orphaned. Exit 0 if another one runs."""
    from memory_layer.engine.client import check_runtime
    from memory_layer.engine.guard import UnsafeFiles

    os.umask(0o077)
    try:
        check_runtime()
    except UnsafeFiles as exc:
        say(f"not starting: {exc}")
        return 1
    lock_fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock_fd)
        return 0  # single instance: the running engine serves everyone
    os.ftruncate(lock_fd, 0)
    os.pwrite(lock_fd, str(os.getpid()).encode(), 0)
    idents = {"lock": (os.fstat(lock_fd).st_dev, os.fstat(lock_fd).st_ino)}
    path = socket_path()
    server: socket.socket | None = None
    try:
        engine = _warm_engine()
        server, idents["socket"] = _bind(path)
        idents["db"] = engine.store_ident
        engine.publish(engine.config)
        signal.signal(signal.SIGTERM, lambda *_: engine.stopping.set())
        signal.signal(signal.SIGINT, lambda *_: engine.stopping.set())
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        worker = threading.Thread(target=engine.work, name="engine-worker", daemon=True)
        worker.start()
        _accept_until_done(engine, server, path, idents)
        # Bounded: the worker finishes what it can in DRAIN_S and the journal keeps
        # the rest (a job cut short is rolled back by SQLite and replayed whole).
        engine.drain_until = time.monotonic() + DRAIN_S
        engine.stopping.set()
        worker.join(timeout=DRAIN_S + 0.5)
        left = engine.waiting() + (1 if engine.busy else 0)
        if left:
            say(f"{left} acknowledged events left in the journal for the next engine")
        return 0
    finally:
        if server is not None:
            server.close()
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) == idents.get("socket"):
                os.unlink(path)
        except OSError:
            pass
        try:
            os.unlink(info_path())
        except OSError:
            pass
        os.close(lock_fd)  # releases the lock last: nobody sees a lock-free engine early
        say("stopped")
