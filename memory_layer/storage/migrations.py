"""Every schema change, as named migrations applied in order when the database opens.

Never edit a migration that has shipped; add a new one at the end.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # no typing import at run time (~3 ms on the hook path)
if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

SET_NAME = "memory_layer"

# (name, function) in order: the order of this file, not of the numbers in the names.
# The numbers were reserved per area (m01x hooks, m02x outcomes, m03x trust...) while the
# areas were built in parallel; the names are stored in every database, so they stay as
# they are, and a new migration always goes at the end of the file.
# The sqlite-utils Migrations set is built from this list
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


# --- Trust: review gate, checksums, scenes, structured facts, conflicts -------------


@migrations(name="m030_trust_review_and_conflicts")
def m030_trust_review_and_conflicts(db: Database) -> None:
    import hashlib
    from datetime import UTC, datetime, timedelta

    for column in (
        "approved_by",  # who vouched for the text (a reviewer, or the trusted writer)
        "approved_at",
        "review_by",  # after this time the record is overdue for review
        "checksum",  # sha256 of the approved text; 'unverified' after an unstamped edit
        "scene",  # deploy, server_ops, coding...; NULL = every scene
        "subject",  # structured fact: subject / fact_key, the text is the value
        "fact_key",
        "conflict_id",  # the open or resolved conflict this candidate belongs to
    ):
        db.execute(f"ALTER TABLE memories ADD COLUMN {column} TEXT")
    db.execute("CREATE INDEX idx_memories_scene ON memories(scene)")
    db.execute("CREATE INDEX idx_memories_fact ON memories(subject, fact_key, project)")
    db.execute("CREATE INDEX idx_memories_unstamped ON memories(status) WHERE checksum IS NULL")
    # SQLite cannot hash, so a text change to a record that was never stamped marks it
    # 'unverified' here; stamped records are caught by comparing sha256 on read.
    db.execute(
        "CREATE TRIGGER memories_trust_unstamped_edit AFTER UPDATE OF text ON memories "
        "WHEN NEW.checksum IS NULL AND OLD.text IS NOT NEW.text "
        "BEGIN UPDATE memories SET checksum = 'unverified' WHERE rowid = NEW.rowid; END"
    )
    # A withheld record switched to active without approval (e.g. a direct SQL UPDATE)
    # has no checksum: mark it unverified so agents still do not see it.
    db.execute(
        "CREATE TRIGGER memories_trust_unapproved_activation AFTER UPDATE OF status ON memories "
        "WHEN NEW.status = 'active' AND NEW.checksum IS NULL "
        "AND OLD.status IN ('pending', 'rejected', 'disputed', 'conflict') "
        "BEGIN UPDATE memories SET checksum = 'unverified' WHERE rowid = NEW.rowid; END"
    )
    db.execute(
        """
        CREATE TABLE proposals (
            id TEXT PRIMARY KEY,
            memory_id TEXT NOT NULL,       -- the record the change is for
            text TEXT NOT NULL,            -- the proposed new text
            changes TEXT,                  -- JSON: other proposed fields (category, scene...)
            source TEXT NOT NULL,
            reason TEXT,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'open',  -- open | accepted | revised | rejected
            decided_by TEXT,
            decided_at TEXT,
            decision_reason TEXT
        )
        """
    )
    # The same change proposed twice (two agents, two syncs) is one inbox item.
    db.execute(
        "CREATE UNIQUE INDEX uq_proposals_open ON proposals(memory_id, text) WHERE status = 'open'"
    )
    db.execute(
        """
        CREATE TABLE conflicts (
            id TEXT PRIMARY KEY,
            project TEXT,
            subject TEXT NOT NULL,
            fact_key TEXT NOT NULL,
            opened_at TEXT NOT NULL,
            resolved_at TEXT,
            resolved_by TEXT,
            chosen_id TEXT,
            reason TEXT
        )
        """
    )
    # One open conflict per fact, whatever the number of writers racing to open it.
    db.execute(
        "CREATE UNIQUE INDEX uq_conflicts_open ON conflicts(coalesce(project, ''), subject, "
        "fact_key) WHERE resolved_at IS NULL"
    )
    # Records already active were written by trusted doors: stamp them as verified now,
    # due for review a year on rather than instantly overdue because they are old.
    now = datetime.now(UTC)
    stamp = now.isoformat(timespec="microseconds")
    due = (now + timedelta(days=365)).isoformat(timespec="microseconds")
    for rowid, text, source in db.execute(
        "SELECT rowid, text, source FROM memories WHERE status = 'active'"
    ).fetchall():
        db.execute(
            "UPDATE memories SET checksum = ?, approved_by = ?, approved_at = ?, review_by = ? "
            "WHERE rowid = ?",
            [hashlib.sha256(text.encode("utf-8")).hexdigest(), source, stamp, due, rowid],
        )


# --- Outcome learning: tasks, their events, and the credit each memory received -----


@migrations(name="m020_outcomes_tasks_and_credits")
def m020_outcomes_tasks_and_credits(db: Database) -> None:
    # One row per task from any tracker. id is "<source>:<scope>:<external id>" because
    # Claude Code numbers tasks per list ("1", "2", ...) and Beads ids repeat across repos.
    db.execute(
        """
        CREATE TABLE tasks (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,          -- claude | beads | manual | mcp ...
            external_id TEXT NOT NULL,     -- the tracker's own id: "3", "bd-a3f8"
            list_id TEXT,                  -- Claude task list (session id or shared list)
            project TEXT,
            session_id TEXT,               -- the session that created it, when known
            subject TEXT,
            description TEXT,
            status TEXT NOT NULL,          -- the tracker's status: in_progress, closed...
            outcome TEXT,                  -- success | failure | NULL while open
            reason TEXT,                   -- close reason, or why the outcome was set
            opened_at TEXT NOT NULL,
            started_at TEXT,
            closed_at TEXT,
            state_at TEXT NOT NULL,        -- tracker time of the last transition applied
            updated_at TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX idx_tasks_external ON tasks(external_id)")
    db.execute("CREATE INDEX idx_tasks_project_opened ON tasks(project, opened_at)")
    db.execute("CREATE INDEX idx_tasks_closed ON tasks(closed_at)")
    # Every event seen for a task, applied or not: the audit trail, the sessions a task
    # was worked in, and (event_key) deduplication of replayed Beads interactions.
    db.execute(
        """
        CREATE TABLE task_events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            task_id TEXT NOT NULL,
            at TEXT NOT NULL,
            source TEXT NOT NULL,          -- hook:TaskCompleted, beads:on_close, sync:disk...
            event TEXT NOT NULL,           -- open | start | close | reopen | delete
            status TEXT,
            session_id TEXT,
            applied INTEGER NOT NULL,      -- 0: stale or a repeat, nothing changed
            note TEXT,
            event_key TEXT UNIQUE
        )
        """
    )
    db.execute("CREATE INDEX idx_task_events_task ON task_events(task_id, id)")
    db.execute("CREATE INDEX idx_task_events_session ON task_events(session_id)")
    # One row per (task, memory) judged, including memories shown but not acted on
    # (weight 0). What was applied is stored so an undo reverses exactly that.
    db.execute(
        """
        CREATE TABLE task_credits (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            task_id TEXT,                  -- NULL: direct feedback on one memory
            memory_id TEXT NOT NULL,
            outcome TEXT NOT NULL,         -- success | failure
            weight REAL NOT NULL,
            delta REAL NOT NULL,           -- weight × configured delta, before clamping
            applied REAL NOT NULL,         -- new score − old score, after clamping
            old_score REAL NOT NULL,
            new_score REAL NOT NULL,
            success_inc INTEGER NOT NULL,
            failure_inc INTEGER NOT NULL,
            use_inc INTEGER NOT NULL,
            old_proven_at TEXT,
            new_proven_at TEXT,
            evidence TEXT NOT NULL,        -- JSON list of {kind, at, session_id, detail}
            source TEXT NOT NULL,
            actor TEXT NOT NULL,
            at TEXT NOT NULL,
            reversed_at TEXT,
            reversed_by TEXT,
            reversal_reason TEXT
        )
        """
    )
    db.execute(
        "CREATE UNIQUE INDEX uq_task_credits_live ON task_credits(task_id, memory_id) "
        "WHERE reversed_at IS NULL AND task_id IS NOT NULL"
    )
    db.execute("CREATE INDEX idx_task_credits_memory ON task_credits(memory_id, at)")
    db.execute("CREATE INDEX idx_task_credits_at ON task_credits(at)")


# --- Claude Code hooks: context epochs, deferred SessionEnd work, transcript offsets ----


@migrations(name="m011_hooks_pending_and_offsets")
def m011_hooks_pending_and_offsets(db: Database) -> None:
    # When the agent's context last started empty (startup, /clear, compaction): memories
    # injected before that are no longer in context and may be injected again.
    db.execute("ALTER TABLE sessions ADD COLUMN context_since TEXT")
    # 1 = the session ended and its transcript still needs extracting; SessionEnd has
    # only 1.5 s, so it leaves the work to the engine or the next SessionStart.
    db.execute("ALTER TABLE sessions ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
    # Bytes already extracted per transcript file: the main transcript and every
    # subagent transcript (SubagentStop) are read incrementally and independently.
    db.execute(
        """
        CREATE TABLE transcript_offsets (
            path TEXT PRIMARY KEY,
            session_id TEXT,
            offset INTEGER NOT NULL DEFAULT 0,
            updated_at TEXT
        )
        """
    )


# --- Retrieval: incremental vector cache --------------------------------------------


@migrations(name="m050_memory_changes")
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


@migrations(name="m012_hooks_unembedded_index")
def m012_hooks_unembedded_index(db: Database) -> None:
    # The engine checks after every hook event whether a memory still lacks a vector
    # (written keyword-only by a hook process). Without this index that check reads
    # every embedding BLOB: tens of milliseconds at 10k memories, competing with hooks.
    db.execute("CREATE INDEX idx_memories_unembedded ON memories(id) WHERE embedding IS NULL")


@migrations(name="m013_hooks_llm_calls")
def m013_hooks_llm_calls(db: Database) -> None:
    # Every call of the optional LLM extraction, so its cost is visible and capped per day.
    db.execute(
        """
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            session_id TEXT,
            model TEXT,
            input_chars INTEGER NOT NULL,
            output_chars INTEGER NOT NULL DEFAULT 0,
            cost_usd REAL,               -- as reported by the CLI; NULL when it said nothing
            memories INTEGER NOT NULL DEFAULT 0,
            ok INTEGER NOT NULL,
            error TEXT
        )
        """
    )
    db.execute("CREATE INDEX idx_llm_calls_at ON llm_calls(at)")


@migrations(name="m060_review_restored_records_unverified")
def m060_review_restored_records_unverified(db: Database) -> None:
    # A record never approved (pending, say) that is retired and then restored came back
    # active with no checksum, and stamp_trusted_writes then vouched for it as a trusted
    # write: restoring must not skip review. Same trigger, 'retired' added.
    db.execute("DROP TRIGGER IF EXISTS memories_trust_unapproved_activation")
    db.execute(
        "CREATE TRIGGER memories_trust_unapproved_activation AFTER UPDATE OF status ON memories "
        "WHEN NEW.status = 'active' AND NEW.checksum IS NULL "
        "AND OLD.status IN ('pending', 'rejected', 'disputed', 'conflict', 'retired') "
        "BEGIN UPDATE memories SET checksum = 'unverified' WHERE rowid = NEW.rowid; END"
    )


@migrations(name="m070_fts_indexes_fact_subject_and_key")
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


@migrations(name="m080_proposals_base_text")
def m080_proposals_base_text(db: Database) -> None:
    # The text a change proposal was made against: accepting it after the record was
    # edited again would silently undo that edit (review refuses; revise or reject).
    db.execute("ALTER TABLE proposals ADD COLUMN base_text TEXT")


# --- Import of agent-instruction files (memory-layer import-instructions) -------------


@migrations(name="m090_seed_instruction_items")
def m090_seed_instruction_items(db: Database) -> None:
    # Which memory each item of an imported instruction file became, so importing the
    # file again changes nothing, a changed item updates its memory and a removed one
    # retires it. ``text_hash`` recognises the item in the file; ``stored_hash`` is the
    # memory's text as the import wrote it (a person's later edit is never overwritten);
    # ``owned`` = 0 when the item repeated a memory that existed (never retired by us).
    db.execute(
        """
        CREATE TABLE instruction_items (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            path TEXT NOT NULL,            -- the file, absolute
            project TEXT,                  -- NULL: imported as global
            section TEXT NOT NULL,
            position INTEGER NOT NULL,     -- order in the file at the last import
            text TEXT NOT NULL,            -- the item as the file said it
            text_hash TEXT NOT NULL,
            stored_hash TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            owned INTEGER NOT NULL,        -- 1: the import created the memory
            imported_at TEXT NOT NULL,
            UNIQUE (path, text_hash)
        )
        """
    )
    db.execute("CREATE INDEX idx_instruction_items_memory ON instruction_items(memory_id)")


# --- Capture provenance (issue 12) ---------------------------------------------------


@migrations(name="m091_capture_origin")
def m091_capture_origin(db: Database) -> None:
    # Where a captured memory's words came from when they are not the writer's own:
    # tool output, a file or page the agent read, or assistant text relaying one. NULL
    # for everything else. The trust policy holds such records for a person (issue 12).
    db.execute("ALTER TABLE memories ADD COLUMN origin TEXT")


@migrations(name="m900_team_sync")
def m900_team_sync(db: Database) -> None:
    # A team memory pulled from a team server is a read-only local row: its server and
    # the revision it mirrors. The outbox keeps what waits to go up (survives offline);
    # cursors are per project, because the team log is ordered per project.
    db.execute("ALTER TABLE memories ADD COLUMN team_server TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN team_revision INTEGER")
    db.execute(
        "CREATE TABLE team_outbox (id TEXT PRIMARY KEY, kind TEXT NOT NULL, memory_id TEXT, "
        "body TEXT NOT NULL, created_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
        "last_error TEXT, answer TEXT, sent_at TEXT)"
    )
    db.execute(
        "CREATE TABLE team_cursors (server TEXT NOT NULL, project TEXT NOT NULL, "
        "seq INTEGER NOT NULL, PRIMARY KEY (server, project))"
    )
    db.execute("CREATE TABLE team_state (key TEXT PRIMARY KEY, value TEXT)")


@migrations(name="m095_capture_relay_window")
def m095_capture_relay_window(db: Database) -> None:
    # The tool text a transcript showed recently (capture.provenance.ToolText.window: 32-bit
    # hashes of word runs), kept with its offset so relay detection sees what earlier
    # batches of the same session returned (issue 12). NULL: nothing seen yet.
    db.execute("ALTER TABLE transcript_offsets ADD COLUMN tool_window BLOB")


# --- Conversation order (issue 11) ---------------------------------------------------


@migrations(name="m100_memory_thread_position")
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


@migrations(name="m101_thread_places_per_project")
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
