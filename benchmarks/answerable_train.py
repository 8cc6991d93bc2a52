"""Train and evaluate the "nothing matches" verifier (memory_layer/retrieval/answerable.py).

Usage:  .venv/bin/python benchmarks/answerable_train.py [--write] [--folds 5] [--out FILE]

Data (all committed, none from LoCoMo):
- benchmarks/data/instructions/: 866 answerable queries (question, paraphrase, identifier)
  about 314 memories of 20 public repositories, the 48 unanswerable questions written with
  them, and distractors.jsonl: 160 more unanswerable questions about the same 20
  repositories (8 each) that no memory answers;
- benchmarks/data/instructions/nonsense.jsonl: 40 prompts with nothing to find (keyboard
  mash, made-up words, chatter such as "thanks!", questions from outside software), spread
  over the same 20 projects;
- benchmarks/data/coding_memories.jsonl: 432 answerable queries over 9 projects + global.

Every query runs through retrieval.search.rank_with_evidence (what recall computes before
its decision), hybrid and keyword-only, plus the prompt hook's own selection with the
verifier off. The verifier is a logistic regression (numpy, Newton steps, L2, classes
balanced) over answerable.FEATURES, one for hybrid and one for keyword-only recall.

Evaluation is by repository: the projects are split into ``--folds`` groups, and every
query is scored by a model trained without its project's queries. The thresholds are
chosen on each training split by the rules below and applied to the held-out split:
- recall (``retrieval.min_answer``): the highest threshold that keeps the training split's
  answerable hit@8 within RECALL_HIT_LOSS of its value without the verifier;
- hook (``hooks.min_answer``): the lowest threshold at which the hook injects anything for
  at most HOOK_FALSE_ANSWERS of the training split's unanswerable questions.
``--write`` fits both models on everything and writes answerable_weights.py with the
thresholds the same rules choose on all data, as anchors that map them onto
answerable.RECALL_POINT and HOOK_POINT (the defaults of the two settings).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HOME = tempfile.mkdtemp(prefix="ml-bench-answerable-")
os.environ["MEMORY_LAYER_HOME"] = HOME
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from memory_layer.config import load_config  # noqa: E402
from memory_layer.embed import get_embedder  # noqa: E402
from memory_layer.hooks.inject import plan_prompt, prompt_query  # noqa: E402
from memory_layer.models import utcnow  # noqa: E402
from memory_layer.retrieval.answerable import FEATURES, HOOK_POINT, RECALL_POINT  # noqa: E402
from memory_layer.retrieval.search import Scope, rank_with_evidence  # noqa: E402
from memory_layer.storage.db import open_db  # noqa: E402
from memory_layer.transfer import import_records, read_lines  # noqa: E402

DATA = ROOT / "benchmarks" / "data"
INSTRUCTIONS = DATA / "instructions"
WEIGHTS = ROOT / "memory_layer" / "retrieval" / "answerable_weights.py"
LIMIT = 8
MODES = ("hybrid", "keyword")
L2 = 1.0  # ridge penalty on the standardised coefficients
RECALL_HIT_LOSS = 0.01
HOOK_FALSE_ANSWERS = 0.08  # below the goal of 0.10, so a held-out split has some margin
THRESHOLDS = [round(float(x), 3) for x in np.linspace(0.01, 0.99, 99)]


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def instruction_store(config: dict[str, Any], embedder: Any) -> Any:
    conn = open_db(Path(HOME) / "instructions.db")
    with (INSTRUCTIONS / "memories.jsonl").open("rb") as stream:
        records = read_lines(stream, int(config["remember"]["max_chars"]))
    import_records(conn, records, embedder=embedder)
    return conn


def coding_store(embedder: Any) -> tuple[Any, list[dict[str, Any]]]:
    conn = open_db(Path(HOME) / "coding.db")
    rows = load_jsonl(DATA / "coding_memories.jsonl")
    records = [
        (i, {"id": r["id"], "text": r["text"], "category": r["category"],
             "project": r["project"], "tags": r.get("tags", []), "source": "bench",
             "confidence": 0.8})
        for i, r in enumerate(rows, 1)
    ]
    import_records(conn, records, embedder=embedder)
    queries = [
        {"id": f"{r['id']}:{kind}", "kind": kind, "project": r["project"], "query": text,
         "target": r["id"], "set": "coding"}
        for r in rows
        for kind, text in r["queries"].items()
    ]
    return conn, queries


def measure(conn: Any, config: dict[str, Any], embedder: Any, q: dict[str, Any]) -> dict[str, Any]:
    """Features and outcomes of one query in both modes, the verifier off."""
    row: dict[str, Any] = {k: q.get(k) for k in ("id", "kind", "project", "query", "target", "set")}
    row["label"] = int(q["target"] is not None)
    for mode in MODES:
        model = embedder if mode == "hybrid" else None
        ranked, evidence = rank_with_evidence(
            conn, q["query"], scope=Scope.for_project(q["project"]), config=config,
            limit=LIMIT, embedder=model,
        )
        ids = [item.memory.id for item in ranked[:LIMIT]]
        plan = plan_prompt(
            conn, prompt_query(q["query"], config), q["project"], config, shown=set(),
            embedder=model, now=utcnow(), limit=int(config["hooks"]["inject_limit"]),
        )
        hooked = [memory.id for memory, _ in plan.chosen]
        row[mode] = {
            "features": evidence.features(),
            "certain": evidence.certain(),
            "hit8": int(q["target"] in ids) if q["target"] else 0,
            "hook_any": int(bool(hooked)),
            "hook_hit": int(q["target"] in hooked) if q["target"] else 0,
        }
    return row


def fit(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Logistic regression on standardised features, classes weighted to balance."""
    # A neutral feature (NaN: too few memories for a z-score) counts as the mean.
    mean = np.nanmean(x, axis=0)
    x = np.where(np.isnan(x), mean, x)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    weights = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    beta = np.zeros(z.shape[1])
    penalty = np.diag([0.0] + [L2] * x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ beta, -30, 30)))
        gradient = z.T @ (weights * (p - y)) + penalty @ beta
        hessian = (z * (weights * p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return {"intercept": float(beta[0]), "coef": beta[1:].tolist(), "mean": mean.tolist(),
            "scale": scale.tolist()}


def predict(model: dict[str, Any], x: np.ndarray, certain: np.ndarray) -> np.ndarray:
    """The model's probabilities; 1 where the evidence needs no model (as shipped)."""
    x = np.where(np.isnan(x), np.array(model["mean"]), x)
    z = model["intercept"] + ((x - np.array(model["mean"])) / np.array(model["scale"])) @ np.array(
        model["coef"]
    )
    return np.where(certain, 1.0, 1 / (1 + np.exp(-np.clip(z, -30, 30))))


def outcomes(rows: list[dict[str, Any]], mode: str, p: np.ndarray, t: float) -> dict[str, float]:
    """At threshold t: answerable hit@8 and hook target rate, unanswerable acceptance."""
    acc = p >= t
    ans = [i for i, r in enumerate(rows) if r["label"]]
    # On-topic unanswerable questions only: nonsense is easy and would dilute the rate.
    una = [i for i, r in enumerate(rows) if r["kind"] == "unanswerable"]

    def rate(idx: list[int], value: Any) -> float:
        return sum(value(i) for i in idx) / len(idx) if idx else float("nan")

    return {
        "hit8": rate(ans, lambda i: rows[i][mode]["hit8"] and acc[i]),
        "hit8_off": rate(ans, lambda i: rows[i][mode]["hit8"]),
        "hook_hit": rate(ans, lambda i: rows[i][mode]["hook_hit"] and acc[i]),
        "hook_hit_off": rate(ans, lambda i: rows[i][mode]["hook_hit"]),
        "recall_false": rate(una, lambda i: acc[i]),
        "hook_false": rate(una, lambda i: rows[i][mode]["hook_any"] and acc[i]),
        "hook_false_off": rate(una, lambda i: rows[i][mode]["hook_any"]),
    }


def thresholds(rows: list[dict[str, Any]], mode: str, p: np.ndarray) -> tuple[float, float]:
    """(recall, hook) thresholds chosen by the rules in the module docstring."""
    recall_t = THRESHOLDS[0]
    for t in THRESHOLDS:
        o = outcomes(rows, mode, p, t)
        if o["hit8"] >= o["hit8_off"] - RECALL_HIT_LOSS:
            recall_t = t
    hook_t = THRESHOLDS[-1]
    for t in reversed(THRESHOLDS):
        if outcomes(rows, mode, p, t)["hook_false"] <= HOOK_FALSE_ANSWERS:
            hook_t = t
    return recall_t, hook_t


def matrix(rows: list[dict[str, Any]], mode: str) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([r[mode]["features"] for r in rows], dtype=float),
            np.array([r["label"] for r in rows], dtype=float))


def certain(rows: list[dict[str, Any]], mode: str) -> np.ndarray:
    return np.array([r[mode]["certain"] for r in rows], dtype=bool)


def cross_validate(rows: list[dict[str, Any]], mode: str, folds: int) -> dict[str, Any]:
    """Held-out probabilities and the decisions each split's own thresholds make."""
    projects = sorted({r["project"] or "(global)" for r in rows})
    fold_of = {p: i % folds for i, p in enumerate(projects)}
    p_out = np.zeros(len(rows))
    recall_acc = np.zeros(len(rows), dtype=bool)
    hook_acc = np.zeros(len(rows), dtype=bool)
    chosen = []
    for k in range(folds):
        train = [i for i, r in enumerate(rows) if fold_of[r["project"] or "(global)"] != k]
        test = [i for i, r in enumerate(rows) if fold_of[r["project"] or "(global)"] == k]
        x, y = matrix([rows[i] for i in train], mode)
        model = fit(x, y)
        sure = certain([rows[i] for i in train], mode)
        t_recall, t_hook = thresholds([rows[i] for i in train], mode, predict(model, x, sure))
        chosen.append((t_recall, t_hook))
        xt, _ = matrix([rows[i] for i in test], mode)
        pt = predict(model, xt, certain([rows[i] for i in test], mode))
        for j, i in enumerate(test):
            p_out[i] = pt[j]
            recall_acc[i] = pt[j] >= t_recall
            hook_acc[i] = pt[j] >= t_hook
    return {"p": p_out, "recall_acc": recall_acc, "hook_acc": hook_acc, "thresholds": chosen}


def auc(p: np.ndarray, y: np.ndarray) -> float:
    pos, neg = p[y == 1], p[y == 0]
    return float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def report(rows: list[dict[str, Any]], mode: str, cv: dict[str, Any]) -> dict[str, Any]:
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        source = r["set"] or "instructions"
        groups[f"{source}/{r['kind']}"].append(i)
        if r["kind"] != "nonsense":
            groups["answerable" if r["label"] else "unanswerable"].append(i)
    out = {}
    for name, idx in sorted(groups.items()):
        n = len(idx)
        label = rows[idx[0]]["label"]
        if label:
            out[name] = {
                "n": n,
                "hit8_off": sum(rows[i][mode]["hit8"] for i in idx) / n,
                "hit8": sum(rows[i][mode]["hit8"] and cv["recall_acc"][i] for i in idx) / n,
                "hook_hit_off": sum(rows[i][mode]["hook_hit"] for i in idx) / n,
                "hook_hit": sum(rows[i][mode]["hook_hit"] and cv["hook_acc"][i] for i in idx) / n,
            }
        else:
            out[name] = {
                "n": n,
                "recall_any": sum(cv["recall_acc"][i] for i in idx) / n,
                "hook_any_off": sum(rows[i][mode]["hook_any"] for i in idx) / n,
                "hook_any": sum(rows[i][mode]["hook_any"] and cv["hook_acc"][i] for i in idx) / n,
            }
    _, y = matrix(rows, mode)
    return {"auc": auc(cv["p"], y), "groups": out, "thresholds": cv["thresholds"]}


def write_weights(models: dict[str, dict[str, Any]], chosen: dict[str, tuple[float, float]],
                  n: int) -> None:
    if any(not math.isfinite(v) for m in models.values() for v in (m["intercept"], *m["coef"])):
        sys.exit("the fit did not converge (a coefficient is not finite); nothing written")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    lines = [
        '"""Coefficients of the "nothing matches" verifier (retrieval/answerable.py).',
        "",
        f"Generated by benchmarks/answerable_train.py --write at commit {commit}, from {n}",
        "queries (benchmarks/data/instructions/, its distractors.jsonl, coding_memories.jsonl).",
        "Thresholds the same rules chose on all the data: "
        + ", ".join(f"{m} recall {c[0]} hook {c[1]}" for m, c in chosen.items()) + ".",
        'Do not edit by hand: rerun the script."""',
        "",
    ]
    for mode, name in (("hybrid", "HYBRID"), ("keyword", "KEYWORD")):
        m = models[mode]
        weights = {f: round(c, 6) for f, c in zip(FEATURES, m["coef"], strict=True)}
        lines.append(f"{name}: dict = {{")
        lines.append(f'    "intercept": {m["intercept"]:.6f},')
        lines.append(f'    "weights": {weights!r},')
        lines.append(f'    "mean": {[round(v, 6) for v in m["mean"]]!r},')
        lines.append(f'    "scale": {[round(v, 6) for v in m["scale"]]!r},')
        t_recall, t_hook = chosen[mode]
        anchors = [(0.0, 0.0), (t_recall, RECALL_POINT), (t_hook, HOOK_POINT), (1.0, 1.0)]
        lines.append(f'    "anchors": {anchors!r},')
        lines.append("}")
    WEIGHTS.write_text("\n".join(lines) + "\n")
    print(f"wrote {WEIGHTS}")


SWEEP = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def print_sweep(rows: list[dict[str, Any]], mode: str, p: np.ndarray) -> None:
    """Recall's operating curve on held-out probabilities (each query scored by a model
    trained without its project): on-topic unanswerable questions answered, answerable
    hit@8 (of which paraphrases), at each raw probability threshold."""
    para = [i for i, r in enumerate(rows) if r["kind"] == "paraphrase"]
    print(f"  {mode} recall sweep (held out): threshold, false answers, hit@8, paraphrase hit@8")
    for t in SWEEP:
        o = outcomes(rows, mode, p, t)
        hits = sum(1 for i in para if rows[i][mode]["hit8"] and p[i] >= t) / max(1, len(para))
        print(f"    {t:<5} {o['recall_false']:.3f}  {o['hit8']:.3f}  {hits:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write answerable_weights.py")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="per-query features and outcomes as JSON")
    parser.add_argument("--rows", type=Path, help="reuse the rows of an earlier --out")
    parser.add_argument("--sweep", action="store_true",
                        help="recall's trade-off at every threshold, on held-out probabilities")
    args = parser.parse_args()
    if args.rows:
        rows = json.loads(args.rows.read_text())["rows"]
    else:
        rows = collect()
    if args.out:
        args.out.write_text(json.dumps({"rows": rows}, ensure_ascii=False))
    results = {}
    for mode in MODES:
        cv = cross_validate(rows, mode, args.folds)
        results[mode] = report(rows, mode, cv)
        print(f"\n{mode}: held-out AUC {results[mode]['auc']:.3f}; thresholds per split "
              f"(recall, hook) {results[mode]['thresholds']}")
        for name, s in results[mode]["groups"].items():
            cells = "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in s.items())
            print(f"  {name:<28} {cells}")
        if args.sweep:
            print_sweep(rows, mode, cv["p"])
    if args.write:
        models, chosen = {}, {}
        for mode in MODES:
            x, y = matrix(rows, mode)
            models[mode] = fit(x, y)
            chosen[mode] = thresholds(rows, mode, predict(models[mode], x, certain(rows, mode)))
        write_weights(models, chosen, len(rows))
        print("thresholds on all data (recall, hook):", chosen)


def collect() -> list[dict[str, Any]]:
    config = load_config()
    config["retrieval"]["min_answer"] = 0.0
    config["hooks"]["min_answer"] = 0.0
    embedder = get_embedder(config)
    if embedder is None:
        sys.exit("The embedding model did not load; run `memory-layer doctor`.")
    queries = [
        q
        for name in ("queries.jsonl", "distractors.jsonl", "nonsense.jsonl")
        for q in load_jsonl(INSTRUCTIONS / name)
    ]
    conn = instruction_store(config, embedder)
    rows = [measure(conn, config, embedder, q) for q in queries]
    coding, coding_queries = coding_store(embedder)
    rows += [measure(coding, copy.deepcopy(config), embedder, q) for q in coding_queries]
    return rows


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(HOME, ignore_errors=True)
