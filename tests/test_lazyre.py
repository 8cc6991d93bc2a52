"""Patterns compiled on first use behave as the compiled pattern."""

from __future__ import annotations

import copy
import pickle
import re

import pytest

from memory_layer.lazyre import LazyPattern


def test_compiles_on_first_use_and_then_behaves_as_re() -> None:
    lazy = LazyPattern(r"(?P<word>er+or)", re.IGNORECASE)
    assert "_compiled" not in vars(lazy)
    assert lazy.search("an ERRor here").group("word") == "ERRor"
    assert "_compiled" in vars(lazy)
    real = re.compile(r"(?P<word>er+or)", re.IGNORECASE)
    text = "error, Error and errror"
    assert lazy.sub("x", text) == real.sub("x", text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.flags == real.flags and lazy.groupindex == real.groupindex
    assert lazy.pattern == real.pattern


def test_a_bad_pattern_fails_when_used_and_unknown_attributes_raise() -> None:
    bad = LazyPattern(r"(unclosed")
    with pytest.raises(re.error):
        bad.search("x")
    with pytest.raises(AttributeError):
        LazyPattern("a").no_such_method  # noqa: B018


def test_copy_and_pickle_keep_working() -> None:
    lazy = LazyPattern(r"a+b")
    assert copy.deepcopy(lazy).search("xaab").group(0) == "aab"
    assert pickle.loads(pickle.dumps(LazyPattern(r"a+b"))).search("ab")
