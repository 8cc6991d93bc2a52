"""Retrieval quality: keyword-only vs vector-only vs hybrid on coding memories, and LoCoMo.

Usage:  .venv/bin/python benchmarks/retrieval_quality.py [--skip-locomo] [--locomo-only]
        [--modes keyword,vector,hybrid] [--vector-weight W] [--common-share S] [--cli-check N]
        [--no-threads] [--thread-share S] [--coding-threads]

1. benchmarks/data/coding_memories.jsonl: 144 memories x 3 queries (rarest keywords, a
   natural question, a paraphrase avoiding the memory's words). Each query runs with
   the default scope of `recall` (the memory's project + global). Reports hit@1/hit@8.
2. LoCoMo10 turn retrieval (../shared/data/locomo, CC BY-NC, evaluation only): every
   turn stored as "Speaker: text", one project per conversation, through the functions
   `memory-layer import` calls, each session a thread with the turns' positions
   (--no-threads leaves those out); for each question with
   evidence, the share of evidence turns in the top 10 (R@10). Each question goes
   through ``api.recall_records``, the use case `memory-layer recall` calls in its own
   process or in the warm engine, with ``--project locomo/<conversation> -n 10``
   (audience person, the verifier at retrieval.min_answer). ``--cli-check N`` also runs N
   of them through the real `memory-layer recall --json` in subprocesses on the same
   store and exits 1 unless the ids are identical. R@10 is reported over all questions,
   categories 1-4 (without the adversarial category 5, the 1,536 questions of issue 11)
   and for conversations 0-4 (where variants were compared) and 5-9 apart.
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
from memory_layer.transfer import import_records, read_lines  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "coding_memories.jsonl"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10.json"
MODES = ("keyword", "vector", "hybrid")
LOCOMO_PROJECT = "locomo/"
# Variants were compared on conversations 0-4; 5-9 are reported apart as held out.
TUNED_ON = 5
SESSION = re.compile(r"session_\d+")
# --no-threads stores the turns without their place (the rule then has nothing to use).
THREADS = True
# --coding-threads stores each coding project's memories as one session's captures.
CODING_THREADS = False


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
    if CODING_THREADS:
        # As if each project's memories had been captured in one session, in file order:
        # what storing a hook capture with its session id and an increasing position
        # would do to a coding store.
        ends: dict[str, int] = {}
        for _, values in records:
            ends[values["project"]] = ends.get(values["project"], -1) + 1
            values.update(thread=f"session/{values['project']}", position=ends[values["project"]])
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


def locomo_home() -> Path:
    """The LoCoMo store's own user directory: ``memories.db`` there is what the real
    `memory-layer recall` opens when MEMORY_LAYER_HOME points at it (``--cli-check``)."""
    home = Path(os.environ["MEMORY_LAYER_HOME"]) / "locomo-home"
    home.mkdir(parents=True, exist_ok=True)
    return home


def locomo_lines(data: list) -> list[dict]:
    """Every turn as one JSONL record of `memory-layer import`: "Speaker: text", one
    project per conversation, each session a thread whose positions are the turns'
    order (the reply to a turn is the next position)."""
    lines = []
    for conv in data:
        project = LOCOMO_PROJECT + conv["sample_id"]
        c = conv["conversation"]
        for key in sorted(c, key=lambda k: int(k.split("_")[1]) if SESSION.fullmatch(k) else 0):
            if not SESSION.fullmatch(key):
                continue
            for position, turn in enumerate(c[key]):
                lines.append(
                    {
                        "id": f"{conv['sample_id']}:{turn['dia_id']}",
                        "text": f"{turn['speaker']}: {turn['text']}",
                        "category": "context",
                        "project": project,
                        "source": "locomo",
                        "confidence": 0.8,
                        "thread": f"{project}/{key}",
                        "position": position,
                    }
                )
    return lines


def locomo_store(data: list, embedder) -> object:
    """The LoCoMo turns stored the way `memory-layer import chat.jsonl` stores them
    (``transfer.read_lines`` and ``import_records``, the functions that command calls)."""
    db = open_db(locomo_home() / "memories.db")
    if db.execute("SELECT count(*) FROM memories").fetchone()[0]:
        return db
    lines = locomo_lines(data)
    if not THREADS:
        for line in lines:
            del line["thread"], line["position"]
    start = time.time()
    cfg = load_config()
    payload = [json.dumps(line, ensure_ascii=False).encode() + b"\n" for line in lines]
    report = import_records(
        db, read_lines(payload, int(cfg["remember"]["max_chars"])), embedder=embedder
    )
    if report.imported != len(lines):
        sys.exit(f"Only {report.imported} of {len(lines)} LoCoMo turns were imported.")
    print(f"  imported {len(lines)} LoCoMo turns in {time.time() - start:.1f}s", flush=True)
    return db


def locomo_questions(data: list):
    """(conversation index, project, question, evidence turn ids) of every question with
    evidence."""
    for index, conv in enumerate(data):
        for qa in conv["qa"]:
            evidence = [e for e in qa.get("evidence", []) if isinstance(e, str)]
            if evidence:
                yield index, LOCOMO_PROJECT + conv["sample_id"], qa, evidence


def cli_recall(db, cfg, embedder, mode: str, query: str, project: str, k: int) -> list[str]:
    """The ids `memory-layer recall QUERY --project P -n k --json` prints: the same use
    case (api.recall_records) the CLI and the warm engine call, in this process."""
    from memory_layer import api
    from memory_layer.requests import RecallRequest

    local = copy.deepcopy(cfg)
    if mode == "vector":
        local["retrieval"]["keyword_weight"] = 0.0
    request = RecallRequest(query=query, limit=k, project=project, keyword_only=mode == "keyword")
    return [r["id"] for r in api.recall_records(db, request, config=local, embedder=embedder)]


def locomo_benchmark(cfg, embedder, k: int = 10) -> dict:
    """R@k per mode: over every question, categories 1-4 (the adversarial category 5
    left out, 1,536 questions), conversations 0-4 (where variants were tuned) and 5-9."""
    data = json.loads(LOCOMO.read_text())
    db = locomo_store(data, embedder)
    out = {}
    for mode in MODES:
        sums: dict[str, list[float]] = {}
        for index, project, qa, evidence in locomo_questions(data):
            ids = {
                i.split(":", 1)[1]
                for i in cli_recall(db, cfg, embedder, mode, qa["question"], project, k)
            }
            share = sum(1 for e in evidence if e in ids) / len(evidence)
            groups = [
                "all",
                "categories 1-4" if qa["category"] != 5 else "category 5",
                "conversations 0-4" if index < TUNED_ON else "conversations 5-9",
            ]
            for group in groups:
                total = sums.setdefault(group, [0.0, 0])
                total[0] += share
                total[1] += 1
        out[mode] = {group: (total[0] / total[1], total[1]) for group, total in sums.items()}
    return out


def cli_check(cfg, embedder, n: int, k: int = 10) -> tuple[int, int]:
    """Run ``n`` questions (spread over the conversations) through the real `memory-layer
    recall --json` in a subprocess on the same store, and count those whose ids equal
    what ``cli_recall`` returns in this process."""
    import subprocess

    data = json.loads(LOCOMO.read_text())
    db = locomo_store(data, embedder)
    questions = list(locomo_questions(data))
    step = max(1, len(questions) // n)
    env = dict(os.environ, MEMORY_LAYER_HOME=str(locomo_home()))
    exe = Path(sys.executable).with_name("memory-layer")
    same = 0
    for _, project, qa, _ in questions[::step][:n]:
        here = cli_recall(db, cfg, embedder, "hybrid", qa["question"], project, k)
        done = subprocess.run(
            [str(exe), "recall", qa["question"], "--project", project, "-n", str(k), "--json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        there = [r["id"] for r in json.loads(done.stdout)]
        same += int(here == there)
        if here != there:
            print(f"  differs: {qa['question']!r}: {here[:3]} vs {there[:3]}")
    return same, min(n, len(questions[::step]))


def print_locomo(results: dict) -> None:
    print("\nLoCoMo10 turn retrieval (R@10, through api.recall_records as the CLI runs it)")
    for mode, groups in results.items():
        cells = "  ".join(f"{group} {value:.3f} (n={n})" for group, (value, n) in groups.items())
        print(f"{mode:<8} {cells}")


def main() -> None:
    global MODES
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--keyword-weight", type=float)
    parser.add_argument("--vector-weight", type=float)
    parser.add_argument(
        "--common-share",
        type=float,
        help="retrieval.vector_common_share (1 embeds the whole query)",
    )
    parser.add_argument("--band", type=float, help="retrieval.relevance_band")
    parser.add_argument("--locomo-only", action="store_true")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--cli-check",
        type=int,
        default=0,
        metavar="N",
        help="also run N LoCoMo questions through the real CLI and compare",
    )
    parser.add_argument(
        "--no-threads",
        action="store_true",
        help="store LoCoMo turns without thread/position (conversation order unused)",
    )
    parser.add_argument("--thread-share", type=float, help="retrieval.thread_share")
    parser.add_argument(
        "--coding-threads",
        action="store_true",
        help="store each coding project's memories as one thread (a session's captures)",
    )
    args = parser.parse_args()
    global THREADS, CODING_THREADS
    THREADS = not args.no_threads
    CODING_THREADS = args.coding_threads
    cfg = load_config()
    if args.thread_share is not None:
        cfg["retrieval"]["thread_share"] = args.thread_share
    if args.keyword_weight is not None:
        cfg["retrieval"]["keyword_weight"] = args.keyword_weight
    if args.vector_weight is not None:
        cfg["retrieval"]["vector_weight"] = args.vector_weight
    if args.common_share is not None:
        cfg["retrieval"]["vector_common_share"] = args.common_share
    if args.band is not None:
        cfg["retrieval"]["relevance_band"] = args.band
    MODES = tuple(args.modes.split(","))
    overrides = [
        args.keyword_weight, args.vector_weight, args.common_share, args.band, args.thread_share
    ]
    overrides = [o for o in overrides if o is not None]
    embedder = get_embedder(cfg)
    if embedder is None:
        sys.exit("The embedding model did not load; run `memory-layer doctor`.")
    print(
        f"keyword_weight={cfg['retrieval']['keyword_weight']} "
        f"vector_weight={cfg['retrieval']['vector_weight']} "
        f"vector_common_share={cfg['retrieval']['vector_common_share']} "
        f"relevance_band={cfg['retrieval']['relevance_band']} "
        f"thread_share={cfg['retrieval']['thread_share']} threads={THREADS}"
    )
    if args.cli_check:
        if overrides:
            sys.exit("--cli-check runs the shipped settings: drop the overriding flags.")
        same, n = cli_check(cfg, embedder, args.cli_check)
        print(
            f"LoCoMo through `memory-layer recall --json`: {same} of {n} questions "
            "give the same ids as the in-process use case"
        )
        if same != n:
            sys.exit(1)
    if args.locomo_only:
        print_locomo(locomo_benchmark(cfg, embedder))
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
        print_locomo(locomo_benchmark(cfg, embedder))


if __name__ == "__main__":
    main()
