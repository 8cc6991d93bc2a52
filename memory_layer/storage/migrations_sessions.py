"""Schema changes of session activity: surfacings, sessions and their event log, the
hooks' transcript offsets, LLM extraction calls, and outcome learning's tasks and
credits.

One of the three modules holding the functions of ``storage.migrations``; that module
owns the names and their order and loads these only when a migration is pending.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing import at run time
if TYPE_CHECKING:
    from sqlite_utils import Database


# --- Claude Code plugin: surfacings, sessions and their cheap event log -----------


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


# --- Outcome learning: tasks, their events, and the credit each memory received ---


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


# --- Claude Code hooks: context epochs, deferred SessionEnd work, transcript offsets ---


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


# --- Capture provenance (issue 12) ------------------------------------------------


def m095_capture_relay_window(db: Database) -> None:
    # The tool text a transcript showed recently (capture.provenance.ToolText.window: 32-bit
    # hashes of word runs), kept with its offset so relay detection sees what earlier
    # batches of the same session returned (issue 12). NULL: nothing seen yet.
    db.execute("ALTER TABLE transcript_offsets ADD COLUMN tool_window BLOB")
