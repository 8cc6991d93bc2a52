"""Schema changes of the memory store itself: the memories table, the operations log,
the FTS index, the generation counter and change log the vector cache reads, and a
memory's place in a conversation.

One of the three modules holding the functions of ``storage.migrations``; that module
owns the names and their order and loads these only when a migration is pending.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing import at run time
if TYPE_CHECKING:
    from sqlite_utils import Database


# --- The store: memories, operations log, FTS text, generation counter ------------


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


# --- Retrieval: incremental vector cache ------------------------------------------


def m050_memory_changes(db: Database) -> None:
    # Which rows changed, in order, so a warm process refreshes only those vectors
    # instead of reloading every BLOB (0.4 s at 100k) after each write. Pruned to the
    # last 20,000 changes; a cache older than that reloads in full.
    db.execute(
        "CREATE TABLE memory_changes (id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "memory_rowid INTEGER NOT NULL)"
    )
    db.execute(
        "CREATE TRIGGER memory_changes_insert AFTER INSERT ON memories BEGIN "
        "INSERT INTO memory_changes(memory_rowid) VALUES (new.rowid); "
        "DELETE FROM memory_changes WHERE id <= (SELECT max(id) FROM memory_changes) - 20000; "
        "END"
    )
    db.execute(
        "CREATE TRIGGER memory_changes_delete AFTER DELETE ON memories BEGIN "
        "INSERT INTO memory_changes(memory_rowid) VALUES (old.rowid); END"
    )
    db.execute(
        "CREATE TRIGGER memory_changes_update AFTER UPDATE OF embedding, embedding_model, "
        "project, status ON memories BEGIN "
        "INSERT INTO memory_changes(memory_rowid) VALUES (new.rowid); END"
    )


def m012_hooks_unembedded_index(db: Database) -> None:
    # The engine checks after every hook event whether a memory still lacks a vector
    # (written keyword-only by a hook process). Without this index that check reads
    # every embedding BLOB: tens of milliseconds at 10k memories, competing with hooks.
    db.execute("CREATE INDEX idx_memories_unembedded ON memories(id) WHERE embedding IS NULL")


# --- Structured facts in the FTS text ---------------------------------------------


def m070_fts_indexes_fact_subject_and_key(db: Database) -> None:
    # Structured facts were findable only by their value ("ubuntu 22.04"), never by what
    # they are about ("prod-server os"): index subject and key with the text.
    from memory_layer.storage.textindex import fts_document

    rows = db.execute(
        "SELECT rowid, text, subject, fact_key FROM memories WHERE subject IS NOT NULL"
    ).fetchall()
    for rowid, text, subject, key in rows:
        db.execute(
            "UPDATE memories_fts SET body = ? WHERE rowid = ?",
            [fts_document(text, subject, key), rowid],
        )


# --- Conversation order (issue 11) ------------------------------------------------


def m100_memory_thread_position(db: Database) -> None:
    # Where a memory sits in a conversation: ``thread`` names it (a chat log's or a
    # session's id), ``position`` orders its turns. The answer to a question is usually
    # the turn after the one the question repeats, so recall lets a turn inherit part of
    # its predecessor's relevance (retrieval.thread_share). NULL for every other memory.
    # One index serves both lookups recall and remember make: a turn's successor
    # (thread, position + 1) and the end of a thread (max position); unique, since two
    # turns at one place would make "the turn after" ambiguous.
    db.execute("ALTER TABLE memories ADD COLUMN thread TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN position INTEGER")
    db.execute(
        "CREATE UNIQUE INDEX idx_memories_thread_position ON memories(thread, position) "
        "WHERE thread IS NOT NULL"
    )


def m101_thread_places_per_project(db: Database) -> None:
    # A place in a conversation belongs to a project: thread ids such as "chat-1" or a
    # session's id recur across projects, and with m100's index on (thread, position)
    # a turn written in project B landed on project A's memory (nothing stored in B).
    # coalesce: global memories (NULL project) share one namespace, as in
    # uq_conflicts_open. Every row m100 allowed is unique here too (a stricter index).
    db.execute("DROP INDEX IF EXISTS idx_memories_thread_position")
    db.execute(
        "CREATE UNIQUE INDEX idx_memories_thread_place "
        "ON memories(coalesce(project, ''), thread, position) WHERE thread IS NOT NULL"
    )
