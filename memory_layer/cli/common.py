"""Helpers shared by CLI commands: opening the store, JSON output, scope options."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

import click

from memory_layer.config import load_config


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
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def current_project(project: str | None) -> str:
    from memory_layer.api import project_for

    return project or project_for()


def json_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(fn)


# Terminal escapes and bidirectional-override characters in stored text (an agent's
# proposal, say) could make a line read differently from what is stored: show them as
# visible escapes instead.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def short(text: str, width: int = 100) -> str:
    flat = _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", " ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"
