"""Retrieval on other people's real agent instructions: hybrid, keyword-only, an FTS5 floor.

Usage:  .venv/bin/python benchmarks/instructions_quality.py [--out results.json] [--show-misses N]
        [--without-project-names] [--no-intent-boosts]

benchmarks/data/instructions/: 314 memories taken from the CLAUDE.md / AGENTS.md /
copilot-instructions / CONTRIBUTING files of 20 public repositories (SOURCES.md), and
queries written against them: a plain question, a paraphrase and (where the memory holds
one) an identifier per memory, plus questions no memory answers (README.md there).

1. The memories go into a fresh temporary MEMORY_LAYER_HOME through the import path of
   `memory-layer import` (transfer.read_lines + import_records) with the bundled model.
2. Every query runs through retrieval.search.recall with the default scope of
   `memory-layer recall` (the memory's project plus global), limit 8, hybrid and
   keyword-only (embedder=None): hit@1 / hit@8 per kind.
3. The FTS5 floor: plain SQLite FTS5 (porter tokenizer, bm25(), OR of the query's
   words minus stopwords) over the same texts and project, with no priors.
4. The prompt hook's own selection (hooks.inject.plan_prompt with the real config):
   how often it injects the target, and, for the unanswerable questions, anything.

Two diagnostics: --without-project-names asks the questions without the project's name
(the `without_project_name` field), --no-intent-boosts sets every category boost to 1.0.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import re
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Always a fresh store: a reused one would mix in whatever an earlier run left behind.
# Set before memory_layer is imported, and removed however the process ends (--help too).
HOME = tempfile.mkdtemp(prefix="ml-bench-instructions-")
atexit.register(shutil.rmtree, HOME, ignore_errors=True)
# SIGTERM (timeout, kill) skips atexit unless it is turned into a normal exit.
signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(128 + signal.SIGTERM))
os.environ["MEMORY_LAYER_HOME"] = HOME
# The bundled model is on disk; never let a missing cache turn into a download.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memory_layer.config import load_config  # noqa: E402
from memory_layer.embed import get_embedder  # noqa: E402
from memory_layer.hooks.inject import plan_prompt, prompt_query  # noqa: E402
from memory_layer.models import utcnow  # noqa: E402
from memory_layer.retrieval.search import Scope, recall  # noqa: E402
from memory_layer.storage.db import open_db  # noqa: E402
from memory_layer.text import STOPWORDS  # noqa: E402
from memory_layer.transfer import import_records, read_lines  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "instructions"
MEMORIES = DATA / "memories.jsonl"
QUERIES = DATA / "queries.jsonl"
# 160 more unanswerable questions about the same repositories, and 40 prompts with
# nothing to find (benchmarks/answerable_train.py trains the verifier on all of them).
DISTRACTORS = DATA / "distractors.jsonl"
NONSENSE = DATA / "nonsense.jsonl"
LIMIT = 8  # `memory-layer recall` returns 8 by default; hit@8 is measured at that cut-off
ANSWERABLE = ("question", "paraphrase", "identifier")
KINDS = (*ANSWERABLE, "unanswerable", "nonsense")
NO_ANSWER = ("unanswerable", "nonsense")
MODES = ("hybrid", "keyword")
FLOOR = "fts5"
UNNAMED = "without_project_name"  # the query with its project's name taken out
LABELS = {"hybrid": "hybrid", "keyword": "keyword-only", FLOOR: "FTS5 floor"}
# FTS5 word runs, as the floor tokenizes a query (unicode61 splits on the same classes).
WORD = re.compile(r"[^\W_]+")


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def check_dataset(memories: list[dict[str, Any]], queries: list[dict[str, Any]]) -> None:
    """Every answerable query names a memory of its own project; the others name none."""
    project = {m["id"]: m["project"] for m in memories}
    for q in queries:
        target = q["target"]
        if (q["kind"] in NO_ANSWER) != (target is None):
            sys.exit(f"{q['id']}: kind {q['kind']} with target {target!r}")
        if target is not None and project.get(target) != q["project"]:
            sys.exit(f"{q['id']}: target {target} is not a memory of {q['project']}")


def load_store(config: dict[str, Any], embedder: Any) -> sqlite3.Connection:
    """Import the memories the way `memory-layer import FILE` does (validation, the
    privacy filter, embeddings in batches), into the fresh store."""
    conn = open_db()
    with MEMORIES.open("rb") as stream:
        records = read_lines(stream, int(config["remember"]["max_chars"]))
    report = import_records(conn, records, embedder=embedder)
    if report.imported != len(records):
        sys.exit(f"imported {report.imported} of {len(records)} memories")
    return conn


def floor_index(memories: list[dict[str, Any]]) -> sqlite3.Connection:
    """The same texts in a bare FTS5 table: porter stemming, bm25(), nothing else."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(text, id UNINDEXED, project UNINDEXED,"
        " tokenize='porter unicode61')"
    )
    conn.executemany(
        "INSERT INTO docs (text, id, project) VALUES (?, ?, ?)",
        [(m["text"], m["id"], m["project"]) for m in memories],
    )
    return conn


def floor_match(query: str) -> str:
    """An OR of the query's distinct words, each quoted so FTS5 syntax ('-', ':', '*')
    in commands and flags is read as text. Stopwords are left out, as the FTS5 porter
    baseline in shared/docs/embeddings.md did: an OR over "how do I" matches everything."""
    words = [w for w in WORD.findall(query.lower()) if w not in STOPWORDS]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


def floor_search(conn: sqlite3.Connection, query: str, project: str) -> list[str]:
    match = floor_match(query)
    if not match:
        return []
    # Global memories (project NULL) are in scope too, as for recall; this set has none.
    rows = conn.execute(
        "SELECT id FROM docs WHERE docs MATCH ? AND (project = ? OR project IS NULL)"
        " ORDER BY bm25(docs) LIMIT ?",
        (match, project, LIMIT),
    )
    return [row[0] for row in rows]


def recall_ids(
    conn: sqlite3.Connection, config: dict[str, Any], embedder: Any, query: str, project: str
) -> list[str]:
    results = recall(
        conn,
        query,
        scope=Scope.for_project(project),
        config=config,
        limit=LIMIT,
        embedder=embedder,
    )
    return [item.memory.id for item in results]


def hook_ids(
    conn: sqlite3.Connection, config: dict[str, Any], embedder: Any, query: str, project: str
) -> list[str]:
    """What the UserPromptSubmit hook would inject for this prompt in a fresh session:
    its own planner, with its prompt cleaning, agent audience and relevance floor."""
    plan = plan_prompt(
        conn,
        prompt_query(query, config),
        project,
        config,
        shown=set(),
        embedder=embedder,
        now=utcnow(),
        limit=int(config["hooks"]["inject_limit"]),
    )
    return [memory.id for memory, _score in plan.chosen]


def mcp_ids(server: Any, query: str, project: str) -> list[str]:
    """What the MCP `search` tool returns to an agent (its own function, in-process)."""
    from memory_layer import mcp_server

    found = mcp_server.search(
        server, query, project=project, scene=None, category=None, limit=LIMIT, source="mcp:bench"
    )
    return [item["id"] for item in found["results"]]


def run_queries(
    conn: sqlite3.Connection,
    floor: sqlite3.Connection,
    config: dict[str, Any],
    embedder: Any,
    queries: list[dict[str, Any]],
    *,
    unnamed: bool = False,
) -> list[dict[str, Any]]:
    """One row per query: the ranked ids of each mode and what the hook would inject.
    With ``unnamed``, questions that name their project ("... in Airflow?") are asked
    without the name, as a prompt typed inside that repository usually is."""
    from memory_layer.mcp_server import Server

    server = Server(project=None, scene=None, client="bench")
    rows = []
    for q in queries:
        text = q.get(UNNAMED, q["query"]) if unnamed else q["query"]
        row = {key: q[key] for key in ("id", "kind", "project", "target")} | {"query": text}
        row["set"] = q.get("set", "queries")
        for mode in MODES:
            model = embedder if mode == "hybrid" else None
            row[mode] = {
                "ranked": recall_ids(conn, config, model, text, q["project"]),
                "hook": hook_ids(conn, config, model, text, q["project"]),
            }
        row["hybrid"]["mcp"] = mcp_ids(server, text, q["project"])
        row[FLOOR] = {"ranked": floor_search(floor, text, q["project"])}
        rows.append(row)
    return rows


def summarise(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str], Counter[str]]:
    """Counts per (mode, kind): n, hit1, hit8, any (recall returned something), and for
    the two recall modes hooked (the hook injects something) and hook_hit (the target)."""
    stats: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in rows:
        kinds = [row["kind"]] + (["answerable"] if row["target"] else [])
        if row["kind"] == "unanswerable":
            kinds.append(f"unanswerable/{row['set']}")
        for mode in (*MODES, FLOOR):
            ranked = row[mode]["ranked"]
            hook = row[mode].get("hook")
            for kind in kinds:
                s = stats[(mode, kind)]
                s["n"] += 1
                s["hit1"] += int(bool(ranked) and ranked[0] == row["target"])
                s["hit8"] += int(row["target"] in ranked)
                s["any"] += int(bool(ranked))
                if "mcp" in row[mode]:
                    s["mcp_any"] += int(bool(row[mode]["mcp"]))
                if hook is not None:
                    s["hooked"] += int(bool(hook))
                    s["hook_hit"] += int(row["target"] in hook)
    return stats


def share(stats: Counter[str], key: str) -> str:
    return f"{stats[key] / stats['n']:.3f}" if stats["n"] else "-"


def markdown(head: list[str], rows: list[list[str]], text_cols: int = 1) -> str:
    """A Markdown table; the first ``text_cols`` columns are text, the rest numbers."""
    rule = ["---"] * text_cols + ["---:"] * (len(head) - text_cols)
    return "\n".join(f"| {' | '.join(cells)} |" for cells in (head, rule, *rows))


def hit_table(stats: dict[tuple[str, str], Counter[str]]) -> str:
    cols = (*MODES, FLOOR)
    head = ["kind", "n"] + [f"{LABELS[m]} hit@{k}" for m in cols for k in (1, LIMIT)]
    rows = []
    for kind in (*ANSWERABLE, "answerable"):
        label = "**all answerable**" if kind == "answerable" else kind
        cells = [share(stats[(m, kind)], key) for m in cols for key in ("hit1", "hit8")]
        rows.append([label, str(stats[("hybrid", kind)]["n"]), *cells])
    return markdown(head, rows)


FALSE_SETS = (
    ("unanswerable/queries", "unanswerable, written with the queries"),
    ("unanswerable/distractors", "unanswerable, distractors.jsonl"),
    ("unanswerable", "unanswerable, all"),
    ("nonsense", "nonsense and chatter"),
)


def false_answer_table(stats: dict[tuple[str, str], Counter[str]]) -> str:
    head = ["mode", "set", "n", "recall returns something", "MCP search returns something",
            "hook would inject something"]
    rows = []
    for mode in (*MODES, FLOOR):
        for key, label in FALSE_SETS:
            s = stats[(mode, key)]
            hooked = share(s, "hooked") if mode in MODES else "n/a (no hook)"
            mcp = share(s, "mcp_any") if mode == "hybrid" else "n/a"
            rows.append([LABELS[mode], label, str(s["n"]), share(s, "any"), mcp, hooked])
    return markdown(head, rows, text_cols=2)


def hook_table(stats: dict[tuple[str, str], Counter[str]]) -> str:
    """The other side of the false-answer rate: how often the hook injects the answer."""
    head = ["mode", "kind", "n", "hook injects the target", "hook injects something"]
    rows = [
        [LABELS[mode], kind, str(s["n"]), share(s, "hook_hit"), share(s, "hooked")]
        for mode in MODES
        for kind in (*ANSWERABLE, "answerable")
        for s in (stats[(mode, kind)],)
    ]
    return markdown(head, rows, text_cols=2)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine(embedder: Any) -> dict[str, Any]:
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cores": os.cpu_count(),
        "cpu": cpu_model(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "model": getattr(embedder, "model_id", None),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def show_misses(rows: list[dict[str, Any]], count: int) -> None:
    """Hybrid hit@8 misses next to the floor's answer, to read what went wrong."""
    misses = [r for r in rows if r["target"] and r["target"] not in r["hybrid"]["ranked"]]
    print(f"\nHybrid hit@8 misses: {len(misses)} (first {count})")
    for r in misses[:count]:
        print(
            f"  {r['id']} [{r['kind']}] {r['query']!r}\n    hybrid {r['hybrid']['ranked'][:3]}"
            f"  fts5 {r[FLOOR]['ranked'][:3]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write per-query results as JSON here")
    parser.add_argument("--show-misses", type=int, default=0, metavar="N")
    parser.add_argument(
        "--without-project-names",
        action="store_true",
        help="ask each question with its project's name taken out",
    )
    parser.add_argument(
        "--no-intent-boosts",
        action="store_true",
        help="set every category boost to 1.0 (a diagnostic, not the shipped config)",
    )
    args = parser.parse_args()
    started = time.monotonic()
    config = load_config()
    if args.no_intent_boosts:
        # 1.0 is "no boost" (config.py refuses 0): the query's intent then moves nothing.
        config["boosts"] = dict.fromkeys(config["boosts"], 1.0)
    embedder = get_embedder(config)
    if embedder is None:
        sys.exit("The embedding model did not load; run `memory-layer doctor`.")
    memories = load_jsonl(MEMORIES)
    queries = load_jsonl(QUERIES) + [
        q | {"set": path.stem} for path in (DISTRACTORS, NONSENSE) for q in load_jsonl(path)
    ]
    check_dataset(memories, queries)
    conn = load_store(config, embedder)
    loaded = time.monotonic() - started
    rows = run_queries(
        conn, floor_index(memories), config, embedder, queries, unnamed=args.without_project_names
    )
    report(rows, machine(embedder), loaded, time.monotonic() - started, args)


def report(
    rows: list[dict[str, Any]],
    info: dict[str, Any],
    loaded: float,
    elapsed: float,
    args: argparse.Namespace,
) -> None:
    stats = summarise(rows)
    kinds = Counter(r["kind"] for r in rows)
    options = [
        f"--{k.replace('_', '-')}"
        for k in ("without_project_names", "no_intent_boosts")
        if getattr(args, k)
    ]
    info["options"] = options
    print(
        f"Real agent instructions: {len(rows)} queries "
        f"({', '.join(f'{k} {kinds[k]}' for k in KINDS)}); limit {LIMIT}"
        f"{'; ' + ' '.join(options) if options else ''}"
    )
    print(
        f"Machine: {info['cores']} cores, {info['cpu']}, Python {info['python']}, SQLite "
        f"{info['sqlite']}, {info['platform']}; model {info['model']}; load {info['load_average']}"
        f"; {info['date']}"
    )
    print(f"Store loaded in {loaded:.1f}s; whole run {elapsed:.1f}s\n")
    print(hit_table(stats))
    print("\nNo answer in the store (false answers; the verifier was trained on these sets,"
          " held-out figures: benchmarks/answerable_train.py):\n")
    print(false_answer_table(stats))
    print("\nThe prompt hook on answerable questions:\n")
    print(hook_table(stats))
    if args.show_misses:
        show_misses(rows, args.show_misses)
    if args.out:
        summary = {f"{m}/{k}": dict(s) for (m, k), s in sorted(stats.items())}
        args.out.write_text(
            json.dumps(
                {"machine": info, "summary": summary, "queries": rows}, indent=1, ensure_ascii=False
            )
        )
        print(f"\nPer-query results: {args.out}")


if __name__ == "__main__":
    main()
