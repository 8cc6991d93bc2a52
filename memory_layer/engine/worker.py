"""The warm engine's background half: the worker thread, its queue and the journal replay.

Separate from ``engine.server`` because none of it answers a client. A request
(``server.Engine``) only journals a capture event and puts a ``Job`` here; the worker
writes it to the store on its own database connection, so a long transcript
extraction never delays a prompt. It retries what the store could not take (locked,
full), adopts what hooks journaled themselves, finishes sessions SessionEnd left
pending and backfills embeddings whenever it is idle. ``replay_into`` is the same
journal-to-store path for `backup restore`, run in the calling process with no
engine at all.
"""

from __future__ import annotations

import collections
import os
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from memory_layer.engine import journal

WORKER_NICE = 10
# How long a stopping engine goes on with queued work. Below lifecycle.stop's 5 s, so
# `engine stop` never has to kill it; what is left waits in the journal.
DRAIN_S = 2.0
# A journaled event the store could not take (locked by another writer, disk full) is
# tried again after a pause that doubles up to the maximum, before any later event.
RETRY_PAUSE_S = 1.0
MAX_RETRY_PAUSE_S = 30.0
# How often an idle worker looks for events hooks journaled themselves (when they had to
# answer without the engine and the store could not take the event).
JOURNAL_SCAN_S = 1.0


@dataclass(frozen=True)
class Job:
    """Work for the worker: a capture event (``hook``, journaled), SessionStart's slow
    part (``deferred``) or the sessions that ended while no engine ran (``pending``)."""

    kind: str
    event: Any = None
    entry: journal.Entry | None = None


def say(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    print(f"{stamp} engine[{os.getpid()}] {message}", file=sys.stderr, flush=True)


class Worker:
    """The queue of acknowledged work and the thread that empties it (``work``).

    ``server.Engine`` is the one kind of worker: it adds the request half and hands in
    ``settings``, what a job runs with (its ``current_config``, which re-reads
    config.yaml for each job), and the model."""

    def __init__(self, embedder: Any, settings: Callable[[], dict[str, Any]]) -> None:
        from memory_layer.api import open_db

        self.embedder = embedder
        self.settings = settings
        self.worker_conn = open_db()
        self.jobs: queue.Queue[Job] = queue.Queue()
        self.held: collections.deque[Job] = collections.deque()  # to retry, first
        self.known: set[str] = set()  # journal entries queued here (replayed or adopted)
        self.scanned = 0.0
        self.retry_pause = RETRY_PAUSE_S
        self.stopping = threading.Event()
        self.drain_until = float("inf")  # set when stopping begins
        self.store_ident = file_ident(str(self.db_file()))
        self.last_activity = time.monotonic()
        self.jobs_done = 0
        self.backfilled = 0
        self.busy = False
        self.needs_backfill = embedder is not None

    def _interruptible(self, steps: Iterable[Any]) -> Iterator[Any]:
        """Backfill progress hook: stop between batches as soon as an event waits."""
        for step in steps:
            if self.waiting() or self.stopping.is_set():
                return
            yield step

    def work(self) -> None:
        try:
            # Capture and backfill are background work: on Linux a thread has its own
            # nice value, so the hooks (and the agent) get the CPU first.
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICE)
        except (AttributeError, OSError):
            pass
        while not self.stopping.is_set() or self.draining():
            job = self.next_job()
            if job is None:
                if not self.stopping.is_set() and self.adopt_journal():
                    continue
                if self.needs_backfill and not self.stopping.is_set():
                    self.backfill()
                continue
            if not self.store_unchanged():
                # Our connections hold the old file: this event belongs to the new one,
                # and stays in the journal for the engine that opens it.
                self.stopping.set()
                return
            self.busy = True
            try:
                self.run_job(job)
            finally:
                self.busy = False
                self.jobs_done += 1
                self.last_activity = time.monotonic()

    def next_job(self) -> Job | None:
        """An event held for a retry (after its pause), else the next queued job."""
        if self.held:
            self.stopping.wait(self.retry_pause)
            return self.held.popleft() if not self.stopping.is_set() else None
        try:
            return self.jobs.get(timeout=0.5 if not self.stopping.is_set() else 0.05)
        except queue.Empty:
            return None

    def waiting(self) -> int:
        return self.jobs.qsize() + len(self.held)

    def draining(self) -> bool:
        """Stopping, with queued work left and time to do it, on the same store (held
        events are not retried then: the store is what held them up)."""
        return (
            not self.jobs.empty()
            and not self.held
            and time.monotonic() < self.drain_until
            and self.store_unchanged()
        )

    def db_file(self) -> Any:
        from memory_layer.paths import db_path

        return db_path()

    def store_unchanged(self) -> bool:
        return file_ident(str(self.db_file())) == self.store_ident

    def run_job(self, job: Job) -> None:
        """One job; a journaled event is forgotten once its writes are in the store, kept
        for the next engine when the store could not take them (locked, full, replaced),
        and set aside as ``*.failed`` when handling it failed for another reason."""
        from memory_layer.api import store_trouble
        from memory_layer.errors import DatabaseError

        outcome = "done"
        try:
            self.do_job(job)
        except Exception as exc:  # one bad event must not stop the worker
            say(f"job {job.kind} failed: {type(exc).__name__}: {exc}")
            trouble = isinstance(exc, DatabaseError) or (
                isinstance(exc, sqlite3.Error) and store_trouble(exc)
            )
            outcome = "keep" if trouble else "failed"
        if job.entry is None:
            return
        if outcome == "keep":
            self.held.appendleft(job)
            self.retry_pause = min(self.retry_pause * 2, MAX_RETRY_PAUSE_S)
            return
        self.retry_pause = RETRY_PAUSE_S
        if outcome == "done" and self.store_unchanged():
            journal.done(job.entry)
        elif outcome == "failed":
            journal.set_aside(job.entry)
        self.known.discard(job.entry.path.name)

    def do_job(self, job: Job) -> None:
        from memory_layer.hooks.capture import process_pending
        from memory_layer.hooks.handlers import deferred, handle_captured
        from memory_layer.models import utcnow

        config = self.settings()
        conn = self.worker_conn
        if job.kind == "hook":
            event, now = job.event, job.entry.received if job.entry else utcnow()
            handle_captured(event, conn, config, embedder=self.embedder, now=now)
            if event.name == "SessionEnd":
                process_pending(conn, config, embedder=self.embedder, now=utcnow(), llm=True)
            # A hook may have stored a memory without a vector: re-embedding is wanted
            # then too. Never cleared here: a re-embed interrupted by this job (vectors of
            # the model used before a switch, which ``unembedded`` does not count) goes on
            # at the next idle moment, and only ``backfill`` itself says it is done.
            self.needs_backfill = self.embedder is not None and (
                self.needs_backfill or self.unembedded()
            )
        elif job.kind == "pending":
            process_pending(conn, config, embedder=self.embedder, now=utcnow(), llm=True)
        elif job.kind == "deferred":
            deferred(job.event, conn, config, embedder=self.embedder, llm=True)

    def adopt_journal(self) -> int:
        """Queue entries other processes journaled (a hook that answered by itself and
        found the store locked), at most every ``JOURNAL_SCAN_S``; this engine's own
        entries are queued as it writes them."""
        if time.monotonic() - self.scanned < JOURNAL_SCAN_S:
            return 0
        self.scanned = time.monotonic()
        mine = f"-{os.getpid()}-"
        try:
            foreign = [
                p for p in journal.pending() if mine not in p.name and p.name not in self.known
            ]
        except OSError:
            return 0
        return self.replay_journal(foreign) if foreign else 0

    def replay_journal(self, paths: list[Any] | None = None) -> int:
        """Queue what earlier engines (or hooks) acknowledged and nobody finished, oldest
        first."""
        from memory_layer.hooks.events import event_from_dict

        if paths is None:
            journal.clear_partials()
            paths = journal.pending()
        queued = 0
        for path in paths:
            try:
                entry = journal.load(path)
                if entry is None:
                    continue
                event = event_from_dict(entry.event)
            except Exception as exc:  # kept aside by load, or an event we cannot rebuild
                say(f"journal entry not replayed: {type(exc).__name__}: {exc}")
                if path.exists():
                    journal.set_aside(path)
                continue
            self.known.add(path.name)
            self.jobs.put(Job("hook", event, entry))
            queued += 1
        if queued:
            say(f"replaying {queued} acknowledged events from the journal")
        return queued

    def unembedded(self) -> bool:
        """Whether a memory lacks a vector (a partial index makes this instant)."""
        from memory_layer.api import has_unembedded

        return has_unembedded(self.worker_conn)

    def backfill(self) -> None:
        from memory_layer.api import backfill

        self.busy = True
        embedder = self.embedder
        try:
            done = backfill(self.worker_conn, embedder, progress=self._interruptible)
            self.backfilled += done
            if done:
                # Written keyword-only, or embedded by the model used before a switch.
                say(f"embedded {done} memories lacking a vector from {embedder.model_id}")
            # Interrupted runs come back on the next idle moment, and so does a run whose
            # model was switched under it (what it wrote is the old model's now).
            self.needs_backfill = bool(self.waiting()) or self.embedder is not embedder
        except Exception as exc:
            say(f"backfill failed: {type(exc).__name__}: {exc}")
            self.needs_backfill = False
        finally:
            self.busy = False


def replay_into() -> str | None:
    """Write what the journal holds into the current store, in this process, with no
    engine running (`backup restore`, before the store is set aside: what an engine
    acknowledged belongs to the store it was acknowledged for). Entries the store
    cannot take (it is damaged) are moved to a folder in backups/, which is returned."""
    from memory_layer.api import open_db, store_trouble
    from memory_layer.config import load_config
    from memory_layer.errors import DatabaseError
    from memory_layer.hooks.events import event_from_dict
    from memory_layer.hooks.handlers import handle_captured
    from memory_layer.models import utcnow
    from memory_layer.paths import user_dir

    paths = journal.pending()
    if not paths:
        return None
    config = load_config()
    try:
        conn = open_db()
    except DatabaseError:
        conn = None
    try:
        for path in paths:
            if conn is None:
                break
            try:
                entry = journal.load(path)
                if entry is None:
                    continue
                event = event_from_dict(entry.event)
            except Exception:  # unreadable, or an event we cannot rebuild: kept aside,
                # as replay_journal does, so one bad entry never blocks a restore
                if path.exists():
                    journal.set_aside(path)
                continue
            try:
                handle_captured(event, conn, config, embedder=None, now=entry.received)
            except (DatabaseError, sqlite3.DatabaseError) as exc:
                if isinstance(exc, sqlite3.DatabaseError) and not store_trouble(exc):
                    raise
                break
            journal.done(entry)
    finally:
        if conn is not None:
            conn.close()
    left = journal.pending()
    if not left:
        return None
    folder = user_dir() / "backups" / f"journal-{utcnow().strftime('%Y%m%dT%H%M%S%fZ')}"
    folder.mkdir(parents=True, exist_ok=True)
    for path in left:
        os.replace(path, folder / path.name)
    return str(folder)


def file_ident(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
