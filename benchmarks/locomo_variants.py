"""LoCoMo ranking variants, replayed offline from one pass of recall's own evidence.

Usage:  .venv/bin/python benchmarks/locomo_variants.py [--cache FILE]
        (5-8 minutes, seconds with a --cache written by an earlier run; LoCoMo, CC BY-NC,
        from ../shared/data/locomo, evaluation only; the store is retrieval_quality.py's)

For every LoCoMo question with evidence, the evidence recall works from is gathered once
with recall's own functions (retrieval.search: the query as asked inside its project,
its terms with IDF, the BM25 candidates of the shipped MATCH, the embedded query with
the scope's common words left out, every turn's cosine and IDF-weighted coverage).
Each variant then re-ranks the conversation's turns from that evidence, so a sweep
costs seconds instead of a full recall per question. The first row replays the shipped
rule (conversation order included: each session is a thread, retrieval/threads.py); it
must agree with retrieval_quality.py's measured R@10 to the third decimal, which is
what makes the other rows comparable. ``thread_share`` was chosen on conversations 0-4.

R@10 is reported over all 1,982 questions, categories 1-4 (1,536), conversations 0-4
(where the variants were compared) and 5-9 (held out). Priors are equal for every turn
(same age, confidence and use), so ranking by similarity is what recall does here.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("MEMORY_LAYER_HOME", tempfile.mkdtemp(prefix="ml-bench-quality-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from retrieval_quality import LOCOMO, TUNED_ON, locomo_questions, locomo_store  # noqa: E402

from memory_layer.config import load_config  # noqa: E402
from memory_layer.embed import get_embedder  # noqa: E402
from memory_layer.retrieval import search  # noqa: E402
from memory_layer.retrieval.query import as_query, within_project  # noqa: E402
from memory_layer.retrieval.scoring import fuse  # noqa: E402
from memory_layer.retrieval.vectors import vector_index  # noqa: E402

K = 10
POOL = 50  # retrieval.candidates
MIN_SIMILARITY = 0.02  # retrieval.min_similarity
# retrieval.thread_share is the best of these on conversations 0-4 (0.8).
SHARES = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
# rowid -> the rowid of the next turn of its thread (the stored thread/position).
NEXT: dict[int, int] = {}


@dataclass
class Case:
    """One question and the evidence recall has for every turn of its conversation."""

    conversation: int
    category: int
    evidence: list[str]
    bm25: dict[int, float]  # rowid -> BM25 of the shipped MATCH
    cosine: dict[int, float]  # rowid -> calibrated cosine with the embedded query
    coverage: dict[int, float]  # IDF-weighted share of the query's terms
    known: dict[int, float]  # the same over the terms some memory holds


def gather(db, cfg, embedder) -> tuple[list[Case], dict[int, tuple[str, str]]]:
    turns = {r: (i, t) for r, i, t in db.execute("SELECT rowid, id, text FROM memories")}
    places = {
        (thread, position): rowid
        for rowid, thread, position in db.execute(
            "SELECT rowid, thread, position FROM memories WHERE thread IS NOT NULL"
        )
    }
    NEXT.update(
        {rowid: places[(t, p + 1)] for (t, p), rowid in places.items() if (t, p + 1) in places}
    )
    index = vector_index(db, embedder.model_id, getattr(embedder, "dim", None))
    share = float(cfg["retrieval"]["vector_common_share"])
    cases = []
    for number, project, qa, evidence in locomo_questions(json.loads(LOCOMO.read_text())):
        scope = search.Scope.for_project(project)
        query = within_project(as_query(qa["question"]), scope.single_project())
        terms = search.query_term_weights(db, query)
        bm25 = search.keyword_candidates(db, query, scope, 100_000, terms)
        text, _ = search.vector_query(db, query, terms, scope, share)
        hits, _ = index.search_scope(
            embedder.embed([text])[0], projects=list(scope.projects), limit=100_000
        )
        known = [t for t in terms if t.share > 0]
        cases.append(
            Case(
                number,
                qa["category"],
                evidence,
                bm25,
                dict(hits),
                {r: search.coverage(terms, turns[r][1]) for r, _ in hits},
                {r: search.coverage(known, turns[r][1]) if known else 0.0 for r, _ in hits},
            )
        )
    return cases, turns


Ranker = Callable[[Case], dict[int, float]]


def threaded(base: Ranker, share: float) -> Ranker:
    """The shipped rule (retrieval/threads.py): the next turn of every candidate (by its
    stored thread and position) is scored too, and gets ``share`` of its predecessor's
    own similarity when that is more than its own (never along a chain)."""

    def rank(case: Case) -> dict[int, float]:
        own = base(case)
        for rowid in list(own):
            reply = NEXT.get(rowid)
            if reply is not None and reply not in own:
                # Not a keyword candidate (it would be in ``own``): vector evidence only.
                own[reply] = fuse(0.0, search.vector_similarity(case.cosine[reply]))
        out = dict(own)
        # Every scored turn lends to its scored successor (an added next turn may be the
        # predecessor of a candidate), from its own similarity: never along a chain.
        for rowid, similarity in own.items():
            reply = NEXT.get(rowid)
            if reply in own:
                out[reply] = max(own[reply], share * similarity)
        return {r: v for r, v in out.items() if v >= MIN_SIMILARITY}

    return rank


def fused(
    power: float = 2.0,
    keyword_weight: float = 1.0,
    vector_weight: float = 1.0,
    known_only: bool = False,
    pool: int = POOL,
) -> Ranker:
    """recall's similarity: noisy-OR of BM25 (relative to the best) × coverage^power and
    the rescaled cosine, over the top ``pool`` of each side (search._score_candidates)."""

    def rank(case: Case) -> dict[int, float]:
        by_bm25 = sorted(case.bm25, key=lambda r: -case.bm25[r])[:pool]
        nearest = sorted(case.cosine, key=lambda r: -case.cosine[r])[:pool]
        best = max((case.bm25[r] for r in by_bm25), default=0.0)
        cover = case.known if known_only else case.coverage
        out = {}
        for rowid in {*by_bm25, *nearest}:
            keyword = 0.0
            if rowid in case.bm25 and best > 0:
                keyword = case.bm25[rowid] / best * cover[rowid] ** (power - 1) * cover[rowid]
            vector = search.vector_similarity(case.cosine[rowid])
            similarity = fuse(keyword, vector, keyword_weight, vector_weight)
            if similarity >= 0.02:  # retrieval.min_similarity
                out[rowid] = similarity
        return out

    return rank


def rrf(k: int = 60, vector_weight: float = 1.0) -> Ranker:
    """Reciprocal rank fusion of the keyword ranking (BM25 × coverage²) and the vector one."""

    def rank(case: Case) -> dict[int, float]:
        best = max(case.bm25.values(), default=0.0)
        by_keyword = sorted(
            case.bm25, key=lambda r: -(case.bm25[r] / best) * case.coverage[r] ** 2
        )[:POOL]
        nearest = sorted(case.cosine, key=lambda r: -case.cosine[r])[:POOL]
        out: dict[int, float] = {}
        for place, rowid in enumerate(by_keyword):
            out[rowid] = out.get(rowid, 0.0) + 1 / (k + place + 1)
        for place, rowid in enumerate(nearest):
            out[rowid] = out.get(rowid, 0.0) + vector_weight / (k + place + 1)
        return out

    return rank


def questions_demoted(base: Ranker, factor: float, turns: dict) -> Ranker:
    """A turn that is itself a question (ends with "?") keeps ``factor`` of its similarity."""

    def rank(case: Case) -> dict[int, float]:
        found = base(case)
        return {
            r: s * (factor if turns[r][1].rstrip().endswith("?") else 1.0) for r, s in found.items()
        }

    return rank


def recall_at_k(cases: list[Case], ranker: Ranker, turns: dict) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for case in cases:
        found = ranker(case)
        best = max(found.values(), default=0.0)
        # retrieval.relative_floor: under 30% of the best similarity ranks after the rest.
        order = sorted(found, key=lambda r: (found[r] < 0.3 * best, -found[r], turns[r][0]))
        top = {turns[r][0].split(":", 1)[1] for r in order[:K]}
        share = sum(1 for e in case.evidence if e in top) / len(case.evidence)
        groups = (
            "all",
            "1-4" if case.category != 5 else "5",
            "0-4" if case.conversation < TUNED_ON else "5-9",
        )
        for group in groups:
            total = sums.setdefault(group, [0.0, 0])
            total[0] += share
            total[1] += 1
    return {group: total[0] / total[1] for group, total in sums.items()}


def variants(turns: dict) -> list[tuple[str, Ranker]]:
    before = fused()
    return [
        ("shipped (coverage², weights 1/1, pool 50, thread_share 0.8)", threaded(before, 0.8)),
        ("thread_share 0 (the rule off; the ranking before it)", before),
        *((f"thread_share {share}", threaded(before, share)) for share in SHARES),
        ("thread_share 0.8, coverage^1 (linear)", threaded(fused(power=1), 0.8)),
        ("thread_share 0.8, coverage^1.5", threaded(fused(power=1.5), 0.8)),
        (
            "thread_share 0.8, question turns x0.8",
            threaded(questions_demoted(before, 0.8, turns), 0.8),
        ),
        ("thread_share 0.8, candidate pool 100", threaded(fused(pool=100), 0.8)),
        ("coverage^1 (linear), no threads", fused(power=1)),
        ("coverage over known terms, no threads", fused(known_only=True)),
        ("RRF k=10, no threads", rrf(10)),
    ]


def main() -> None:
    cfg = load_config()
    embedder = get_embedder(cfg)
    if embedder is None:
        sys.exit("The embedding model did not load; run `memory-layer doctor`.")
    db = locomo_store(json.loads(LOCOMO.read_text()), embedder)
    start = time.time()
    cache = Path(sys.argv[sys.argv.index("--cache") + 1]) if "--cache" in sys.argv else None
    if cache is not None and cache.exists():
        # Evidence gathered by an earlier run on the same store and code (--cache FILE).
        cases, turns, after = pickle.loads(cache.read_bytes())
        NEXT.update(after)
    else:
        cases, turns = gather(db, cfg, embedder)
        if cache is not None:
            cache.write_bytes(pickle.dumps((cases, turns, NEXT)))
    print(f"evidence of {len(cases)} questions gathered in {time.time() - start:.0f}s\n")
    print("| variant | all | categories 1-4 | conversations 0-4 | conversations 5-9 |")
    print("|---|---:|---:|---:|---:|")
    for label, ranker in variants(turns):
        r = recall_at_k(cases, ranker, turns)
        print(f"| {label} | {r['all']:.3f} | {r['1-4']:.3f} | {r['0-4']:.3f} | {r['5-9']:.3f} |")


if __name__ == "__main__":
    main()
