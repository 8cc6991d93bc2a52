"""embedding.model: validation, calibration, and switching models without mixing vectors.

The unit tests use two fake embedders (tests/fakes.py) standing for two models; the
real multilingual model runs in tests/test_multilingual_model.py.
"""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from memory_layer import config as config_module
from memory_layer import embed, embedders
from memory_layer.cli import cli
from memory_layer.errors import ConfigError
from memory_layer.indexing import BATCH, backfill
from memory_layer.retrieval.search import Scope, recall
from memory_layer.retrieval.vectors import vector_index
from memory_layer.storage.records import other_model_count
from memory_layer.transfer import import_records
from tests.fakes import FakeEmbedder


class OtherFake(FakeEmbedder):
    """A second model: another id and dimension, so its vectors cannot be compared."""

    model_id = "fake-other-128"
    dim = 128


def test_embedding_model_accepts_the_named_models_and_old_ids() -> None:
    assert config_module.coerce("embedding.model", "minilm") == "minilm"
    assert config_module.coerce("embedding.model", " USE-Multilingual ") == "use-multilingual"
    # Older config files name the default by its fastembed id: same model, same vectors.
    assert config_module.coerce("embedding.model", embed.DEFAULT_MODEL) == "minilm"
    # A fastembed model by name stays possible (it needs embedding.model_path offline).
    assert config_module.coerce("embedding.model", "BAAI/bge-small-en-v1.5") == (
        "BAAI/bge-small-en-v1.5"
    )
    assert config_module.DEFAULTS["embedding"]["model"] == "minilm"


def test_an_unknown_embedding_model_is_refused_with_a_hint(user_home) -> None:
    with pytest.raises(ConfigError) as refused:
        config_module.coerce("embedding.model", "use-multilingal")
    message = str(refused.value)
    assert "must be one of minilm, use-multilingual, multilingual" in message
    assert "Did you mean 'use-multilingual'?" in message
    assert "memory-layer index --force" in message
    result = CliRunner().invoke(cli, ["config", "set", "embedding.model", "e5"])
    assert result.exit_code != 0 and "must be one of" in result.output
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  model: minilm-l6\n")
    with pytest.raises(ConfigError, match="Did you mean 'minilm'"):
        config_module.load_config()


def test_each_model_names_the_id_its_vectors_are_stored_under() -> None:
    def cfg(name: str) -> dict:
        return {"embedding": {**config_module.DEFAULTS["embedding"], "model": name}}

    assert embed.model_id_for(cfg("minilm")) == embed.DEFAULT_MODEL
    assert embed.model_id_for(cfg(embed.DEFAULT_MODEL)) == embed.DEFAULT_MODEL
    assert embed.model_id_for(cfg("use-multilingual")) == embedders.USE_ID
    assert embed.model_id_for(cfg("BAAI/bge-small-en-v1.5")) == "BAAI/bge-small-en-v1.5"


def test_cosines_are_mapped_onto_minilms_scale() -> None:
    raw = np.array([-1.0, 0.114, 0.395, 0.7, 1.0], dtype=np.float32)
    mapped = embedders.calibrate(embedders.USE_ID, raw)
    assert np.allclose(mapped[[0, 1, 2, 4]], [-1.0, 0.071, 0.505, 1.0], atol=1e-6)
    assert np.all(np.diff(mapped) > 0)  # monotone: rankings within a model never change
    for model_id in (embed.DEFAULT_MODEL, FakeEmbedder.model_id):
        assert embedders.calibrate(model_id, raw) is raw


def _store(db, n: int) -> list[str]:
    records = [
        (i, {"id": f"m{i:03d}", "text": f"deploy note: restart the svc{i:03d} workers "
             "after the migration", "category": "command", "project": "api", "source": "test",
             "confidence": 0.8})
        for i in range(1, n + 1)
    ]
    import_records(db, records, embedder=FakeEmbedder())
    return [values["id"] for _, values in records]


def test_switching_models_never_mixes_vectors_and_recall_answers_while_reindexing(db, cfg):
    """Re-embedding with another model: between batches recall still answers (keywords
    for memories not yet re-embedded), the new model's index grows by each batch as a
    warm process sees it (incremental refresh), and the old model's index loses them."""
    n = 2 * BATCH + 5
    ids = _store(db, n)
    old, new = FakeEmbedder(), OtherFake()
    assert vector_index(db, old.model_id).live.sum() == n
    before = recall(db, "restart the svc007 workers", scope=Scope.for_project("api"), config=cfg,
                    embedder=new)
    # Nothing of the new model yet: every result is judged on keywords alone.
    assert before and all(hit.explain["vector"] is None for hit in before)
    assert other_model_count(db, new.model_id) == n
    seen: list[tuple[int, int]] = []

    def during(starts):
        for start in starts:
            hits = recall(db, "restart the svc007 workers", scope=Scope.for_project("api"),
                          config=cfg, embedder=new)
            assert hits and "m007" in [h.memory.id for h in hits]
            seen.append((int(vector_index(db, new.model_id, new.dim).live.sum()),
                         int(vector_index(db, old.model_id).live.sum())))
            yield start

    assert backfill(db, new, force=True, progress=during) == n
    assert seen == [(0, n), (BATCH, n - BATCH), (2 * BATCH, n - 2 * BATCH)]
    assert int(vector_index(db, new.model_id, new.dim).live.sum()) == n
    assert int(vector_index(db, old.model_id).live.sum()) == 0
    models = {r[0] for r in db.execute("SELECT DISTINCT embedding_model FROM memories")}
    assert models == {new.model_id} and other_model_count(db, new.model_id) == 0
    after = recall(db, "restart the svc007 workers", scope=Scope.for_project("api"), config=cfg,
                   embedder=new)
    assert after[0].memory.id == "m007" and after[0].explain["vector"] is not None
    assert len(ids) == n


def test_index_force_reports_counts_and_doctor_flags_vectors_of_another_model(db, user_home):
    _store(db, 3)
    embed.use_embedder(OtherFake())  # embedding.model now names another model
    doctor = CliRunner().invoke(cli, ["doctor", "--json"])
    check = next(c for c in json.loads(doctor.output) if c["name"] == "vectors")
    assert not check["ok"] and "3 have vectors from another model" in check["detail"]
    done = CliRunner().invoke(cli, ["index", "--json"])
    assert json.loads(done.output) == {"embedded": 3, "model": OtherFake.model_id,
                                       "without_vector": 0, "from_other_model": 3}
    again = CliRunner().invoke(cli, ["index"])
    assert again.output.strip() == f"Embedded 0 memories with {OtherFake.model_id}."
    forced = CliRunner().invoke(cli, ["index", "--force"])
    assert forced.output.strip() == (
        f"Embedded 3 memories with {OtherFake.model_id} (0 had no vector, 0 had one from "
        "another model)."
    )


def test_index_shows_a_progress_bar_counting_memories_on_a_terminal(monkeypatch) -> None:
    from memory_layer.cli.data import _batch_progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    steps = list(_batch_progress("Indexing")(range(0, 2 * BATCH + 5, BATCH)))
    assert steps == [0, BATCH, 2 * BATCH]
    assert "Indexing" in screen.getvalue() and "100%" in screen.getvalue()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # piped: no bar, same steps
    assert list(_batch_progress("Indexing")(range(0, 10, BATCH))) == [0]


def test_the_warm_engine_loads_the_model_config_yaml_names_now(db, user_home, monkeypatch):
    from memory_layer.engine.server import Engine, engine_model_config

    loaded: list[str] = []

    def fake_load(config):
        loaded.append(config["embedding"]["model"])
        model = OtherFake() if config["embedding"]["model"] == "use-multilingual" else FakeEmbedder()
        return model, embed.EmbedderStatus(True, model.model_id, "loaded")

    monkeypatch.setattr(embed, "load_embedder", fake_load)
    embed.reset_embedder()
    cfg = config_module.load_config()
    engine = Engine(cfg, embed.get_embedder(engine_model_config(cfg)))
    try:
        assert engine.embedder.model_id == FakeEmbedder.model_id
        engine.current_config()
        assert loaded == ["minilm"]  # unchanged settings: nothing reloaded
        user_home.mkdir(parents=True, exist_ok=True)
        (user_home / "config.yaml").write_text("embedding:\n  model: use-multilingual\n")
        _store(db, 3)  # embedded by the model used so far
        engine.current_config()
        assert engine.embedder.model_id == OtherFake.model_id
        assert engine.status()["embedder"] == OtherFake.model_id
        engine.current_config()
        assert loaded == ["minilm", "use-multilingual"]
        # When idle, the worker re-embeds what the previous model embedded.
        assert engine.needs_backfill
        engine.backfill()
        assert engine.backfilled == 3 and other_model_count(db, OtherFake.model_id) == 0
    finally:
        engine.query_conn.close()
        engine.worker_conn.close()


def test_an_engine_re_embed_interrupted_by_a_hook_goes_on_after_it(db, cfg):
    """After an upgrade that changes the model id (multilingual v1 -> v2) every memory has
    a vector, only of the old model: a re-embed interrupted by a hook event must go on at
    the next idle moment, not stop because no memory lacks a vector."""
    from memory_layer.engine.server import Engine, Job
    from memory_layer.hooks.events import PromptSubmitted

    _store(db, 3 * BATCH)  # embedded by the model used before the upgrade
    engine = Engine(cfg, OtherFake())
    try:
        assert engine.needs_backfill
        polls = iter([0, 1])  # a hook event arrives after the first batch
        engine.waiting = lambda: next(polls, 1)  # type: ignore[method-assign]
        engine.backfill()
        stale = other_model_count(db, OtherFake.model_id)
        assert 0 < stale < 3 * BATCH and engine.needs_backfill
        engine.waiting = lambda: 0  # type: ignore[method-assign]
        event = PromptSubmitted(name="UserPromptSubmit", session_id="s1", prompt="hello")
        engine.do_job(Job("hook", event, None))
        assert engine.needs_backfill  # the hook job did not end the re-embed
        engine.backfill()
        assert other_model_count(db, OtherFake.model_id) == 0 and not engine.needs_backfill
    finally:
        engine.query_conn.close()
        engine.worker_conn.close()
