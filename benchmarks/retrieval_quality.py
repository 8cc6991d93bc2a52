"""Retrieval quality: keyword-only vs vector-only vs hybrid on coding memories, and LoCoMo.

Usage:  .venv/bin/python benchmarks/retrieval_quality.py [--skip-locomo] [--locomo-only]
        [--modes keyword,vector,hybrid] [--vector-weight W] [--common-share S]

1. benchmarks/data/coding_memories.jsonl: 144 memories x 3 queries (rarest keywords, a
   natural question, a paraphrase avoiding the memory's words). Each query runs with
   the default scope of `recall` (the memory's project + global). Reports hit@1/hit@8.
2. LoCoMo10 turn retrieval (../shared/data/locomo, CC BY-NC, evaluation only): every
   turn stored as "Speaker: text", one project per conversation; for each question with
   evidence, the share of evidence turns in the top 10 (R@10).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MEMORY_LAYER_HOME", tempfile.mkdtemp(prefix="ml-bench-quality-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memory_layer.config import load_config  # noqa: E402
from memory_layer.embed import get_embedder  # noqa: E402
from memory_layer.retrieval.search import Scope, recall  # noqa: E402
from memory_layer.storage.db import open_db  # noqa: E402
from memory_layer.text import STOPWORDS  # noqa: E402
from memory_layer.transfer import import_records  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "coding_memories.jsonl"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
MODES = ("keyword", "vector", "hybrid")


def content_words(text: str) -> set[str]:
    words = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOPWORDS or len(word) < 2:
            continue
        words.add(re.sub(r"(ing|ed|es|s)$", "", word) if len(word) > 4 else word)
    return words


def run_mode(db, cfg, embedder, mode, query, project, limit):
    local = copy.deepcopy(cfg)
    if mode == "vector":
        local["retrieval"]["keyword_weight"] = 0.0
    return recall(
        db,
        query,
        scope=Scope.for_project(project),
        config=local,
        limit=limit,
        embedder=None if mode == "keyword" else embedder,
    )


def coding_benchmark(cfg, embedder) -> dict:
    db = open_db(Path(os.environ["MEMORY_LAYER_HOME"]) / "coding.db")
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    records = [
        (
            i,
            {
                "id": r["id"],
                "text": r["text"],
                "category": r["category"],
                "project": r["project"],
                "tags": r.get("tags", []),
                "source": "bench",
                "confidence": 0.8,
            },
        )
        for i, r in enumerate(rows, 1)
    ]
    if not db.execute("SELECT count(*) FROM memories").fetchone()[0]:
        import_records(db, records, embedder=embedder)
    results: dict = {m: {} for m in MODES}
    for mode in MODES:
        for kind in ("keywords", "question", "paraphrase", "paraphrase_strict"):
            results[mode][kind] = {"n": 0, "hit1": 0, "hit8": 0}
        results[mode]["all"] = {"n": 0, "hit1": 0, "hit8": 0}
        results[mode]["misses"] = []
        for row in rows:
            for kind, query in row["queries"].items():
                ids = [
                    s.memory.id for s in run_mode(db, cfg, embedder, mode, query, row["project"], 8)
                ]
                buckets = [kind, "all"]
                if (
                    kind == "paraphrase"
                    and len(content_words(query) & content_words(row["text"])) <= 1
                ):
                    buckets.append("paraphrase_strict")
                for bucket in buckets:
                    stats = results[mode][bucket]
                    stats["n"] += 1
                    stats["hit1"] += int(bool(ids) and ids[0] == row["id"])
                    stats["hit8"] += int(row["id"] in ids)
                if mode == "hybrid" and (not ids or ids[0] != row["id"]):
                    results[mode]["misses"].append((row["id"], kind, query, ids[:3]))
    return results


def locomo_benchmark(cfg, embedder, k: int = 10) -> dict:
    data = json.loads(LOCOMO.read_text())
    db = open_db(Path(os.environ["MEMORY_LAYER_HOME"]) / "locomo.db")
    records = []
    n = 0
    for conv in data:
        project = "locomo/" + conv["sample_id"]
        c = conv["conversation"]
        for key in sorted(c):
            if not re.fullmatch(r"session_\d+", key):
                continue
            for turn in c[key]:
                n += 1
                records.append(
                    (
                        n,
                        {
                            "id": f"{conv['sample_id']}:{turn['dia_id']}",
                            "text": f"{turn['speaker']}: {turn['text']}",
                            "category": "context",
                            "project": project,
                            "tags": [],
                            "source": "locomo",
                            "confidence": 0.8,
                        },
                    )
                )
    if not db.execute("SELECT count(*) FROM memories").fetchone()[0]:
        start = time.time()
        # Turns are distinct utterances even when their text repeats: no dedupe on import.
        from memory_layer.embed import to_blob
        from memory_layer.models import iso, utcnow
        from memory_layer.storage.records import insert_memory

        stamp = iso(utcnow())
        texts = [r[1]["text"] for r in records]
        vectors = embedder.embed(texts) if embedder is not None else None
        db.execute("BEGIN")
        for i, (_, values) in enumerate(records):
            row = dict(values, created_at=stamp, updated_at=stamp)
            if vectors is not None:
                row["embedding"] = to_blob(vectors[i])
                row["embedding_model"] = embedder.model_id
            insert_memory(db, row, actor="bench")
        db.execute("COMMIT")
        print(f"  stored {len(records)} LoCoMo turns in {time.time() - start:.1f}s", flush=True)
    out = {}
    for mode in MODES:
        total = 0.0
        count = 0
        for conv in data:
            project = "locomo/" + conv["sample_id"]
            for qa in conv["qa"]:
                evidence = [e for e in qa.get("evidence", []) if isinstance(e, str)]
                if not evidence:
                    continue
                ids = {
                    s.memory.id.split(":", 1)[1]
                    for s in run_mode(db, cfg, embedder, mode, qa["question"], project, k)
                }
                found = sum(1 for e in evidence if e in ids)
                total += found / len(evidence)
                count += 1
        out[mode] = {"questions": count, f"R@{k}": total / count}
    return out


def main() -> None:
    global MODES
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--keyword-weight", type=float)
    parser.add_argument("--vector-weight", type=float)
    parser.add_argument("--common-share", type=float,
                        help="retrieval.vector_common_share (1 embeds the whole query)")
    parser.add_argument("--band", type=float, help="retrieval.relevance_band")
    parser.add_argument("--locomo-only", action="store_true")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    cfg = load_config()
    if args.keyword_weight is not None:
        cfg["retrieval"]["keyword_weight"] = args.keyword_weight
    if args.vector_weight is not None:
        cfg["retrieval"]["vector_weight"] = args.vector_weight
    if args.common_share is not None:
        cfg["retrieval"]["vector_common_share"] = args.common_share
    if args.band is not None:
        cfg["retrieval"]["relevance_band"] = args.band
    MODES = tuple(args.modes.split(","))
    embedder = get_embedder(cfg)
    if embedder is None:
        sys.exit("The embedding model did not load; run `memory-layer doctor`.")
    print(f"keyword_weight={cfg['retrieval']['keyword_weight']} "
          f"vector_weight={cfg['retrieval']['vector_weight']} "
          f"vector_common_share={cfg['retrieval']['vector_common_share']} "
          f"relevance_band={cfg['retrieval']['relevance_band']}")
    if args.locomo_only:
        for mode, s in locomo_benchmark(cfg, embedder).items():
            print(f"{mode:<8} questions {s['questions']}  R@10 {s['R@10']:.3f}")
        return
    coding = coding_benchmark(cfg, embedder)
    print("\nCoding memories (144 memories, 432 queries)")
    print(f"{'mode':<8} {'bucket':<18} {'n':>4} {'hit@1':>6} {'hit@8':>6}")
    for mode in MODES:
        for bucket in ("all", "keywords", "question", "paraphrase", "paraphrase_strict"):
            s = coding[mode][bucket]
            print(
                f"{mode:<8} {bucket:<18} {s['n']:>4} {s['hit1'] / s['n']:>6.3f} "
                f"{s['hit8'] / s['n']:>6.3f}"
            )
    if args.show_misses:
        for miss in coding["hybrid"]["misses"]:
            print("  miss", miss)
    if not args.skip_locomo and LOCOMO.exists():
        print("\nLoCoMo10 turn retrieval")
        for mode, s in locomo_benchmark(cfg, embedder).items():
            print(f"{mode:<8} questions {s['questions']}  R@10 {s['R@10']:.3f}")


if __name__ == "__main__":
    main()
