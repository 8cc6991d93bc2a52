"""Pages backed by layers that may not be installed yet (outcomes, trust, engine).

Each page asks for the functions it needs; when the module or a function is
missing it gets the reason instead and shows a clear "not available" state.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Feature:
    # The module (Any: its functions are checked by name at run time), or None.
    module: Any
    missing: str | None  # why the feature is unavailable, or None

    @property
    def ok(self) -> bool:
        return self.module is not None and self.missing is None


def feature(module_name: str, *functions: str) -> Feature:
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        return Feature(None, f"{module_name} is not available ({exc}).")
    absent = [name for name in functions if not callable(getattr(module, name, None))]
    if absent:
        return Feature(None, f"{module_name} does not provide {', '.join(absent)} yet.")
    return Feature(module, None)
