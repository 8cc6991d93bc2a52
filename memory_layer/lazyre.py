"""Regular expressions compiled on first use.

``re.compile`` runs in Python: a module that compiles twenty patterns at import costs
every process that imports it several milliseconds, and a hook process without the
engine imports the capture modules on every tool call although most calls (a green
test run) never reach the patterns that read failures. ``lazy`` defers the work to
the first call that needs the pattern; a process that never needs it never pays.
"""

from __future__ import annotations

import re

# typing costs ~3 ms to import and is needed here only by type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)`` on the first attribute asked for.

    Method lookups after the first are plain instance attributes (the compiled
    pattern's bound methods are kept on the instance), so a hot loop pays nothing
    for the indirection. Only attribute access is supported: pass ``.pattern`` /
    call methods, never hand the object itself to ``re.sub`` and friends.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def compiled(self) -> re.Pattern[str]:
        found = self.__dict__.get("_compiled")
        if found is None:
            found = self.__dict__["_compiled"] = re.compile(self.pattern, self._flags)
        return found

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probing: not a pattern attribute
            raise AttributeError(name)
        value = getattr(self.compiled(), name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"
