"""Measure the ensemble's language axes: memory_layer/models/multilingual-axis/axes.npz.

Usage:  .venv/bin/python benchmarks/build_language_axis.py

For each part of ``embedding.model: multilingual`` (memory_layer/ensemble.py) the axis is
the mean of its unit vectors of Chinese texts minus the mean of English ones, made unit
length: the direction along which the two languages differ whatever the text says. The
texts are the 60 "tune" memories of benchmarks/data/parallel_memories.jsonl and their
queries, in both languages (the same texts the ensemble's shares were chosen on; the 40
held-out memories and the outside sets are never read here). Needs the multilingual extra.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MEMORY_LAYER_HOME", tempfile.mkdtemp(prefix="ml-axis-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from memory_layer.config import load_config  # noqa: E402
from memory_layer.ensemble import AXES, PARTS, load_ensemble  # noqa: E402

PARALLEL = ROOT / "benchmarks" / "data" / "parallel_memories.jsonl"


def tune_texts() -> tuple[list[str], list[str]]:
    """(Chinese, English) texts of the tune half: each memory and its query."""
    rows = [json.loads(line) for line in PARALLEL.read_text("utf-8").splitlines() if line]
    tune = [r for r in rows if r["split"] == "tune"]
    return ([t for r in tune for t in (r["zh"], r["queries"]["zh"])],
            [t for r in tune for t in (r["en"], r["queries"]["en"])])


def axes(model, zh: list[str], en: list[str]) -> dict[str, np.ndarray]:
    zh_parts, en_parts = model.part_vectors(zh), model.part_vectors(en)
    out = {}
    for part, z, e in zip(PARTS, zh_parts, en_parts, strict=True):
        d = z.mean(axis=0) - e.mean(axis=0)
        out[part.name] = (d / np.linalg.norm(d)).astype(np.float32)
    return out


def main() -> None:
    cfg = load_config()
    model = load_ensemble(cfg["embedding"], with_axes=False)
    zh, en = tune_texts()
    found = axes(model, zh, en)
    AXES.parent.mkdir(parents=True, exist_ok=True)
    np.savez(AXES, **found)
    for name, axis in found.items():
        print(f"{name}: {axis.shape[0]} floats")
    print(f"{len(zh)} Chinese and {len(en)} English texts -> {AXES.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
