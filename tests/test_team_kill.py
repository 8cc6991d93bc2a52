"""The team server killed in the middle of a sync, push and pull: nothing is lost or
applied twice. Each test first proves the kill came mid-way (some of the work done,
some not), by holding a PostgreSQL lock the server's next step needs once the first
steps are visible, then SIGKILLing the real `team serve` process."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psycopg

from tests.team_support import TeamServer, cli, pg_server, pg_url  # noqa: F401
from tests.test_team_server import PROJECT, js, local_rows, login, remember, team  # noqa: F401

PAGES = 4
PAGE = 500  # api.team.PAGE: the client pulls the log in pages of this size


def _wait(check: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.005)
    raise AssertionError(f"timed out waiting for {what}")


def _sync(home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memory_layer", "team", "sync"], text=True,
        env={**os.environ, "MEMORY_LAYER_HOME": str(home)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)


def _restart(srv: TeamServer, pg_url: str) -> TeamServer:  # noqa: F811
    again = TeamServer(srv.home, pg_url)
    again.port, again.url = srv.port, srv.url
    return again.start()


def _local(home: Path, sql: str) -> int:
    conn = sqlite3.connect(str(home / "memories.db"), timeout=30)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def _server_proposals(pg_url: str) -> tuple[int, int]:  # noqa: F811
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*), count(DISTINCT text) FROM proposals").fetchone()
    return int(row[0]), int(row[1])


def test_killed_mid_push_nothing_is_lost_or_doubled(tmp_path: Path, team, pg_url: str) -> None:  # noqa: F811
    srv, _ana, tokens, _admin = team
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    texts = [f"Gotcha {n}: the cache key includes the locale" for n in range(24)]
    srv.kill()  # shared while offline: all 24 wait in the outbox
    for text in texts:
        assert js(cli(cy, "share", remember(cy, text), "--json"))["offline"]
    srv = _restart(srv, pg_url)
    with psycopg.connect(pg_url) as blocker:
        sync = _sync(cy)
        _wait(lambda: _server_proposals(pg_url)[0] >= 3, "the first proposals on the server")
        # From here no proposal can commit: the server's next INSERT waits on this lock.
        blocker.execute("LOCK TABLE proposals IN SHARE ROW EXCLUSIVE MODE")
        on_server = _server_proposals(pg_url)[0]
        time.sleep(0.3)  # let the push reach the blocked insert
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
        blocker.rollback()
    sync.communicate(timeout=120)
    assert sync.returncode == 1  # the server went away: the sync says so
    sent = _local(cy, "SELECT count(*) FROM team_outbox WHERE sent_at IS NOT NULL")
    # Mid-way: some of the push was done and some was not when the server died.
    assert 3 <= on_server < len(texts) and 1 <= sent < len(texts)
    assert _server_proposals(pg_url)[0] < len(texts)
    srv = _restart(srv, pg_url)
    try:
        cli(cy, "team", "sync")
        assert _server_proposals(pg_url) == (len(texts), len(texts))  # each exactly once
        assert js(cli(cy, "team", "status", "--json"))["outbox"] == 0
    finally:
        srv.kill()


def _publish_directly(pg_url: str, count: int) -> None:  # noqa: F811
    """``count`` accepted team memories and their publish ops (the store's shape; the
    propose and accept use cases are tested elsewhere and would take minutes here)."""
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        project = conn.execute("SELECT id FROM projects WHERE key = %s", [PROJECT]).fetchone()[0]
        author = conn.execute("SELECT id FROM users WHERE name = 'cy'").fetchone()[0]
        conn.execute(
            "INSERT INTO memories (id, project_id, text, category, status, author_id, "
            "reviewer_id) SELECT 'tmkill' || lpad(n::text, 6, '0'), %s, "
            "'Service ' || n || ': restart it with systemctl restart svc-' || n, 'command', "
            "'active', %s, %s FROM generate_series(1, %s) n",
            [project, author, author, count])
        conn.execute(
            "INSERT INTO ops (project_id, memory_id, kind, revision, actor_id) "
            "SELECT %s, 'tmkill' || lpad(n::text, 6, '0'), 'publish', 1, %s "
            "FROM generate_series(1, %s) n ORDER BY n",
            [project, author, count])


def test_killed_mid_pull_of_many_pages_nothing_is_lost_or_doubled(
    tmp_path: Path, team, pg_url: str  # noqa: F811
) -> None:
    srv, _ana, tokens, _admin = team
    total = PAGES * PAGE
    _publish_directly(pg_url, total)
    di = login(tmp_path, srv, "di", tokens["di"])
    assert js(cli(di, "team", "status", "--json"))["cursors"] == {}  # the store exists, empty
    cursor = "SELECT coalesce(max(seq), 0) FROM team_cursors"
    with psycopg.connect(pg_url) as blocker:
        sync = _sync(di)
        _wait(lambda: _local(di, cursor) > 0, "the first page applied on the device")
        # The server's next page waits on this lock: the pull cannot finish now.
        blocker.execute("LOCK TABLE ops IN ACCESS EXCLUSIVE MODE")
        time.sleep(0.3)
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
        blocker.rollback()
    sync.communicate(timeout=120)
    assert sync.returncode == 1
    seen = _local(di, cursor)
    rows = _local(di, "SELECT count(*) FROM memories WHERE team_server IS NOT NULL")
    # Mid-way, and consistent: whole pages applied with their cursor, nothing beyond.
    assert 0 < seen < total and seen % PAGE == 0 and rows == seen
    srv = _restart(srv, pg_url)
    try:
        cli(di, "team", "sync")
        held = local_rows(di)
        assert len(held) == total and len({row[0] for row in held}) == total
        assert _local(di, cursor) == total
        assert js(cli(di, "team", "status", "--json"))["lag"] == {PROJECT: 0}
    finally:
        srv.kill()
