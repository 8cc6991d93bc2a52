"""The `memory-layer` command line. Nouns are groups, verbs are plain.

The click application is ``memory_layer.cli.app.cli``; ``from memory_layer.cli import
cli`` loads it on first use. This package itself imports nothing, so the entry point
(``memory_layer.cli.fast``) can answer `recall` and `remember` through the warm engine
without loading click.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def __getattr__(name: str) -> Any:
    if name == "cli":
        from memory_layer.cli.app import cli

        return cli
    raise AttributeError(f"module 'memory_layer.cli' has no attribute {name!r}")
