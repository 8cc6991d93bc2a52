"""Schema changes of trust and sharing: the review gate, checksums, conflicts and
proposals, imported instruction files, where captured words came from, and team sync.

One of the three modules holding the functions of ``storage.migrations``; that module
owns the names and their order and loads these only when a migration is pending.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing import at run time
if TYPE_CHECKING:
    from sqlite_utils import Database


# --- Trust: review gate, checksums, scenes, structured facts, conflicts -----------


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


def m080_proposals_base_text(db: Database) -> None:
    # The text a change proposal was made against: accepting it after the record was
    # edited again would silently undo that edit (review refuses; revise or reject).
    db.execute("ALTER TABLE proposals ADD COLUMN base_text TEXT")


# --- Import of agent-instruction files (memory-layer import-instructions) ---------


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


# --- Capture provenance (issue 12) ------------------------------------------------


def m091_capture_origin(db: Database) -> None:
    # Where a captured memory's words came from when they are not the writer's own:
    # tool output, a file or page the agent read, or assistant text relaying one. NULL
    # for everything else. The trust policy holds such records for a person (issue 12).
    db.execute("ALTER TABLE memories ADD COLUMN origin TEXT")


# --- Team sync: read-only team rows, the outbox and the per-project cursors -------


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
