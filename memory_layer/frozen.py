"""Frozen record types for the hook path, without ``dataclasses``.

A frozen dataclass is the shape we want for rows and parsed values, but each one
costs its module about a millisecond to define (``dataclasses`` writes and ``exec``s
its methods, and importing it loads ``inspect``), and the hook path defines several:
measured, they added ~10 ms CPU to every hook process that answers without the
engine. ``Frozen`` gives the same contract for the few that hook processes load:
fields are the class's annotated names in order (base class first), a class
attribute is the default, instances cannot be assigned to, equality and hashing go
by the fields minus ``_not_compared`` (``repr`` shows them all), ``__post_init__``
runs after ``__init__`` as a dataclass's does, and ``replace`` is
``dataclasses.replace``. A field whose default is a fresh value per instance says
so as a dataclass field does: ``extra: dict[str, Any] = field(default_factory=dict)``.

Type checkers see all of that through ``typing.dataclass_transform`` (PEP 681): the
fields, the generated ``__init__`` (missing or mistyped arguments) and that
instances are frozen. At run time the decorator is a no-op of our own, because it
only marks the class for type checkers and importing ``typing`` costs the hook path
~3 ms.
"""

from __future__ import annotations

# typing costs ~3 ms to import and is needed here only by type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> object:
        """``typing.dataclass_transform`` without typing: it marks the class for type
        checkers and changes nothing at run time."""
        return lambda cls: cls


class _Factory:
    """A field's default made anew for every instance (what ``field`` returns)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A fresh default per instance, as ``dataclasses.field(default_factory=...)``:
    ``extra: dict[str, Any] = field(default_factory=dict)``."""
    return _Factory(default_factory)  # type: ignore[return-value]


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Frozen:
    _fields: ClassVar[tuple[str, ...]] = ()
    _not_compared: ClassVar[frozenset[str]] = frozenset()
    # Fields whose default is a fresh value per instance (a dict): name -> factory.
    _factories: ClassVar[dict[str, Any]] = {}

    # Derived once per class by __init_subclass__, so building and hashing a record is
    # one pass over plain tuples and dicts (a store read builds thousands of them).
    _defaults: ClassVar[dict[str, Any]] = {}
    _compared: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        own = cls.__dict__.get("__annotations__", {})
        made = {k: v.make for k, v in cls.__dict__.items() if isinstance(v, _Factory)}
        if made:  # field(default_factory=...): kept as a factory, not a class default
            cls._factories = {**cls._factories, **made}
            for name in made:
                delattr(cls, name)
        cls._fields = cls._fields + tuple(
            name for name, kind in own.items() if not name.startswith("_") and "ClassVar" not in kind
        )
        cls._defaults = {
            name: getattr(cls, name)
            for name in cls._fields
            if hasattr(cls, name) and name not in cls._factories
        }
        cls._compared = tuple(f for f in cls._fields if f not in cls._not_compared)

    def __init__(self, *args: Any, **values: Any) -> None:
        fields = self._fields
        if args:
            if len(args) > len(fields):
                raise TypeError(
                    f"{type(self).__name__}() takes {len(fields)} fields, got {len(args)}"
                )
            twice = sorted(set(fields[: len(args)]) & set(values))
            if twice:
                raise TypeError(f"{type(self).__name__}() got multiple values for {twice}")
            values.update(zip(fields, args, strict=False))
        state = self.__dict__  # written directly: __setattr__ refuses every assignment
        defaults = self._defaults
        for key in fields:
            if key in values:
                state[key] = values.pop(key)
            elif key in defaults:
                state[key] = defaults[key]
            elif key in self._factories:
                state[key] = self._factories[key]()
            else:
                raise TypeError(f"{type(self).__name__}() missing required argument {key!r}")
        if values:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments {sorted(values)}")
        post = getattr(self, "__post_init__", None)
        if post is not None:  # validation, as in a dataclass
            post()

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {key!r}")

    def _key(self) -> tuple[Any, ...]:
        state = self.__dict__
        return tuple([state[f] for f in self._compared])

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({shown})"

    def as_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self._fields}

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` applied (validated again, as ``dataclasses.replace``)."""
        return type(self)(**{**self.as_dict(), **changes})
