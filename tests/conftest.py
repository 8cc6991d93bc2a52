"""Every test gets its own user directory and a deterministic embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_layer import config as config_module
from memory_layer import embed
from memory_layer.retrieval import vectors
from tests.fakes import FakeEmbedder

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "ml-home"
    monkeypatch.setenv("MEMORY_LAYER_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config_module._cache.clear()
    vectors.clear_cache()
    embed.use_embedder(FakeEmbedder(), "fake embedder injected by tests/conftest.py")
    yield home
    embed.reset_embedder()
    vectors.clear_cache()
    config_module._cache.clear()


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    embedder = FakeEmbedder()
    embed.use_embedder(embedder, "fake")
    return embedder


@pytest.fixture
def keyword_only() -> None:
    embed.use_embedder(None, "keyword-only for this test")


@pytest.fixture
def db():
    from memory_layer.storage.db import open_db

    conn = open_db()
    yield conn
    conn.close()


@pytest.fixture
def cfg() -> dict:
    return config_module.load_config()
