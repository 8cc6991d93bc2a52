"""Latency and scale: remember/recall p50/p95 in-process and as a fresh CLI process,
import throughput, database size and RSS, at 1k, 10k and 100k memories.

Usage:  .venv/bin/python benchmarks/latency.py [--sizes 1000,10000,100000] [--rebuild]
        [--in-process-only] [--threaded]

Synthetic but varied coding memories (templates x tools x errors x paths). Embeddings
are real MiniLM vectors for up to 10k distinct texts; beyond 10k, rows reuse those
vectors with small noise (embedding 100k texts would take ~10 minutes and measures the
model, not the store). Databases are cached in $ML_BENCH_DIR (default /tmp/ml-bench).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH = Path(os.environ.get("ML_BENCH_DIR", "/tmp/ml-bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TOOLS = ["pytest", "ruff", "mypy", "docker compose", "kubectl", "terraform", "npm", "pnpm",
         "cargo", "go test", "alembic", "pg_dump", "redis-cli", "celery", "gunicorn", "uvicorn",
         "webpack", "vite", "eslint", "prettier", "helm", "ansible", "make", "poetry", "uv"]
ERRORS = ["ECONNREFUSED 127.0.0.1:5432", "ModuleNotFoundError: No module named 'psycopg2'",
          "TypeError: Cannot read properties of undefined", "OOMKilled", "CrashLoopBackOff",
          "permission denied (publickey)", "certificate verify failed", "EADDRINUSE :::3000",
          "database is locked", "segmentation fault", "ImportError: cannot import name",
          "timeout after 30s", "429 Too Many Requests", "no space left on device"]
THINGS = ["the staging database", "the billing service", "the auth middleware", "CI runners",
          "the search index", "feature flags", "the payment webhook", "the cron scheduler",
          "the S3 uploader", "the GraphQL gateway", "the websocket hub", "the mobile API"]
TEMPLATES = [
    "When {tool} fails with `{error}` on {thing}, the fix is to {fix} (seen in {path}).",
    "Always run {tool} with {flag} before touching {thing}; without it {error} shows up.",
    "We decided to use {tool} for {thing} because {reason}; revisit in {year}.",
    "Gotcha: {thing} needs {flag} in {path}, otherwise {tool} reports `{error}`.",
    "Convention: {thing} code lives under {path} and is checked with {tool} {flag}.",
    "To deploy {thing}, run `{tool} {flag}` from {path} after the migration step.",
]
FIXES = ["pin the version", "restart the container", "clear the cache directory",
         "export the missing env var", "rebuild the lockfile", "bump the timeout to 120s",
         "add the CA bundle", "free the port", "use the service name instead of localhost"]
FLAGS = ["--no-cache", "-x", "--strict", "--frozen-lockfile", "-v", "--dry-run", "--force",
         "--parallel 4", "--no-owner", "--prefer-offline"]
REASONS = ["it is faster in CI", "the team already knows it", "licensing", "it supports ARM",
           "it halves cold starts", "the old one is unmaintained"]


def synth_text(rng: random.Random, n: int) -> str:
    return rng.choice(TEMPLATES).format(
        tool=rng.choice(TOOLS), error=rng.choice(ERRORS), thing=rng.choice(THINGS),
        fix=rng.choice(FIXES), flag=rng.choice(FLAGS), reason=rng.choice(REASONS),
        path=f"src/{rng.choice(['api', 'web', 'infra', 'jobs'])}/mod{n % 997}.py",
        year=2026 + n % 3,
    )


QUERIES = ["why does pytest fail with ECONNREFUSED", "how do we deploy the billing service",
           "OOMKilled in CI runners", "which flag does pg_dump need", "staging database gotcha",
           "what did we decide about vite", "EADDRINUSE 3000", "certificate verify failed fix",
           "where does auth middleware code live", "celery timeout"]


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def build(size: int, embedder, rebuild: bool, distinct_max: int = 10_000) -> Path:
    home = BENCH / f"n{size}"
    db_file = home / "memories.db"
    if db_file.exists() and not rebuild:
        return home
    import numpy as np

    from memory_layer.embed import to_blob
    from memory_layer.models import iso, utcnow
    from memory_layer.storage.db import open_db
    from memory_layer.storage.records import insert_memory

    if home.exists():
        for f in home.iterdir():
            if f.is_file():
                f.unlink()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["MEMORY_LAYER_HOME"] = str(home)
    rng = random.Random(size)
    texts = [synth_text(rng, n) for n in range(size)]
    distinct = min(size, distinct_max)
    cache = BENCH / "vectors-10k.npy"
    if cache.exists():
        base = np.load(cache)[:distinct]
    else:
        started = time.time()
        base = embedder.embed(texts[:distinct])
        print(f"  embedded {distinct} texts in {time.time() - started:.1f}s", flush=True)
        if distinct == 10_000:
            np.save(cache, base)
    db = open_db(db_file)
    stamp = iso(utcnow())
    projects = [f"github.com/acme/repo{i}" for i in range(20)] + [None]
    db.execute("BEGIN")
    for n, text in enumerate(texts):
        vec = base[n % distinct]
        if n >= distinct:
            vec = vec + rng.gauss(0, 0.02)
            vec = vec / np.linalg.norm(vec)
        insert_memory(db, {
            "id": f"b{n:07d}", "text": text, "category": rng.choice(
                ["troubleshooting", "gotcha", "decision", "convention", "command"]),
            "project": projects[n % len(projects)], "tags": [], "source": "bench",
            "confidence": 0.8, "created_at": stamp, "updated_at": stamp,
            "embedding": to_blob(vec), "embedding_model": embedder.model_id,
        }, actor="bench")
    db.execute("COMMIT")
    db.close()
    return home


# --threaded: every memory a turn of a 20-turn conversation of its own project.
THREAD_TURNS = 20


def threaded_copy(home: Path, size: int) -> Path:
    """A copy of the ``size`` store whose memories are all turns of conversations
    (thread, position), so recall's next-turn lookup (retrieval/threads.py) runs for
    every candidate: the worst case for the hot path. The memories were inserted in
    project order n % 21 (``build``), so each project's k-th run of THREAD_TURNS memories
    is one thread."""
    import shutil
    import sqlite3

    target = BENCH / f"n{size}-threaded"
    if (target / "memories.db").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    from memory_layer.storage.db import open_db

    open_db(home / "memories.db").close()  # migrated first: the copy has the columns
    src = sqlite3.connect(home / "memories.db")
    dst = sqlite3.connect(target / "memories.db")
    src.backup(dst)
    src.close()
    per_block = 21 * THREAD_TURNS
    dst.execute(
        "UPDATE memories SET thread = coalesce(project, 'global') || '#' || "
        "((rowid - 1) / ?), position = ((rowid - 1) / 21) % ?",
        [per_block, THREAD_TURNS],
    )
    dst.commit()
    dst.close()
    if (home / "models").exists():  # what a fresh CLI process loads the model from
        shutil.copytree(home / "models", target / "models", dirs_exist_ok=True)
    return target


def in_process(home: Path, embedder, cfg) -> dict:
    from memory_layer.memories import remember
    from memory_layer.retrieval.search import Scope, recall
    from memory_layer.retrieval.vectors import clear_cache
    from memory_layer.storage.db import open_db

    os.environ["MEMORY_LAYER_HOME"] = str(home)
    clear_cache()
    db = open_db(home / "memories.db")
    scope = Scope.for_project("github.com/acme/repo3")
    recall(db, "warm up", scope=scope, config=cfg, embedder=embedder)  # loads the matrix
    times = []
    for _ in range(5):
        for q in QUERIES:
            t = time.perf_counter()
            recall(db, q, scope=scope, config=cfg, embedder=embedder)
            times.append((time.perf_counter() - t) * 1000)
    kw_times = []
    for q in QUERIES * 3:
        t = time.perf_counter()
        recall(db, q, scope=scope, config=cfg, embedder=None)
        kw_times.append((time.perf_counter() - t) * 1000)
    rem = []
    rng = random.Random(7)
    for n in range(30):
        text = synth_text(rng, 10_000_000 + n) + f" (bench note {n})"
        t = time.perf_counter()
        remember(db, text, config=cfg, project="github.com/acme/repo3", embedder=embedder,
                 source="user")
        rem.append((time.perf_counter() - t) * 1000)
    db.close()
    forget_bench_notes(home)
    return {
        "recall_p50": statistics.median(times), "recall_p95": percentile(times, 0.95),
        "recall_kw_p50": statistics.median(kw_times), "recall_kw_p95": percentile(kw_times, 0.95),
        "remember_p50": statistics.median(rem), "remember_p95": percentile(rem, 0.95),
    }


def forget_bench_notes(home: Path) -> None:
    """Leave the cached DB as it was for the next run."""
    from memory_layer.storage.db import open_db

    db = open_db(home / "memories.db")
    db.execute("DELETE FROM memories_fts WHERE rowid IN "
               "(SELECT rowid FROM memories WHERE text LIKE '%(bench note %')")
    db.execute("DELETE FROM memories WHERE text LIKE '%(bench note %'")
    db.close()


def fresh_process(home: Path, args: list[str], runs: int = 7) -> tuple[float, float]:
    env = {**os.environ, "MEMORY_LAYER_HOME": str(home)}
    times = []
    for n in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "memory_layer", *(a.format(n=n) for a in args)],
                       env=env, check=True, capture_output=True, cwd=home)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), percentile(times, 0.95)


def import_throughput(size: int, embedder) -> dict:
    """`memory-layer import` code path: keyword-only, and with embeddings on a 1k sample."""
    from memory_layer.storage.db import open_db
    from memory_layer.transfer import import_records

    rng = random.Random(99)
    out = {}
    for label, n, emb in (("import_kw_per_s", size, None), ("import_embed_per_s", 1000, embedder)):
        home = BENCH / f"import-{label}-{n}"
        if home.exists():
            for f in home.iterdir():
                f.unlink()
        home.mkdir(parents=True, exist_ok=True)
        os.environ["MEMORY_LAYER_HOME"] = str(home)
        records = [(i, {"text": synth_text(rng, i) + f" #{i}", "category": "general",
                        "project": "p", "tags": [], "source": "import", "confidence": 0.8})
                   for i in range(n)]
        db = open_db(home / "memories.db")
        t = time.perf_counter()
        import_records(db, records, embedder=emb)
        out[label] = n / (time.perf_counter() - t)
        db.close()
    return out


def machine() -> str:
    cpu = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = int(Path("/proc/meminfo").read_text().split()[1]) // 1024 // 1024
    return f"{os.cpu_count()} cores, {cpu}, {mem} GB RAM, Python {sys.version.split()[0]}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument(
        "--in-process-only",
        action="store_true",
        help="only the in-process recall/remember columns (for an A/B of a ranking change)",
    )
    parser.add_argument(
        "--threaded",
        action="store_true",
        help="every memory a turn of a conversation (thread/position): recall's next-turn "
             "lookup runs for every candidate",
    )
    parser.add_argument(
        "--distinct", type=int, default=10_000,
        help="distinct real vectors (the rest reuse them with noise); fewer for a slow model "
             "such as embedding.model multilingual, set in $ML_BENCH_DIR/model-home/config.yaml",
    )
    args = parser.parse_args()
    BENCH.mkdir(parents=True, exist_ok=True)
    os.environ["MEMORY_LAYER_HOME"] = str(BENCH / "model-home")
    from memory_layer.config import load_config
    from memory_layer.embed import get_embedder

    cfg = load_config()
    embedder = get_embedder(cfg)
    if embedder is None:
        sys.exit("embedding model unavailable; run memory-layer doctor")
    print(machine())
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        started = time.time()
        home = build(size, embedder, args.rebuild, args.distinct)
        if args.threaded:
            home = threaded_copy(home, size)
        print(f"n={size}: built/loaded in {time.time() - started:.1f}s", flush=True)
        result = in_process(home, embedder, cfg)
        if args.in_process_only:
            print(f"| {size:,} | recall hybrid p50/p95 {result['recall_p50']:.1f} / "
                  f"{result['recall_p95']:.1f} ms | keyword-only {result['recall_kw_p50']:.1f} / "
                  f"{result['recall_kw_p95']:.1f} ms | remember {result['remember_p50']:.1f} / "
                  f"{result['remember_p95']:.1f} ms | load {os.getloadavg()[0]:.1f} |", flush=True)
            continue
        result["cli_recall_kw"] = fresh_process(
            home, ["recall", "pytest ECONNREFUSED staging", "--keyword-only", "--all-projects"])
        result["cli_recall_hybrid"] = fresh_process(
            home, ["recall", "pytest ECONNREFUSED staging", "--all-projects"], runs=5)
        result["cli_remember"] = fresh_process(
            home, ["remember", "fresh-process remember {n} (bench note cli)", "--global"], runs=5)
        forget_bench_notes(home)
        result["db_mb"] = (home / "memories.db").stat().st_size / 1e6
        result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        result.update(import_throughput(min(size, 10_000), embedder))
        result["size"] = size
        rows.append(result)
        print(json.dumps(result, indent=1, default=lambda v: round(v, 1)), flush=True)
    if args.in_process_only:
        return
    print("\n| memories | recall p50/p95 (hybrid, in-process) | keyword-only p50/p95 | "
          "remember p50/p95 | CLI recall keyword-only p50/p95 | CLI recall hybrid p50/p95 | "
          "CLI remember p50/p95 | import kw/s | import+embed/s | DB MB | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['size']:,} | {r['recall_p50']:.1f} / {r['recall_p95']:.1f} ms | "
              f"{r['recall_kw_p50']:.1f} / {r['recall_kw_p95']:.1f} ms | "
              f"{r['remember_p50']:.1f} / {r['remember_p95']:.1f} ms | "
              f"{r['cli_recall_kw'][0]:.0f} / {r['cli_recall_kw'][1]:.0f} ms | "
              f"{r['cli_recall_hybrid'][0]:.0f} / {r['cli_recall_hybrid'][1]:.0f} ms | "
              f"{r['cli_remember'][0]:.0f} / {r['cli_remember'][1]:.0f} ms | "
              f"{r['import_kw_per_s']:.0f} | {r['import_embed_per_s']:.0f} | "
              f"{r['db_mb']:.1f} | {r['rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
