"""Train the capture classifier (memory_layer/capture/learned.py) and choose its thresholds.

Data: the labelled units of ``data/real_transcripts/capture_labels.jsonl`` (built by
``capture_labels.py`` from the ``tune`` and ``train`` transcripts only; the holdouts are
never read here), re-read from the cached transcripts and checked against the committed
labels. Vectors: the real all-MiniLM-L6-v2 the engine loads (cached on disk by text
hash, so a rerun embeds nothing new).

Model: a logistic regression over [MiniLM vector, role, rule-candidate flag, CJK share]
(numpy, Newton steps, L2, classes balanced) says whether a unit states a lesson; a
softmax head over the same features, trained on the positives, names its category.

Thresholds by **leave-one-transcript-out** cross-validation: each transcript's units
are scored by a model trained without it, and the whole capture path
(``hooks.capture.transcript_candidates`` with the fold's model pinned, tool signals
included) is run on it for every (keep, admit) pair on a grid; the candidates are scored
against its gold lessons with ``capture_real.score``. The pair chosen has the highest
pooled recall among those with pooled precision of at least ``TARGET_PRECISION``
(else the highest F0.5: precision counts double); ties go to the pair that changes
least. L2 and the external positives' weight are chosen first, by the folds' log-loss.

Usage: ``.venv/bin/python benchmarks/capture_train.py [--write] [--json]``
(``--write`` writes memory_layer/models/capture-classifier/model.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
for entry in (str(ROOT), str(BENCH)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from capture_labels import LABELS, Unit, build, training_specs  # noqa: E402
from capture_real import DEFAULT_DATA, GOLD, score, totals  # noqa: E402

from memory_layer.capture import learned  # noqa: E402

CACHE = Path("~/.cache/memory-layer/capture-train").expanduser()
TARGET_PRECISION = 0.8  # the target
# Without a point that reaches it, the best F-beta with beta 0.5: precision counts
# double, because a wrong memory is injected into later sessions (capture/extract.py).
BETA = 0.5
# (vector, structure) penalties; 1e4 on the vector leaves the structure features alone.
L2_GRID = ((3.0, 1.0), (30.0, 1.0), (1e4, 1.0))
CATEGORY_L2 = 3.0
# Rule candidates score high (most are near a lesson), sentences low (3% state one):
# both grids sit near the top. keep 0: drop nothing; admit 1.01: admit nothing.
KEEP_GRID = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95)
ADMIT_GRID = (0.9, 0.95, 0.97, 0.98, 0.99, 1.01)
# A unit that only has a lesson's keywords (capture_labels: ``by: keywords``) may merely
# mention them, but the benchmark counts it. Leaving them out (0.0) was tried: by the
# same cross-validation no (keep, admit) pair then beat the rules (precision 0.737,
# recall 0.239); with them (1.0) keep 0.9 / admit 0.95 reached 0.857 / 0.239.
KEYWORD_WEIGHT = 1.0
NEWTON_STEPS = 30
SOFTMAX_STEPS = 300


# --- data ---------------------------------------------------------------------------


def load_units(data: Path) -> list[Unit]:
    """The units with their committed labels; stops if a transcript no longer gives them."""
    units = build(data)
    committed = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    rebuilt = [u.row() for u in units]
    if committed != rebuilt:
        raise SystemExit(
            f"{LABELS} does not match what the cached transcripts and gold.json give now: "
            "rerun benchmarks/capture_labels.py (and commit the labels)."
        )
    return units


def embed_all(texts: list[str]) -> np.ndarray:
    """MiniLM vectors for ``texts``, from the disk cache where possible."""
    from memory_layer.config import DEFAULTS
    from memory_layer.embed import load_embedder

    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / "minilm.npz"
    cached: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path) as stored:
            cached = {key: stored[key] for key in stored.files}
    keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in cached}.items())
    if missing:
        embedder, status = load_embedder(DEFAULTS)
        if embedder is None or embedder.model_id != learned_model_id():
            raise SystemExit(f"MiniLM is needed to train: {status.reason}")
        start = time.perf_counter()
        vectors = embedder.embed([t for _k, t in missing])
        print(f"embedded {len(missing)} texts in {time.perf_counter() - start:.1f} s")
        cached.update({k: v for (k, _t), v in zip(missing, vectors, strict=True)})
        np.savez(path, **cached)
    return np.stack([cached[k] for k in keys]).astype(np.float32)


# Memory-shaped sentences from outside the transcripts: what a stored lesson reads like.
# The instruction memories are atomic rules split from 20 public repositories'
# CLAUDE.md/AGENTS.md files; the coding and parallel sets are memories written for the
# retrieval benchmarks (the parallel set in English and Chinese). They add positives
# (and categories) only: the negatives all come from the transcripts.
EXTERNAL = (
    ("instructions/memories.jsonl", ("text",)),
    ("coding_memories.jsonl", ("text",)),
    ("parallel_memories.jsonl", ("en", "zh")),
)
EXTERNAL_WEIGHTS = (0.0, 0.3)  # one external positive against a transcript unit


def external_examples() -> list[tuple[str, str]]:
    """(text, category) of every external positive."""
    out: list[tuple[str, str]] = []
    for name, fields in EXTERNAL:
        for line in (BENCH / "data" / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out += [(row[f], row["category"]) for f in fields if row.get(f)]
    return out


def external_design(texts: list[str]) -> np.ndarray:
    """External rows have no speaker, are no rule candidate and stand alone."""
    return learned.features(embed_all(texts), [learned.Sample(t, "") for t in texts])


def learned_model_id() -> str:
    from memory_layer.embedders import MINILM_ID

    return MINILM_ID


def sample(unit: Unit) -> learned.Sample:
    return learned.Sample(unit.text, unit.role, unit.kind == "candidate", unit.index, unit.count)


def design(units: list[Unit], vectors: np.ndarray) -> np.ndarray:
    return learned.features(vectors, [sample(u) for u in units])


# --- models ---------------------------------------------------------------------------


def fit_logistic(
    x: np.ndarray, y: np.ndarray, l2: tuple[float, float], sample: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Balanced, L2-penalised logistic regression by Newton steps (bias unpenalised).
    ``l2``: the penalty on the vector's dimensions and on the structure features (a
    vector penalty of 1e4 is a model of the structure alone). ``sample``: each row's
    weight before the classes are balanced."""
    n, d = x.shape
    sample = np.ones(n) if sample is None else sample
    pos = max(1e-9, float(sample[y == 1].sum()))
    neg = max(1e-9, float(sample[y == 0].sum()))
    total = pos + neg
    weights = sample * np.where(y == 1, total / (2.0 * pos), total / (2.0 * neg))
    xb = np.hstack([x, np.ones((n, 1))]).astype(np.float64)
    beta = np.zeros(d + 1)
    structure = len(learned.STRUCTURE)
    penalty = np.full(d + 1, l2[0])
    penalty[d - structure : d] = l2[1]
    penalty[-1] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(xb @ beta)))
        grad = xb.T @ (weights * (p - y)) + penalty * beta
        hess = (xb * (weights * p * (1 - p))[:, None]).T @ xb + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-6:
            break
    return beta[:-1].astype(np.float32), float(beta[-1])


def fit_softmax(x: np.ndarray, labels: list[str], l2: float) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Multinomial logistic regression on the positives (gradient descent)."""
    names = sorted(set(labels))
    if len(names) < 2:
        d = x.shape[1]
        return names, np.zeros((len(names), d), np.float32), np.zeros(len(names), np.float32)
    index = {name: i for i, name in enumerate(names)}
    y = np.zeros((len(labels), len(names)))
    y[np.arange(len(labels)), [index[name] for name in labels]] = 1.0
    w = np.zeros((len(names), x.shape[1]))
    b = np.zeros(len(names))
    rate = 0.5
    for _ in range(SOFTMAX_STEPS):
        logits = x @ w.T + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - y) / len(labels)
        w -= rate * (g.T @ x + l2 * w / len(labels))
        b -= rate * g.sum(axis=0)
    return names, w.astype(np.float32), b.astype(np.float32)


def unit_weights(units: list[Unit]) -> np.ndarray:
    return np.array([KEYWORD_WEIGHT if u.by == "keywords" else 1.0 for u in units])


@dataclass(frozen=True)
class External:
    x: np.ndarray
    categories: list[str]
    weight: float


def train(
    units: list[Unit], x: np.ndarray, l2: tuple[float, float], version: str, ext: External
) -> learned.Model:
    y = np.array([u.label for u in units], dtype=np.float64)
    sample = unit_weights(units)
    if ext.weight > 0:
        x_all = np.vstack([x, ext.x])
        y_all = np.concatenate([y, np.ones(len(ext.x))])
        sample = np.concatenate([sample, np.full(len(ext.x), ext.weight)])
    else:
        x_all, y_all = x, y
    weights, bias = fit_logistic(x_all, y_all, l2, sample)
    positive = [i for i, u in enumerate(units) if u.label and sample[i] > 0]
    names, cw, cb = fit_softmax(
        np.vstack([x[positive], ext.x]),
        [units[i].category or "context" for i in positive] + ext.categories,
        CATEGORY_L2,
    )
    return learned.Model(
        version=version,
        embedding_model=learned_model_id(),
        data_sha256=hashlib.sha256(LABELS.read_bytes()).hexdigest(),
        weights=weights,
        bias=bias,
        categories=tuple(names),
        category_weights=cw,
        category_bias=cb,
        keep=0.0,
        admit=1.01,
    )


# --- cross-validation -------------------------------------------------------------------


class CachedMiniLM:
    """The fold's embedder: vectors from the training cache, MiniLM's id."""

    dim = 384

    def __init__(self, lookup: dict[str, np.ndarray]) -> None:
        self.model_id = learned_model_id()
        self._lookup = lookup

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self._lookup]
        if missing:
            for text, vector in zip(missing, embed_all(missing), strict=True):
                self._lookup[text] = vector
        return np.stack([self._lookup[t] for t in texts]) if texts else np.zeros((0, self.dim))


def choose_l2(
    units: list[Unit], x: np.ndarray, names: list[str], ext: External
) -> tuple[tuple[tuple[float, float], float], dict]:
    """(L2, external weight) with the lowest leave-one-transcript-out balanced log-loss
    on the transcripts' own units."""
    y = np.array([u.label for u in units])
    unit_w = unit_weights(units)
    losses: dict[tuple[tuple[float, float], float], float] = {}
    for l2, weight in [(a, b) for a in L2_GRID for b in EXTERNAL_WEIGHTS]:
        total = 0.0
        for name in names:
            out = np.array([u.transcript == name for u in units])
            scored = out & (unit_w > 0)
            if not y[scored].any():
                continue  # a fold without positives says nothing about the balance
            xs = np.vstack([x[~out], ext.x])
            ys = np.concatenate([y[~out], np.ones(len(ext.x))]).astype(np.float64)
            ws = np.concatenate([unit_w[~out], np.full(len(ext.x), weight)])
            w, b = fit_logistic(xs, ys, l2, ws)
            p = np.clip(1 / (1 + np.exp(-(x[scored] @ w + b))), 1e-6, 1 - 1e-6)
            yo = y[scored]
            # balanced log-loss, so the rare positives count as much as the negatives
            pos = yo == 1
            part = -np.log(p[pos]).mean() if pos.any() else 0.0
            neg = -np.log(1 - p[~pos]).mean() if (~pos).any() else 0.0
            total += (part + neg) * scored.sum()
        losses[(l2, weight)] = total / len(units)
    best = min(losses, key=losses.get)  # type: ignore[arg-type]
    return best, losses


def cv_runs(
    specs: list[dict[str, Any]],
    units: list[Unit],
    x: np.ndarray,
    l2: tuple[float, float],
    data: Path,
    lookup: dict[str, np.ndarray], ext: External,
) -> dict[tuple[float, float], list[Any]]:
    """Per (keep, admit): each transcript captured with a model trained without it."""
    from memory_layer.capture import extract
    from memory_layer.capture.transcript import read_new_entries
    from memory_layer.config import DEFAULTS
    from memory_layer.hooks.capture import confident, transcript_candidates

    embedder = CachedMiniLM(lookup)
    runs: dict[tuple[float, float], list[Any]] = {}
    # The rules' reading of a transcript does not depend on the thresholds: read each
    # once, not once per grid point.
    plain_turns = extract.turns
    memo: dict[int, Any] = {}

    def turns_once(entries: Any) -> Any:
        if id(entries) not in memo:
            memo.clear()
            memo[id(entries)] = plain_turns(entries)
        return memo[id(entries)]

    extract.turns = turns_once
    for spec in specs:
        name = spec["name"]
        keep_rows = [i for i, u in enumerate(units) if u.transcript != name]
        fold = train([units[i] for i in keep_rows], x[keep_rows], l2, f"cv-{name}", ext)
        entries, _ = read_new_entries(data / f"{name}.jsonl", 0)
        cwd = next((e.cwd for e in entries if e.cwd), "")
        for keep in KEEP_GRID:
            for admit in ADMIT_GRID:
                learned.use_model(dataclasses.replace(fold, keep=keep, admit=admit))
                found = confident(
                    transcript_candidates(entries, tools=True, cwd=cwd, embedder=embedder),
                    DEFAULTS,
                )
                records = [
                    {
                        "text": c.text,
                        "category": c.category,
                        "status": "pending" if c.origin else "active",
                        "origin": c.origin,
                    }
                    for c in found
                ]
                runs.setdefault((keep, admit), []).append(
                    (score(spec, records), score(spec, records, strict=True))
                )
    extract.turns = plain_turns
    learned.use_model(None)
    learned._loaded.clear()
    return runs


def pick(runs: dict[tuple[float, float], list[Any]]) -> tuple[tuple[float, float], dict]:
    table = {key: totals([r for r, _s in rows]) for key, rows in runs.items()}

    def f1(t: dict) -> float:
        p, r = t["precision"], t["recall"]
        b2 = BETA * BETA
        return (1 + b2) * p * r / (b2 * p + r) if p + r else 0.0

    good = [k for k, t in table.items() if t["precision"] >= TARGET_PRECISION]
    if good:
        # Ties go to the least intervention: admit less, drop less.
        best = max(good, key=lambda k: (table[k]["recall"], table[k]["precision"], k[1], -k[0]))
    else:
        best = max(table, key=lambda k: (f1(table[k]), k[1], -k[0]))
    return best, table


def main(argv: list[str] | None = None) -> int:
    global KEYWORD_WEIGHT
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="transcript directory")
    parser.add_argument("--write", action="store_true", help="write the shipped model.json")
    parser.add_argument("--json", action="store_true", help="print the CV table as JSON")
    parser.add_argument(
        "--keyword-weight",
        type=float,
        default=KEYWORD_WEIGHT,
        help="weight of units that only have a lesson's keywords (default: left out)",
    )
    parser.add_argument(
        "--cost",
        action="store_true",
        help="only measure what judging costs: each training transcript's sentences "
        "embedded by a fresh MiniLM as one batch would be (no cache)",
    )
    args = parser.parse_args(argv)
    KEYWORD_WEIGHT = args.keyword_weight
    if args.cost:
        return cost(args.data)
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    specs = training_specs(gold)
    units = load_units(args.data)
    vectors = embed_all([u.text for u in units])
    lookup = {u.text: v for u, v in zip(units, vectors, strict=True)}
    x = design(units, vectors)
    names = [s["name"] for s in specs]
    print(f"{len(units)} units, {sum(u.label for u in units)} positive, {len(names)} transcripts")
    examples = external_examples()
    ext_x = external_design([t for t, _c in examples])
    ext = External(ext_x, [c for _t, c in examples], 0.0)
    (l2, weight), losses = choose_l2(units, x, names, ext)
    ext = dataclasses.replace(ext, weight=weight)
    print("leave-one-transcript-out log-loss by (L2, external weight):")
    print("   ", {k: round(float(v), 4) for k, v in losses.items()})
    print(f"chosen L2 {l2}, external weight {weight} ({len(examples)} external positives)")
    runs = cv_runs(specs, units, x, l2, args.data, lookup, ext)
    (keep, admit), table = pick(runs)
    rules = table[(0.0, 1.01)]
    chosen = table[(keep, admit)]
    strict = totals([s for r, s in runs[(keep, admit)] if r.split == "tune"])
    print(f"rules alone (CV):  {_line(rules)}")
    print(f"chosen keep {keep} admit {admit}: {_line(chosen)}")
    print(f"  tune_strict: {_line(strict)}")
    for split in sorted({s['split'] for s in specs}):
        part = totals([r for r, _s in runs[(keep, admit)] if r.split == split])
        alone = totals([r for r, _s in runs[(0.0, 1.01)] if r.split == split])
        print(f"  {split}: {_line(part)}   (rules alone: {_line(alone)})")
    foreign = totals([r for r, _s in runs[(keep, admit)] if r.language != "en"])
    alone = totals([r for r, _s in runs[(0.0, 1.01)] if r.language != "en"])
    print(f"  non_english: {_line(foreign)}   (rules alone: {_line(alone)})")
    if args.json:
        print(json.dumps({f"{k[0]}/{k[1]}": v for k, v in table.items()}, indent=1))
    else:
        for key in sorted(table):
            print(f"    keep {key[0]:<4} admit {key[1]:<4} {_line(table[key])}")
    if args.write:
        model = train(units, x, l2, _version(), ext)
        model = dataclasses.replace(model, keep=keep, admit=admit)
        write(model, names, l2, weight, chosen, rules)
    return 0


def cost(data: Path) -> int:
    """Wall time of embedding what a judge embeds per transcript (sentences capped at
    ``learned.MAX_SENTENCES``, newest kept), by the real MiniLM, no cache."""
    from memory_layer.capture.extract import turns
    from memory_layer.capture.learned import MAX_SENTENCES, _admissible
    from memory_layer.capture.transcript import read_new_entries
    from memory_layer.config import DEFAULTS
    from memory_layer.embed import load_embedder

    embedder, status = load_embedder(DEFAULTS)
    if embedder is None:
        raise SystemExit(f"MiniLM is needed: {status.reason}")
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    rows = []
    for spec in training_specs(gold):
        entries, _ = read_new_entries(data / f"{spec['name']}.jsonl", 0)
        texts = [
            t for _e, turn in turns(entries) if turn for raw in turn.sentences
            if (t := _admissible(raw))
        ][-MAX_SENTENCES:]
        start = time.perf_counter()
        embedder.embed(texts)
        rows.append((spec["name"], len(texts), time.perf_counter() - start))
    for name, n, seconds in rows:
        print(f"{name:22} {n:4} sentences  {seconds * 1000:7.0f} ms")
    n_all = sum(r[1] for r in rows)
    s_all = sum(r[2] for r in rows)
    print(f"all: {n_all} sentences in {s_all:.1f} s, {s_all / max(1, n_all) * 1000:.1f} ms each")
    return 0


def _line(t: dict) -> str:
    return (
        f"records {t['records']:3}  matched {t['matched']:2}/{t['lessons']:2}  precision "
        f"{t['precision']:.3f}  recall {t['recall']:.3f}  active {t['active_recall']:.3f}"
    )


def _version() -> str:
    digest = hashlib.sha256(LABELS.read_bytes()).hexdigest()[:8]
    return f"{learned.FORMAT}-{digest}"


def write(
    model: learned.Model,
    names: list[str],
    l2: tuple[float, float],
    weight: float,
    cv: dict,
    rules: dict,
) -> None:
    def floats(values: Any) -> list[float]:
        return [round(float(v), 6) for v in np.asarray(values).ravel()]

    data = {
        "format": learned.FORMAT,
        "version": model.version,
        "about": "benchmarks/capture_train.py --write; do not edit by hand",
        "embedding_model": model.embedding_model,
        "data": "benchmarks/data/real_transcripts/capture_labels.jsonl",
        "data_sha256": model.data_sha256,
        "trained_on": names,
        "l2": {"vector": l2[0], "structure": l2[1]},
        "external_weight": weight,
        "external": [name for name, _fields in EXTERNAL],
        "thresholds": {"keep": model.keep, "admit": model.admit},
        "cross_validation": {"chosen": cv, "rules_alone": rules},
        "keep_head": {"weights": floats(model.weights), "bias": round(model.bias, 6)},
        "category_head": {
            "labels": list(model.categories),
            "weights": floats(model.category_weights),
            "bias": floats(model.category_bias),
        },
    }
    learned.MODEL_FILE.parent.mkdir(parents=True, exist_ok=True)
    learned.MODEL_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {learned.MODEL_FILE} ({learned.MODEL_FILE.stat().st_size} bytes)")


if __name__ == "__main__":
    sys.exit(main())
