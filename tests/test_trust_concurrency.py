"""Several processes writing at once lose nothing and duplicate nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from memory_layer.api import inbox
from memory_layer.storage.db import open_db

WORKERS = 4
NOTES = 12
REPEATS = 5

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from memory_layer.config import load_config
    from memory_layer.storage.db import open_db
    from memory_layer.trust.facts import write
    from memory_layer.trust.quality import propose_record

    worker, go, notes, repeats = int(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    target = sys.argv[5]
    cfg = load_config()
    db = open_db()
    while not go.exists():  # start together so the writes really overlap
        time.sleep(0.005)
    source = f"hook:w{worker}"
    for i in range(notes):
        write(db, f"worker {worker} note {i}: port {8000 + i}", config=cfg, source=source)
        # Everyone says the same thing: one record, reinforced.
        write(db, "Shared rule: run ruff check before every commit", config=cfg, source=source)
    for _ in range(repeats):
        # Same fact, same value from every worker: one record.
        write(db, "arm64", config=cfg, source=source, subject="build-box", key="arch")
    # Agents proposing the same record and the same change: one inbox item each.
    propose_record(db, "Cache pip wheels between CI runs", config=cfg, source=f"mcp:w{worker}")
    propose_record(db, "Deploy with fly deploy --strategy canary", config=cfg,
                   source=f"mcp:w{worker}", memory_id=target)
    # Same fact, a different value per worker: one conflict with one candidate each.
    write(db, f"ubuntu 2{worker}.04", config=cfg, source=source, subject="prod", key="os")
    """
)


def test_parallel_writers_are_counted_exactly(user_home: Path, tmp_path: Path):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n")
    from memory_layer.config import load_config
    from memory_layer.trust.facts import write

    seed = open_db()  # migrate once up front
    target = write(
        seed, "Deploy with fly deploy --strategy rolling", config=load_config(), source="cli"
    ).memory.id
    seed.close()
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    go = tmp_path / "go"
    env = {**os.environ, "MEMORY_LAYER_HOME": str(user_home)}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(n), str(go), str(NOTES), str(REPEATS), target],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(WORKERS)
    ]
    time.sleep(0.3)
    go.write_text("go")
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err

    db = open_db()
    count = lambda sql, *a: db.execute(sql, a).fetchone()[0]  # noqa: E731
    assert count("SELECT count(*) FROM memories WHERE text LIKE 'worker % note %'") == (
        WORKERS * NOTES
    )
    assert count("SELECT count(DISTINCT text) FROM memories WHERE text LIKE 'worker %'") == (
        WORKERS * NOTES
    )
    shared = db.execute(
        "SELECT count(*), sum(use_count) FROM memories WHERE text LIKE 'Shared rule:%'"
    ).fetchone()
    assert shared == (1, WORKERS * NOTES - 1)
    arch = db.execute(
        "SELECT count(*), sum(use_count), min(status) FROM memories WHERE subject = 'build-box'"
    ).fetchone()
    assert arch == (1, WORKERS * REPEATS - 1, "active")
    assert count("SELECT count(*) FROM memories WHERE subject = 'prod'") == WORKERS
    assert count(
        "SELECT count(*) FROM memories WHERE subject = 'prod' AND status = 'conflict'"
    ) == (WORKERS)
    assert count("SELECT count(*) FROM conflicts") == 1
    [item] = [i for i in inbox(db) if i["kind"] == "conflict"]
    values = [c["text"] for c in item["candidates"]]
    assert sorted(values) == [f"ubuntu 2{n}.04" for n in range(WORKERS)]
    # Stable order: candidates come back in write order, the same on every read.
    assert [
        c["memory_id"] for c in next(i for i in inbox(db) if i["kind"] == "conflict")["candidates"]
    ] == [c["memory_id"] for c in item["candidates"]]
    assert count("SELECT count(*) FROM memories WHERE text LIKE 'Cache pip wheels%'") == 1
    assert count("SELECT count(*) FROM proposals WHERE memory_id = ?", target) == 1
    # Every write left exactly one 'create' in the operations log.
    assert count("SELECT count(*) FROM operations WHERE action = 'create'") == (
        1 + WORKERS * NOTES + 1 + 1 + 1 + WORKERS
    )
