"""doctor, config, path."""

from __future__ import annotations

import os
import sys
from typing import Any

import click
import yaml

from memory_layer.cli import cli
from memory_layer.cli.common import echo_json, json_option
from memory_layer.config import DEFAULTS, all_keys, get_value, load_config, set_value, unset_value
from memory_layer.errors import MemoryLayerError
from memory_layer.paths import config_path, db_path, user_dir

# How long doctor waits for the store's write lock before calling it held: hooks wait
# up to their own deadlines, so a lock held this long already costs a session.
WRITE_LOCK_WAIT_MS = 1000


def installation_check() -> tuple[bool, str]:
    """This install is the only `memory_layer` (PyPI's `memory-layer` is someone else's)."""
    import memory_layer
    from memory_layer.api import DISTRIBUTION, foreign_modules

    problems = foreign_modules()
    if problems:
        return False, "; ".join(problems) + "."
    return True, f"{DISTRIBUTION} {memory_layer.__version__} from {memory_layer.__path__[0]}"


def writable_check() -> tuple[bool, str]:
    """The store accepts writes now: reads succeed under another process's write lock."""
    from memory_layer.api import open_db, write_lock_free

    conn = open_db()
    try:
        if write_lock_free(conn, WRITE_LOCK_WAIT_MS):
            return True, "no other process holds the write lock"
    finally:
        conn.close()
    return False, (
        f"{db_path()} is write-locked by another process (waited "
        f"{WRITE_LOCK_WAIT_MS / 1000:.0f}s): hooks and commands cannot save. Close the "
        "other writer (`memory-layer engine stop` stops the background engine; a sqlite3 "
        "shell left inside a transaction holds it too) and run doctor again."
    )


def run_checks() -> list[dict[str, Any]]:
    """Each check: name, ok, detail. Never raises: doctor must report, not crash."""
    checks: list[dict[str, Any]] = []

    def check(name: str, fn: Any) -> None:
        try:
            ok, detail = fn()
        except Exception as exc:  # doctor reports every failure instead of stopping
            ok, detail = False, f"{type(exc).__name__}: {exc}"
        checks.append({"name": name, "ok": ok, "detail": detail})

    def python() -> tuple[bool, str]:
        return sys.version_info >= (3, 11), sys.version.split()[0] + " at " + sys.executable

    def directory() -> tuple[bool, str]:
        path = user_dir()
        return os.access(path, os.W_OK), f"{path} (writable: {os.access(path, os.W_OK)})"

    def private_files() -> tuple[bool, str]:
        return _private_files()

    def configuration() -> tuple[bool, str]:
        load_config()
        return True, f"{config_path()} " + ("(valid)" if config_path().exists() else "(defaults)")

    def database() -> tuple[bool, str]:
        from memory_layer.api import health, open_db, total_memories

        conn = open_db()
        result, mode = health(conn)
        count = total_memories(conn)
        perms = oct(db_path().stat().st_mode & 0o777)
        return result == "ok", f"{db_path()}: {count} memories, {mode}, mode {perms}, {result}"

    def store_files() -> tuple[bool, str]:
        from memory_layer.api import describe_store_files

        lines = describe_store_files(db_path())
        detail = "; ".join(line for line, _ in lines)
        if all(fine for _, fine in lines):
            return True, detail
        return False, (
            f"{detail}. Every file of the store must be a regular file you own and can "
            "write: `memory-layer engine stop`, then `chmod u+w` it (a stale -wal/-shm "
            "left by a read-only run may also be removed once nothing uses the store)."
        )

    def journal() -> tuple[bool, str]:
        from memory_layer.engine import journal as engine_journal

        waiting, failed = engine_journal.count(), len(engine_journal.failed())
        detail = f"{waiting} acknowledged hook events waiting for the engine"
        if waiting:
            detail += " (written when it next starts: `memory-layer engine start`)"
        if failed:
            return False, (
                f"{detail}; {failed} could not be handled and are kept in "
                f"{engine_journal.journal_dir()} (*.failed) for a look; engine.log says why."
            )
        return True, detail

    def fts() -> tuple[bool, str]:
        from memory_layer.api import fts5_available

        return True, f"SQLite {fts5_available()} with FTS5"

    def embeddings() -> tuple[bool, str]:
        from memory_layer.api import embedder_status

        status = embedder_status(load_config())
        if status.loaded:
            return True, f"{status.model_id} loaded"
        return False, (
            f"keyword-only mode: {status.reason}. Recall still works on keywords; "
            "fix the cause, then run `memory-layer index` to add vectors."
        )

    def vectors() -> tuple[bool, str]:
        from memory_layer.api import (
            embedding_model_id,
            open_db,
            other_model_count,
            unembedded_count,
        )

        conn = open_db()
        missing = unembedded_count(conn)
        model_id = embedding_model_id(load_config())
        stale = other_model_count(conn, model_id)
        if missing or stale:
            parts = [f"{missing} memories have no vector"] if missing else []
            if stale:
                # After a switch of embedding.model: recall ignores these vectors.
                parts.append(f"{stale} have vectors from another model than {model_id}")
            return False, "; ".join(parts) + "; run `memory-layer index`."
        return True, "every memory has a vector"

    check("python", python)
    check("installation", installation_check)
    check("user directory", directory)
    check("private files", private_files)
    check("config", configuration)
    # The files as found: opening the store (next) may recreate a stale -wal/-shm.
    check("store files", store_files)
    check("database", database)
    check("database writes", writable_check)
    check("journal", journal)
    check("full-text search", fts)
    check("embedding model", embeddings)
    check("vectors", vectors)
    return checks


def _private_files() -> tuple[bool, str]:
    """The home and run/ are this user's alone (issue 14: another user who can write
    them can answer the hooks); the socket directory too when one is used."""
    from memory_layer.engine.client import socket_path
    from memory_layer.engine.guard import UnsafeFiles, home_problems
    from memory_layer.paths import run_dir

    home = user_dir()
    problems = home_problems(str(home), str(run_dir()))
    try:
        socket_path()
    except UnsafeFiles as exc:
        problems.append(str(exc))
    if problems:
        return False, "; ".join(problems)
    return True, f"{home} and its run/ are yours alone (mode 0700)"


@cli.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check the installation: directory, config, database, search, embedding model.

    Exits non-zero when something needs fixing; each failed check says how.

    \b
    Example:
        memory-layer doctor
    """
    checks = run_checks()
    if as_json:
        echo_json(checks)
    else:
        for item in checks:
            mark = "ok " if item["ok"] else "!! "
            click.echo(f"{mark} {item['name']:<17} {item['detail']}")
    if not all(item["ok"] for item in checks):
        sys.exit(1)


@cli.group(invoke_without_command=True)
@click.pass_context
def config(ctx: click.Context) -> None:
    """Show and change settings in config.yaml (weights, boosts, half-life, model...).

    Without a subcommand, prints the effective settings (as `config show`).

    \b
    Examples:
        memory-layer config show
        memory-layer config get weights.similarity
        memory-layer config set recency.half_life_days 14
        memory-layer config unset recency.half_life_days
        memory-layer config keys
    """
    if ctx.invoked_subcommand is None:
        ctx.invoke(config_show, as_json=False)


@config.command(name="show")
@json_option
def config_show(as_json: bool) -> None:
    """Print the effective settings (defaults merged with config.yaml)."""
    values = load_config()
    if as_json:
        echo_json(values)
    else:
        click.echo(yaml.safe_dump(values, sort_keys=True).rstrip())


@config.command(name="get")
@click.argument("key")
def config_get(key: str) -> None:
    """Print one setting, e.g. `memory-layer config get boosts.gotcha`."""
    value = get_value(key)
    click.echo(
        yaml.safe_dump(value).strip().removesuffix("...").strip()
        if isinstance(value, dict)
        else value
    )


# A negative VALUE ("-3") is a value, not an option: without this click answered
# "No such option: -3" and a negative setting needed "--" first.
@config.command(name="set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
def config_set(key: str, value: str) -> None:
    """Set KEY to VALUE, validated against the default's type and range.

    Numbers outside a setting's documented range are refused (weights 0 to 1, boosts
    0.1 to 3; README "Configuration"). Negative values need no "--".

    \b
    Examples:
        memory-layer config set weights.similarity 0.4
        memory-layer config set outcomes.floor -0.6
    """
    typed = set_value(key, value)
    click.echo(f"{key} = {typed}")


@config.command(name="unset")
@click.argument("key")
def config_unset(key: str) -> None:
    """Remove KEY from config.yaml so the default applies again."""
    unset_value(key)
    click.echo(f"{key} reset to default {get_value(key, DEFAULTS)!r}")


@config.command(name="keys")
def config_keys() -> None:
    """List every setting with its default."""
    for key in all_keys():
        click.echo(f"{key} = {get_value(key, DEFAULTS)!r}")


@cli.command()
@click.option("--db", "want_db", is_flag=True, help="Print the database path.")
@click.option("--config", "want_config", is_flag=True, help="Print the config.yaml path.")
@click.option("--dir", "want_dir", is_flag=True, help="Print the user directory (the default).")
def path(want_db: bool, want_config: bool, want_dir: bool) -> None:
    """Print the user directory, the database path or the config path.

    With several options, one path per line in the order user directory, database,
    config.

    \b
    Examples:
        memory-layer path
        memory-layer path --db --config
        sqlite3 "$(memory-layer path --db)" .tables
    """
    wanted = [
        finder
        for flag, finder in ((want_dir, user_dir), (want_db, db_path), (want_config, config_path))
        if flag
    ] or [user_dir]
    try:
        targets = [finder() for finder in wanted]
    except MemoryLayerError as exc:
        raise click.ClickException(str(exc)) from None
    for target in targets:
        click.echo(str(target))
