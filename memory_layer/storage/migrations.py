"""Every schema change, as named migrations applied in order when the database opens.

Never edit a migration that has shipped; add a new one at the end.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

SET_NAME = "memory_layer"

# (name, function) in order. The sqlite-utils Migrations set is built from this list
# only when something is pending: importing sqlite-utils costs ~0.2 s, which the
# hook path cannot afford on every call, while checking the applied names is one query.
MIGRATIONS: list[tuple[str, Callable[[Database], None]]] = []


def migrations(*, name: str) -> Callable[[Callable[[Database], None]], Callable[[Database], None]]:
    def register(fn: Callable[[Database], None]) -> Callable[[Database], None]:
        if any(existing == name for existing, _ in MIGRATIONS):
            raise ValueError(f"Migration {name} is registered twice")
        MIGRATIONS.append((name, fn))
        return fn

    return register


def migration_set() -> Migrations:
    """The one sqlite_utils.Migrations set holding every schema change, in order."""
    from sqlite_utils import Migrations

    mset = Migrations(SET_NAME)
    for name, fn in MIGRATIONS:
        mset(name=name)(fn)
    return mset


@migrations(name="m001_memories")
def m001_memories(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            text TEXT NOT NULL,
            category TEXT NOT NULL,
            project TEXT,                      -- NULL means global
            tags TEXT NOT NULL DEFAULT '[]',   -- JSON array
            source TEXT NOT NULL,
            confidence REAL NOT NULL,
            outcome_score REAL NOT NULL DEFAULT 0,
            success_count INTEGER NOT NULL DEFAULT 0,
            failure_count INTEGER NOT NULL DEFAULT 0,
            use_count INTEGER NOT NULL DEFAULT 0,
            last_used_at TEXT,
            status TEXT NOT NULL DEFAULT 'active',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            embedding BLOB,
            embedding_model TEXT
        )
        """
    )
    db.execute("CREATE INDEX idx_memories_project_status ON memories(project, status)")


@migrations(name="m002_operations_log")
def m002_operations_log(db: Database) -> None:
    db.execute(
        """
        CREATE TABLE operations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            memory_id TEXT,
            old_value TEXT,      -- JSON
            new_value TEXT,      -- JSON
            context TEXT         -- JSON: task id, session, reason...
        )
        """
    )
    db.execute("CREATE INDEX idx_operations_memory ON operations(memory_id, id)")
    db.execute("CREATE INDEX idx_operations_at ON operations(at)")


@migrations(name="m003_fts_and_proven")
def m003_fts_and_proven(db: Database) -> None:
    # The FTS body is derived text (CJK split into characters), so it is kept in
    # sync by storage/records.py rather than by triggers. rowid = memories.rowid.
    db.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5("
        "body, tokenize='porter unicode61 remove_diacritics 2')"
    )
    # Recency runs from creation or the last time the memory was proven useful,
    # never from mere retrieval (which let retrieval feed itself in runtime-memory 3.x).
    db.execute("ALTER TABLE memories ADD COLUMN proven_at TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN content_hash TEXT")
    db.execute("CREATE INDEX idx_memories_hash ON memories(content_hash)")
    from memory_layer.storage.textindex import fts_body, normalise_for_hash

    for rowid, text in db.execute("SELECT rowid, text FROM memories").fetchall():
        db.execute("INSERT INTO memories_fts(rowid, body) VALUES (?, ?)", [rowid, fts_body(text)])
        db.execute(
            "UPDATE memories SET content_hash = ? WHERE rowid = ?",
            [normalise_for_hash(text), rowid],
        )


@migrations(name="m004_generation")
def m004_generation(db: Database) -> None:
    # A counter bumped whenever something the in-memory vector cache depends on
    # changes, so a warm process can tell in one cheap read whether to reload.
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    db.execute("INSERT INTO meta(key, value) VALUES ('generation', 0)")
    bump = "BEGIN UPDATE meta SET value = value + 1 WHERE key = 'generation'; END"
    db.execute("CREATE TRIGGER memories_gen_insert AFTER INSERT ON memories " + bump)
    db.execute("CREATE TRIGGER memories_gen_delete AFTER DELETE ON memories " + bump)
    db.execute(
        "CREATE TRIGGER memories_gen_update AFTER UPDATE OF embedding, project, status, text "
        "ON memories " + bump
    )


# --- Claude Code plugin: surfacings, sessions and their cheap event log -------------


@migrations(name="m010_usage_and_sessions")
def m010_usage_and_sessions(db: Database) -> None:
    # One row per time a memory was shown to an agent (injected by a hook, recalled,
    # returned by MCP search). Outcome learning credits memories from these rows.
    db.execute(
        """
        CREATE TABLE usage (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            session_id TEXT,
            project TEXT,
            kind TEXT NOT NULL,          -- injected | recalled | mcp_search | session_start
            at TEXT NOT NULL,
            query TEXT,
            rank INTEGER,
            score REAL
        )
        """
    )
    db.execute("CREATE INDEX idx_usage_session ON usage(session_id, memory_id)")
    db.execute("CREATE INDEX idx_usage_memory ON usage(memory_id, at)")
    db.execute("CREATE INDEX idx_usage_project_at ON usage(project, at)")
    db.execute(
        """
        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            project TEXT,
            cwd TEXT,
            transcript_path TEXT,
            transcript_offset INTEGER NOT NULL DEFAULT 0,  -- bytes already extracted
            started_at TEXT,
            ended_at TEXT,
            end_reason TEXT
        )
        """
    )
    # Cheap per-session signals: tool calls (command, ok, error, file), prompts and
    # assistant messages. Capture derives memories from them; outcomes read them as
    # evidence that a surfaced memory was acted on.
    db.execute(
        """
        CREATE TABLE session_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            session_id TEXT NOT NULL,
            project TEXT,
            at TEXT NOT NULL,
            kind TEXT NOT NULL,          -- tool | prompt | assistant
            tool TEXT,
            command TEXT,
            ok INTEGER,
            error TEXT,
            file_path TEXT,
            text TEXT
        )
        """
    )
    db.execute("CREATE INDEX idx_session_events_session ON session_events(session_id, id)")
