"""The light frozen-record base used on the hook path instead of dataclasses."""

from __future__ import annotations

import pytest

from memory_layer.frozen import Frozen, field


class Point(Frozen):
    x: int
    y: int = 0
    label: str = ""
    _not_compared = frozenset({"label"})


class Point3(Point):
    z: int = 0


def test_fields_defaults_and_positional() -> None:
    assert Point(1) == Point(x=1, y=0)
    assert Point(1, 2).y == 2 and Point3(1, 2, "a", 3).z == 3
    assert Point3._fields == ("x", "y", "label", "z")


def test_frozen_and_refuses_bad_arguments() -> None:
    p = Point(1)
    with pytest.raises(AttributeError, match="frozen"):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected arguments"):
        Point(1, w=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 3 fields"):
        Point(1, 2, "a", 4)  # type: ignore[call-arg]


def test_equality_hash_and_repr_go_by_the_compared_fields() -> None:
    assert Point(1, label="a") == Point(1, label="b")
    assert hash(Point(1, label="a")) == hash(Point(1, label="b"))
    assert Point(1) != Point(2) and Point(1) != Point3(1)
    assert repr(Point(1, 2)) == "Point(x=1, y=2, label='')"
    assert Point(1, 2).as_dict() == {"x": 1, "y": 2, "label": ""}


class Checked(Frozen):
    n: int
    note: str = ""

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must be >= 0")


def test_post_init_validates_and_replace_copies_and_validates_again() -> None:
    c = Checked(1, "a")
    with pytest.raises(ValueError, match=">= 0"):
        Checked(-1)
    changed = c.replace(note="b")
    assert changed == Checked(1, "b") and c.note == "a"
    with pytest.raises(ValueError, match=">= 0"):
        c.replace(n=-2)
    with pytest.raises(TypeError, match="unexpected arguments"):
        c.replace(other=1)


class Tagged(Frozen):
    name: str
    tags: dict[str, int] = field(default_factory=dict)


class MoreTagged(Tagged):
    notes: list[str] = field(default_factory=list)


def test_a_field_default_factory_makes_a_fresh_value_per_instance() -> None:
    a, b = Tagged("a"), Tagged("b")
    assert a.tags == {} and a.tags is not b.tags
    a.tags["x"] = 1  # the dict itself is the record's own, as with dataclasses
    assert Tagged("c").tags == {}
    assert Tagged("d", {"y": 2}).tags == {"y": 2}  # a value given wins
    assert not hasattr(Tagged, "tags")  # no shared class-level default left behind
    more = MoreTagged("e")
    assert more.tags == {} and more.notes == [] and MoreTagged._fields == ("name", "tags", "notes")
    assert more == MoreTagged("e", {}, [])
