"""Where to put the UserPromptSubmit relevance floor: measured, not guessed.

Loads the 144 memories of ``benchmarks/data/coding_memories.jsonl`` into a fresh
store, then sends two kinds of prompts through the same recall and gate the hook
uses (``memory_layer.retrieval.relevance``):

* each memory's ``question`` and ``paraphrase`` queries (realistic prompts whose
  right answer is known): how often the right memory passes the floor, and how
  many other memories pass with it;
* chit-chat and generic requests that no memory answers ("thanks!", "continue",
  "write a haiku"): how many memories they would inject (should be none).

Run: ``.venv/bin/python benchmarks/hooks_floor.py`` (keyword-only and with the
bundled model; about a minute, most of it embedding the memories).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHATTER = [
    "thanks!",
    "ok",
    "great, that works",
    "yes please",
    "continue",
    "looks good to me, go ahead",
    "can you explain what you just did?",
    "write a haiku about autumn",
    "what time is it in Tokyo?",
    "undo that last change",
    "let's take a break",
    "perfect, thank you so much",
    "hmm, try again",
    "summarize the conversation so far",
    "rename the variable foo to bar in this function",
    "add a docstring to this function",
]


def load(conn: Any, config: dict[str, Any], embedder: Any) -> list[dict[str, Any]]:
    from memory_layer.memories import remember

    rows = [json.loads(line) for line in (ROOT / "benchmarks/data/coding_memories.jsonl").open()]
    for row in rows:
        row["stored"] = remember(
            conn,
            row["text"],
            config=config,
            category=row["category"],
            project=row["project"],
            source="import",
            embedder=embedder,
            dedupe=False,
        ).memory.id
    return rows


def run(mode: str, grid: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from memory_layer.config import load_config
    from memory_layer.embed import get_embedder
    from memory_layer.retrieval.query import parse_query
    from memory_layer.retrieval.relevance import above_floor
    from memory_layer.retrieval.search import Scope, recall
    from memory_layer.storage.db import open_db

    base = load_config()
    embedder = get_embedder(base) if mode == "hybrid" else None
    conn = open_db()
    rows = load(conn, base, embedder)
    projects = sorted({r["project"] for r in rows if r["project"]})
    prompts: list[tuple[str, str | None, str | None]] = []
    for row in rows:
        for kind in ("question", "paraphrase"):
            prompts.append((row["queries"][kind], row["project"] or projects[0], row["stored"]))
    results = []
    cache = {}
    for text, project, _target in prompts + [(c, p, None) for c in CHATTER for p in projects[:3]]:
        query = parse_query(text)
        cache[(text, project)] = query, recall(
            conn, query, scope=Scope.for_project(project), config=base, limit=15, embedder=embedder
        )
    for settings in grid:
        config = copy.deepcopy(base)
        config["hooks"].update(settings)
        hit = {"question": 0, "paraphrase": 0}
        total = {"question": 0, "paraphrase": 0}
        noise = 0
        for i, (text, project, target) in enumerate(prompts):
            kind = "question" if i % 2 == 0 else "paraphrase"
            query, found = cache[(text, project)]
            passed = [s.memory.id for s in above_floor(found, query, config)][:5]
            total[kind] += 1
            hit[kind] += target in passed
            noise += len([m for m in passed if m != target])
        chatter = 0
        for c in CHATTER:
            for p in projects[:3]:
                query, found = cache[(c, p)]
                chatter += len(above_floor(found, query, config)[:5])
        results.append(
            {
                "mode": mode,
                **settings,
                "question_hit": round(hit["question"] / total["question"], 3),
                "paraphrase_hit": round(hit["paraphrase"] / total["paraphrase"], 3),
                "others_per_prompt": round(noise / len(prompts), 2),
                "chatter_injected": chatter,
                "chatter_prompts": len(CHATTER) * 3,
            }
        )
    conn.close()
    return results


def main() -> None:
    grids = {
        "keyword-only": [
            {"min_keyword": k, "min_terms": t, "min_score": 0.3}
            for k in (0.1, 0.15, 0.25, 0.5)
            for t in (2, 3)
        ],
        "hybrid": [
            {"min_cosine": c, "min_keyword": 0.15, "min_terms": 2, "min_score": 0.3}
            for c in (0.3, 0.35, 0.4, 0.42, 0.45, 0.5)
        ],
    }
    for mode, grid in grids.items():
        with tempfile.TemporaryDirectory() as home:
            os.environ["MEMORY_LAYER_HOME"] = home
            if mode == "keyword-only":
                Path(home, "config.yaml").write_text("embedding:\n  enabled: false\n")
            from memory_layer import config as config_module
            from memory_layer.embed import reset_embedder
            from memory_layer.retrieval.vectors import clear_cache

            config_module._cache.clear()
            reset_embedder()
            clear_cache()
            for line in run(mode, grid):
                print(json.dumps(line))


if __name__ == "__main__":
    main()
