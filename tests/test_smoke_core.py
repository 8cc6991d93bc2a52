from memory_layer.memories import remember
from memory_layer.retrieval.search import Scope, recall


def test_remember_then_recall(db, cfg, fake_embedder):
    first = remember(db, "Postgres refuses connections until docker compose up db", config=cfg,
                     category="troubleshooting", project="p", embedder=fake_embedder)
    remember(db, "Use tabs in Makefiles", config=cfg, category="convention", project="p",
             embedder=fake_embedder)
    results = recall(db, "database connection refused error", scope=Scope.for_project("p"),
                     config=cfg, embedder=fake_embedder)
    assert results[0].memory.id == first.memory.id
    assert results[0].scores["boost"] == 1.5
