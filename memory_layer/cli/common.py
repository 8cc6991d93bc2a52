"""Helpers shared by CLI commands: opening the store, JSON output, scope options."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import click

from memory_layer.cli.render import as_json, short
from memory_layer.config import load_config

__all__ = [
    "as_json",
    "config",
    "current_project",
    "echo_json",
    "embedder_for",
    "json_option",
    "open_store",
    "say",
    "short",
]


def open_store() -> sqlite3.Connection:
    from memory_layer.api import open_db

    return open_db()


def embedder_for(config: dict[str, Any], *, wanted: bool = True) -> Any:
    if not wanted:
        return None
    from memory_layer.api import embedder_status, get_embedder

    embedder = get_embedder(config)
    if embedder is None and config["embedding"]["enabled"]:
        # Say it once per command: results are keyword-only, and why.
        click.echo(
            f"Keyword-only: the embedding model did not load "
            f"({embedder_status(config).reason}). `memory-layer doctor` says more.",
            err=True,
        )
    return embedder


def config() -> dict[str, Any]:
    return load_config()


def echo_json(value: Any) -> None:
    click.echo(as_json(value))


def say(message: str = "", *, err: bool = False) -> None:
    """``click.echo`` for lines that carry stored text: control and invisible characters
    shown as visible escapes (``api.terminal_text``), so no record can colour, retitle,
    rewrite or reverse what a person reads."""
    from memory_layer.api import terminal_text

    click.echo(terminal_text(message), err=err)


def current_project(project: str | None) -> str:
    from memory_layer.api import project_for

    return project or project_for()


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(fn)


def progress(label: str) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """A progress bar on a terminal (stderr), nothing when piped."""

    def wrap(items: Iterable[Any]) -> Iterator[Any]:
        if not sys.stderr.isatty():
            yield from items
            return
        with click.progressbar(items, label=label, file=sys.stderr) as bar:
            yield from bar

    return wrap
