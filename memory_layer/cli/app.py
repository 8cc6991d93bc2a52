"""The `memory-layer` command line. Nouns are groups, verbs are plain.

Each submodule registers its commands on ``cli``; heavy imports stay inside the
command functions so `memory-layer --help` and keyword-only recall start fast.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import click

from memory_layer import __version__
from memory_layer.errors import MemoryLayerError


class Group(click.Group):
    """Turns the library's named errors into clean CLI errors (exit 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except MemoryLayerError as exc:
            raise click.ClickException(str(exc)) from None
        except sqlite3.DatabaseError as exc:
            # Met after the store opened: another process's lock on a write outside
            # records.transaction, or damage deeper in the file than the header.
            from memory_layer.api import explain_error, store_trouble
            from memory_layer.paths import db_path

            if not store_trouble(exc):
                raise

            raise click.ClickException(str(explain_error(exc, db_path()))) from None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="memory-layer")
def cli() -> None:
    """Memory for AI coding agents that learns what works.

    One local store (~/.memory-layer/memories.db, or $MEMORY_LAYER_HOME) shared by
    Claude Code, other agents over MCP, and you.

    \b
    Examples:
        memory-layer remember "Run tests with: uv run pytest -x" --category command
        memory-layer recall "how do I run the tests"
        memory-layer recall "ECONNREFUSED 5432" --explain
        memory-layer list --category gotcha
    """


# Each module registers its commands on `cli` (click lists them alphabetically).
from memory_layer.cli import admin as _admin  # noqa: E402,F401
from memory_layer.cli import data as _data  # noqa: E402,F401
from memory_layer.cli import hooks as _hooks  # noqa: E402,F401
from memory_layer.cli import memories as _memories  # noqa: E402,F401
from memory_layer.cli import outcomes as _outcomes  # noqa: E402,F401
from memory_layer.cli import seed as _seed  # noqa: E402,F401
from memory_layer.cli import team as _team  # noqa: E402,F401
from memory_layer.cli import team_admin as _team_admin  # noqa: E402,F401
from memory_layer.cli import team_join as _team_join  # noqa: E402,F401
from memory_layer.cli import trust as _trust  # noqa: E402,F401
from memory_layer.cli import web as _web  # noqa: E402,F401
