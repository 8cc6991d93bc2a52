"""rank-bm25 against our SQLite FTS5 keyword search: quality and speed.

Usage:  .venv/bin/python benchmarks/bm25_compare.py [--sizes 10000,100000] [--skip-locomo]

The issue allows rank-bm25 only where it beats FTS5 in our own benchmark. Both sides
get the same words: lower-cased ASCII/Unicode word runs without our stopwords.
FTS5 additionally stems (porter), which rank-bm25 cannot without an extra stemmer.

1. Quality, keyword-only: the coding set (hit@1/hit@8 over its 432 queries, each
   scoped to the memory's project + global) and LoCoMo10 turn retrieval (R@10, one
   conversation per scope). "ours" is `recall(..., embedder=None)`: FTS5 BM25 x
   IDF-weighted coverage, the shipped keyword-only path.
2. Speed on synthetic coding memories (benchmarks/latency.py's generator): build
   time (what every fresh process pays for rank-bm25: it keeps no index on disk),
   RSS growth, and p50/p95 of a top-50 query over one project + global for
   rank-bm25 (get_scores over the scope's documents) and FTS5 (keyword_candidates).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("MEMORY_LAYER_HOME", tempfile.mkdtemp(prefix="ml-bench-bm25-"))

import numpy as np  # noqa: E402
from latency import QUERIES, percentile, synth_text  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402

from memory_layer.config import load_config  # noqa: E402
from memory_layer.retrieval.search import Scope, keyword_candidates, recall  # noqa: E402
from memory_layer.storage.db import open_db  # noqa: E402
from memory_layer.text import STOPWORDS  # noqa: E402
from memory_layer.transfer import import_records  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "coding_memories.jsonl"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
WORD = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    return [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]


def top_k(bm25: BM25Okapi, ids: list[str], query: str, k: int) -> list[str]:
    scores = bm25.get_scores(tokens(query))
    order = np.argsort(-scores, kind="stable")[:k]
    return [ids[i] for i in order if scores[i] > 0]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def coding_quality(cfg: dict) -> dict[str, tuple[float, float]]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    db = open_db(Path(os.environ["MEMORY_LAYER_HOME"]) / "coding.db")
    if not db.execute("SELECT count(*) FROM memories").fetchone()[0]:
        import_records(db, [(i, {"id": r["id"], "text": r["text"], "category": r["category"],
                                 "project": r["project"], "tags": r.get("tags", []),
                                 "source": "bench", "confidence": 0.8})
                            for i, r in enumerate(rows, 1)])
    hits = {"rank-bm25": [0, 0], "ours (FTS5)": [0, 0]}
    n = 0
    for row in rows:
        scope_rows = [r for r in rows if r["project"] in (row["project"], None)]
        bm25 = BM25Okapi([tokens(r["text"]) for r in scope_rows])
        ids = [r["id"] for r in scope_rows]
        for query in row["queries"].values():
            n += 1
            ranked = {
                "rank-bm25": top_k(bm25, ids, query, 8),
                "ours (FTS5)": [s.memory.id for s in recall(
                    db, query, scope=Scope.for_project(row["project"]), config=cfg, limit=8)],
            }
            for name, got in ranked.items():
                hits[name][0] += int(bool(got) and got[0] == row["id"])
                hits[name][1] += int(row["id"] in got)
    return {name: (h1 / n, h8 / n) for name, (h1, h8) in hits.items()}


def locomo_quality(cfg: dict) -> dict[str, float]:
    data = json.loads(LOCOMO.read_text())
    db = open_db(Path(os.environ["MEMORY_LAYER_HOME"]) / "locomo.db")
    records, n = [], 0
    for conv in data:
        c = conv["conversation"]
        for key in sorted(c):
            if re.fullmatch(r"session_\d+", key):
                for turn in c[key]:
                    n += 1
                    records.append((n, {"id": f"{conv['sample_id']}:{turn['dia_id']}",
                                        "text": f"{turn['speaker']}: {turn['text']}",
                                        "category": "context", "source": "locomo",
                                        "project": "locomo/" + conv["sample_id"],
                                        "confidence": 0.8}))
    if not db.execute("SELECT count(*) FROM memories").fetchone()[0]:
        import_records(db, records)
    totals = {"rank-bm25": 0.0, "ours (FTS5)": 0.0}
    count = 0
    for conv in data:
        project = "locomo/" + conv["sample_id"]
        turns = [r for _, r in records if r["project"] == project]
        bm25 = BM25Okapi([tokens(r["text"]) for r in turns])
        ids = [r["id"] for r in turns]
        for qa in conv["qa"]:
            evidence = {f"{conv['sample_id']}:{e}" for e in qa.get("evidence", [])
                        if isinstance(e, str)}
            if not evidence:
                continue
            count += 1
            got = {
                "rank-bm25": set(top_k(bm25, ids, qa["question"], 10)),
                "ours (FTS5)": {s.memory.id for s in recall(
                    db, qa["question"], scope=Scope.for_project(project), config=cfg, limit=10)},
            }
            for name, found in got.items():
                totals[name] += len(evidence & found) / len(evidence)
    return {name: total / count for name, total in totals.items()}


def speed(size: int) -> dict[str, float]:
    rng = random.Random(size)
    projects = [f"github.com/acme/repo{i}" for i in range(20)] + [None]
    texts = [synth_text(rng, i) for i in range(size)]
    owners = [projects[i % len(projects)] for i in range(size)]
    db = open_db(Path(os.environ["MEMORY_LAYER_HOME"]) / f"speed-{size}.db")
    if not db.execute("SELECT count(*) FROM memories").fetchone()[0]:
        import_records(db, [(i, {"text": t, "category": "general", "project": p,
                                 "source": "bench", "confidence": 0.8})
                            for i, (t, p) in enumerate(zip(texts, owners, strict=True), 1)])
    project = projects[3]
    scope_docs = [(i, t) for i, (t, p) in enumerate(zip(texts, owners, strict=True))
                  if p in (project, None)]
    before = rss_mb()
    start = time.perf_counter()
    bm25 = BM25Okapi([tokens(t) for _, t in scope_docs])
    build_scope = time.perf_counter() - start
    start = time.perf_counter()
    BM25Okapi([tokens(t) for t in texts])  # every memory: what a fresh process would index
    build_all = time.perf_counter() - start
    grown = rss_mb() - before
    ids = [str(i) for i, _ in scope_docs]
    out: dict[str, float] = {"size": size, "scope_docs": len(scope_docs),
                             "bm25_build_scope_s": build_scope, "bm25_build_all_s": build_all,
                             "bm25_rss_growth_mb": grown}
    scope = Scope.for_project(project)
    for name, run in (("rank-bm25", lambda q: top_k(bm25, ids, q, 50)),
                      ("fts5", lambda q: keyword_candidates(db, q, scope, 50))):
        run(QUERIES[0])
        times = []
        for _ in range(5):
            for query in QUERIES:
                start = time.perf_counter()
                run(query)
                times.append((time.perf_counter() - start) * 1000)
        out[f"{name}_p50_ms"] = statistics.median(times)
        out[f"{name}_p95_ms"] = percentile(times, 0.95)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--skip-locomo", action="store_true")
    args = parser.parse_args()
    cfg = load_config()
    print("Keyword-only quality")
    for name, (h1, h8) in coding_quality(cfg).items():
        print(f"  coding set   {name:<12} hit@1 {h1:.3f}  hit@8 {h8:.3f}")
    if not args.skip_locomo and LOCOMO.exists():
        for name, r10 in locomo_quality(cfg).items():
            print(f"  LoCoMo       {name:<12} R@10 {r10:.3f}")
    print("\nSpeed (top 50 over one project + global)")
    for size in (int(s) for s in args.sizes.split(",")):
        print("  " + json.dumps({k: round(v, 2) for k, v in speed(size).items()}), flush=True)


if __name__ == "__main__":
    main()
