"""Opening the team database and its named, ordered migrations.

Each migration runs once, in order, inside one transaction with the name recorded in
``team_migrations``, so several servers starting at once on one database apply each
step exactly once (an advisory lock serialises them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory_layer.errors import DatabaseError, InvalidInput

if TYPE_CHECKING:
    import psycopg

# Any constant: the key of the advisory lock that serialises migrations.
_MIGRATION_LOCK = 4_212_001
# The dimension of the server's vectors: the default local model (MiniLM, 384-d).
VECTOR_DIM = 384

_IDENTITY = """
CREATE TABLE orgs (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    allow_self_review boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE users (
    id bigserial PRIMARY KEY,
    org_id bigint NOT NULL REFERENCES orgs(id),
    name text NOT NULL,
    is_admin boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, name)
);
-- Keyed by the normalised git remote, as the local store keys projects.
CREATE TABLE projects (
    id bigserial PRIMARY KEY,
    org_id bigint NOT NULL REFERENCES orgs(id),
    key text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, key)
);
CREATE TABLE memberships (
    user_id bigint NOT NULL REFERENCES users(id),
    project_id bigint NOT NULL REFERENCES projects(id),
    role text NOT NULL CHECK (role IN ('reader', 'contributor', 'reviewer', 'admin')),
    PRIMARY KEY (user_id, project_id)
);
CREATE TABLE devices (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users(id),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz,
    UNIQUE (user_id, name)
);
-- Only the sha256 of a token is kept; the prefix lets a person tell tokens apart.
CREATE TABLE tokens (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users(id),
    device_id bigint REFERENCES devices(id),
    kind text NOT NULL CHECK (kind IN ('person', 'agent')),
    hash text NOT NULL UNIQUE,
    prefix text NOT NULL,
    scopes text[] NOT NULL,
    project_id bigint REFERENCES projects(id),
    expires_at timestamptz,
    revoked_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz
);
"""

_SHARED = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE TABLE memories (
    id text PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects(id),
    text text NOT NULL,
    category text NOT NULL,
    subject text,
    fact_key text,
    status text NOT NULL CHECK (status IN ('active', 'disputed', 'withdrawn')),
    revision integer NOT NULL DEFAULT 1,
    author_id bigint NOT NULL REFERENCES users(id),
    reviewer_id bigint REFERENCES users(id),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    embedding vector(384),
    tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('english', coalesce(subject, '') || ' ' || coalesce(fact_key, '')
                    || ' ' || text)
    ) STORED
);
CREATE INDEX memories_project_status ON memories (project_id, status);
CREATE INDEX memories_tsv ON memories USING gin (tsv);
CREATE INDEX memories_embedding ON memories USING hnsw (embedding vector_cosine_ops);
CREATE INDEX memories_fact ON memories (project_id, subject, fact_key);
-- client_key: the id the client chose for the request, so a retry after a lost
-- answer (a server killed mid-sync) finds the first copy instead of adding a second.
CREATE TABLE proposals (
    id text PRIMARY KEY,
    client_key text NOT NULL UNIQUE,
    project_id bigint NOT NULL REFERENCES projects(id),
    memory_id text REFERENCES memories(id),
    base_revision integer,
    text text NOT NULL,
    category text NOT NULL,
    subject text,
    fact_key text,
    reason text,
    author_id bigint NOT NULL REFERENCES users(id),
    token_kind text NOT NULL,
    status text NOT NULL DEFAULT 'open'
        CHECK (status IN ('open', 'accepted', 'rejected', 'stale')),
    conflicts_with text REFERENCES memories(id),
    decided_by bigint REFERENCES users(id),
    decided_at timestamptz,
    decision_reason text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX proposals_open ON proposals (project_id) WHERE status = 'open';
-- The append-only team log every device pulls from, per project, by seq.
CREATE TABLE ops (
    seq bigserial PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects(id),
    memory_id text NOT NULL REFERENCES memories(id),
    kind text NOT NULL
        CHECK (kind IN ('publish', 'revise', 'withdraw', 'dispute', 'resolve', 'score')),
    revision integer NOT NULL,
    actor_id bigint NOT NULL REFERENCES users(id),
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ops_project_seq ON ops (project_id, seq);
CREATE TABLE disputes (
    id bigserial PRIMARY KEY,
    client_key text NOT NULL UNIQUE,
    memory_id text NOT NULL REFERENCES memories(id),
    user_id bigint NOT NULL REFERENCES users(id),
    reason text NOT NULL,
    opened_at timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by bigint REFERENCES users(id),
    resolution text
);
CREATE TABLE outcome_events (
    id bigserial PRIMARY KEY,
    client_key text NOT NULL UNIQUE,
    memory_id text NOT NULL REFERENCES memories(id),
    user_id bigint NOT NULL REFERENCES users(id),
    worked boolean NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outcome_events_memory ON outcome_events (memory_id, user_id);
"""

# A member of the organisation asks to join a project (or for another role in it); a
# project admin approves (with the role they grant) or denies, with a reason.
_JOIN_REQUESTS = """
CREATE TABLE join_requests (
    id text PRIMARY KEY,
    project_id bigint NOT NULL REFERENCES projects(id),
    user_id bigint NOT NULL REFERENCES users(id),
    role text NOT NULL CHECK (role IN ('reader', 'contributor', 'reviewer')),
    reason text,
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'approved', 'denied')),
    granted_role text CHECK (granted_role IN ('reader', 'contributor', 'reviewer', 'admin')),
    decided_by bigint REFERENCES users(id),
    decided_at timestamptz,
    decision_reason text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX join_requests_one_open ON join_requests (project_id, user_id)
    WHERE status = 'open';
CREATE INDEX join_requests_user ON join_requests (user_id, created_at);
"""

MIGRATIONS: tuple[tuple[str, str], ...] = (
    ("t001_identity", _IDENTITY),
    ("t002_shared_memories_and_log", _SHARED),
    ("t003_join_requests", _JOIN_REQUESTS),
)


def connect(url: str) -> psycopg.Connection:
    """A connection to the team database, or a DatabaseError saying how to fix it.

    In autocommit mode: every write runs in an explicit ``conn.transaction()``, which is
    then a real BEGIN/COMMIT (on a connection with an implicit transaction open it would
    be only a savepoint, committed never)."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInput(
            f"The team database must be a postgresql:// URL, not {url[:40]!r}. "
            "Example: --db postgresql://memory@db.internal/memory_layer"
        )
    import psycopg

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(
            f"Cannot connect to the team database: {first}. Check --db (host, user, "
            "database name) and that PostgreSQL 16+ with pgvector is running."
        ) from None


def migrate(conn: psycopg.Connection) -> list[str]:
    """Apply the migrations not yet applied, in order; return the names applied now."""
    import psycopg

    applied_now: list[str] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", [_MIGRATION_LOCK])
        conn.execute(
            "CREATE TABLE IF NOT EXISTS team_migrations ("
            "name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in conn.execute("SELECT name FROM team_migrations")}
        for name, sql in MIGRATIONS:
            if name in done:
                continue
            try:
                conn.execute(sql)
            except psycopg.errors.FeatureNotSupported as exc:
                raise DatabaseError(f"Migration {name} failed: {exc}") from None
            except psycopg.errors.UndefinedFile:
                raise DatabaseError(
                    "The pgvector extension is not installed on this PostgreSQL server. "
                    "Install it (e.g. `apt install postgresql-16-pgvector`) and run "
                    "`memory-layer team server init` again."
                ) from None
            conn.execute("INSERT INTO team_migrations(name) VALUES (%s)", [name])
            applied_now.append(name)
    return applied_now


def applied(conn: psycopg.Connection) -> list[str]:
    """The migration names applied so far (empty on a database never initialised)."""
    exists = conn.execute("SELECT to_regclass('team_migrations')").fetchone()
    if not exists or exists[0] is None:
        return []
    return [row[0] for row in conn.execute("SELECT name FROM team_migrations ORDER BY name")]


def check_current(conn: psycopg.Connection) -> None:
    """Refuse to serve a database whose schema is older (or newer) than this code's."""
    have = applied(conn)
    want = [name for name, _ in MIGRATIONS]
    if have != want:
        missing = [n for n in want if n not in have]
        hint = (
            "Run `memory-layer team server init --db URL` to apply: " + ", ".join(missing)
            if missing
            else "This database was set up by a newer memory-layer; upgrade this server."
        )
        raise DatabaseError(f"The team database schema is not current. {hint}")
