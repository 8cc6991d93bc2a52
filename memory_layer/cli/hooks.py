"""hook and engine: the Claude Code hook door and the warm engine's controls."""

from __future__ import annotations

import os
import sys

import click

from memory_layer.cli import cli
from memory_layer.cli.common import echo_json, json_option

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "TaskCreated",
    "TaskCompleted",
)


@cli.command(name="hook")
@click.argument("event", type=click.Choice(EVENTS))
def hook_command(event: str) -> None:
    """Run the Claude Code hook for EVENT: event JSON on stdin, context on stdout.

    This is what the plugin's hooks/run launcher calls (it prefers the faster
    `python -m memory_layer.hooks EVENT`). It always exits 0; problems are
    logged to logs/hooks.log in the memory-layer directory.

    \b
    Examples:
        echo '{"session_id":"s1","cwd":"'$PWD'","prompt":"how do I run the tests"}' \\
            | memory-layer hook UserPromptSubmit
        memory-layer hook SessionStart < payload.json
    """
    from memory_layer.hooks.main import run

    run([event], sys.stdin.buffer, sys.stdout, os.environ)


@cli.group()
def engine() -> None:
    """The warm background engine that keeps the model and vectors loaded.

    Hooks start it when they need it; it exits after engine.idle_timeout_s
    without requests. One per user (a lock in the run/ directory).

    \b
    Examples:
        memory-layer engine status
        memory-layer engine stop
    """


@engine.command(name="status")
@json_option
def engine_status(as_json: bool) -> None:
    """Show whether the engine runs, its pid, uptime, requests and model.

    \b
    Examples:
        memory-layer engine status
        memory-layer engine status --json
    """
    from memory_layer.engine.lifecycle import status

    info = status()
    if as_json:
        echo_json(info)
        return
    if not info["running"]:
        click.echo("engine: not running (hooks start it when needed)")
        return
    click.echo(f"engine: running, pid {info['pid']}" + ("" if info.get("ready") else " (starting)"))
    for key in (
        "uptime_s",
        "idle_s",
        "idle_timeout_s",
        "requests",
        "jobs_done",
        "queued",
        "memories",
        "without_embedding",
        "embedder",
        "llm_extraction",
        "llm_calls_today",
        "llm_cost_today_usd",
        "socket",
    ):
        if key in info:
            click.echo(f"  {key}: {info[key]}")


@engine.command(name="stop")
def engine_stop() -> None:
    """Stop the engine (it is restarted by the next hook that needs it).

    \b
    Examples:
        memory-layer engine stop
    """
    from memory_layer.engine.lifecycle import stop

    click.echo("engine stopped" if stop() else "engine was not running")


@engine.command(name="start")
@click.option("--wait/--no-wait", default=True, help="Wait until it answers (up to 30 s).")
def engine_start(wait: bool) -> None:
    """Start the engine in the background now instead of on the next hook.

    \b
    Examples:
        memory-layer engine start
    """
    from memory_layer.config import load_config
    from memory_layer.engine.lifecycle import running_pid, spawn, wait_until_ready
    from memory_layer.errors import ConfigError

    if not load_config()["engine"]["enabled"]:
        raise ConfigError(
            "engine.enabled is false. Turn it on with `memory-layer config set engine.enabled true`."
        )
    pid = running_pid()
    if pid is not None:
        click.echo(f"engine already running, pid {pid}")
        return
    spawn(force=True)
    if wait and not wait_until_ready(30.0):
        raise click.ClickException("The engine did not answer within 30 s; see logs/engine.log.")
    click.echo(f"engine started, pid {running_pid()}")
