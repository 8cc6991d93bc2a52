"""Every setting has a line saying what it does, and the values the dashboard says it
accepts are the values `memory-layer config set` accepts."""

from __future__ import annotations

import pytest

from memory_layer.config import DEFAULTS, all_keys, coerce, get_value
from memory_layer.errors import ConfigError
from memory_layer.settings_help import accepted, describe


def test_every_setting_is_described():
    missing = [key for key in all_keys() if len(describe(key)) < 20]
    assert missing == []
    assert describe("boosts.gotcha").startswith("Multiplies the score of a gotcha memory")
    assert describe("no.such.key") == ""


def refused(key: str, value: str) -> bool:
    try:
        coerce(key, value)
    except ConfigError:
        return True
    return False


@pytest.mark.parametrize("key", all_keys())
def test_what_a_setting_accepts_is_what_config_set_accepts(key: str):
    default = get_value(key, DEFAULTS)
    says = accepted(key, default)
    coerce(key, default)  # the default itself is always accepted
    if isinstance(default, bool):
        assert says == "true or false" and refused(key, "maybe")
    elif isinstance(default, (int, float)) and " from " in says:
        low, high = (float(x) for x in says.split(" from ")[1].split(" to "))
        step = 1 if isinstance(default, int) else 0.05
        assert refused(key, "lots")
        assert not refused(key, f"{low:g}") and not refused(key, f"{high:g}")
        assert refused(key, f"{low - step:g}") and refused(key, f"{high + step:g}")
    elif isinstance(default, (int, float)):
        assert refused(key, "lots")
        assert refused(key, "-1") == ("may be negative" not in says)
        assert refused(key, "0") == says.endswith("above 0")
    elif " or " in says:
        choices = says.split(" or ")
        assert all(not refused(key, choice) for choice in choices)
        assert refused(key, "something-else")
