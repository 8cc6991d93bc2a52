"""outcome, tasks list|show|sync, beads install|sync|hook."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from memory_layer.cli import cli
from memory_layer.cli.common import config, echo_json, json_option, open_store, say, short

ACTOR = "cli"


def _print_credits(db: Any, credits: list[dict[str, Any]], title: str) -> None:
    from memory_layer.api import describe_change, get_memory

    for credit in credits:
        try:
            text = short(get_memory(db, credit["memory_id"]).text, 60)
        except Exception:
            text = "(deleted memory)"
        if credit["weight"] > 0:
            why = next(
                (e.get("detail") for e in credit["evidence"] if e.get("kind") != "surfaced"), ""
            )
            say(
                f"  {title} {credit['memory_id']} {describe_change(credit)}  {text}"
                + (f"  [{why}]" if why else "")
            )
        else:
            say(f"  shown, not acted on (no credit): {credit['memory_id']}  {text}")


@cli.command()
@click.option("--task", "task_id", help="A task id: ours, a Claude task number or bd-xxxx.")
@click.option("--memory", "memory_id", help="Score one memory directly instead of a task.")
@click.option("--credit", "credit_id", type=int, help="One credit number (with --undo).")
@click.option("--worked", is_flag=True, help="It worked: +0.2.")
@click.option("--failed", is_flag=True, help="It failed: -0.3.")
@click.option("--undo", is_flag=True, help="Reverse the recorded credit exactly.")
@click.option("--restore", is_flag=True, help="Lift a sinking memory back to 0.")
@click.option("--reason", help="Why; kept with the outcome.")
@json_option
def outcome(
    task_id: str | None,
    memory_id: str | None,
    credit_id: int | None,
    worked: bool,
    failed: bool,
    undo: bool,
    restore: bool,
    reason: str | None,
    as_json: bool,
) -> None:
    """Record whether a task (or one memory) worked, so recall learns from it.

    A task outcome credits the memories that were surfaced while it was open and
    acted on (+0.2 each when it worked, -0.3 when it failed; see docs/outcomes.md).
    Giving the other verdict for a task that already has one corrects it: the old
    credit is undone exactly, then the new one applied.

    \b
    Examples:
        memory-layer outcome --task 3 --worked
        memory-layer outcome --task bd-a3f8 --failed --reason "broke prod"
        memory-layer outcome --task 3 --undo
        memory-layer outcome --memory 3f2a --failed
        memory-layer outcome --memory 3f2a --restore
        memory-layer outcome --credit 12 --undo
    """
    chosen = [x for x in (task_id, memory_id, credit_id) if x is not None]
    if len(chosen) != 1:
        raise click.UsageError("Give exactly one of --task, --memory or --credit.")
    verdict = _one_verdict(worked=worked, failed=failed, undo=undo, restore=restore)
    if credit_id is not None:
        _undo_credit(credit_id, verdict, as_json)
    elif memory_id is not None:
        _memory_verdict(memory_id, verdict, reason, as_json)
    else:
        _task_verdict(str(task_id), verdict, reason, as_json)


def _one_verdict(**given: bool) -> str:
    """The one verdict given; two at once contradict each other (``--worked --failed``
    would otherwise apply whichever click read last) and are refused."""
    chosen = [name for name, on in given.items() if on]
    if not chosen:
        raise click.UsageError("Say --worked or --failed (or --undo / --restore).")
    if len(chosen) > 1:
        flags = " and ".join(f"--{name}" for name in chosen)
        hint = (
            " To change a verdict already recorded, give the other one alone: it "
            "corrects the credit."
            if {"worked", "failed"} <= set(chosen)
            else ""
        )
        raise click.UsageError(f"{flags} contradict each other: give one.{hint}")
    return chosen[0]


def _undo_credit(credit_id: int, verdict: str, as_json: bool) -> None:
    from memory_layer import api

    if verdict != "undo":
        raise click.UsageError("--credit only takes --undo.")
    credit = api.undo_credit(open_store(), credit_id, actor=ACTOR, source="cli")
    if as_json:
        echo_json(credit)
    else:
        say(f"Credit #{credit_id} reversed ({credit['memory_id']}).")


def _memory_verdict(memory_id: str, verdict: str, reason: str | None, as_json: bool) -> None:
    from memory_layer import api

    if verdict == "undo":
        raise click.UsageError("Undo one memory credit with --credit N --undo.")
    cfg, db = config(), open_store()
    if verdict == "restore":
        memory = api.restore_sinking(db, memory_id, actor=ACTOR, config=cfg)
        if as_json:
            echo_json(memory.to_dict())
        else:
            say(f"Restored {memory.id} to a neutral score; it is injected again.")
        return
    credit = api.report_outcome(
        db, worked=verdict == "worked", source=ACTOR, config=cfg, memory_id=memory_id, reason=reason
    )
    if as_json:
        echo_json(credit)
    else:
        say(
            f"Memory {credit['memory_id']}: {api.describe_change(credit)} "
            f"(credit #{credit['id']})."
        )


def _task_verdict(task_id: str, verdict: str, reason: str | None, as_json: bool) -> None:
    from memory_layer import api
    from memory_layer.cli.common import current_project

    if verdict == "restore":
        raise click.UsageError("--restore is for --memory.")
    db = open_store()
    if verdict == "undo":
        result = api.undo_outcome(db, task_id, actor=ACTOR, source="cli")
    else:
        result = api.report_outcome(
            db,
            worked=verdict == "worked",
            source=ACTOR,
            config=config(),
            task_id=task_id,
            reason=reason,
            project=current_project(None),
        )
    if as_json:
        echo_json(result.to_dict())
        return
    # The headline ends at ": " (task ids contain bare colons: claude:<list>:3).
    say(result.message.split(": ", 1)[0] + f" ({result.action}).")
    if result.reversed:
        _print_credits(db, result.reversed, "reversed")
    _print_credits(db, result.credits, "credited")


@cli.group()
def tasks() -> None:
    """Tasks from Claude Code and Beads, and the memories they credited.

    \b
    Examples:
        memory-layer tasks list
        memory-layer tasks show bd-a3f8
        memory-layer tasks sync
    """


@tasks.command(name="list")
@click.option("-n", "--limit", type=int, default=50, show_default=True)
@click.option("--offset", type=int, default=0, show_default=True)
@json_option
def tasks_list(limit: int, offset: int, as_json: bool) -> None:
    """List tasks, most recently changed first.

    \b
    Example:
        memory-layer tasks list --json
    """
    from memory_layer.api import list_tasks

    rows = list_tasks(open_store(), limit=limit, offset=offset)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        say("No tasks yet.", err=True)
    for row in rows:
        say(
            f"{row['id']:<40} {row['status']:<11} {row['outcome'] or 'open':<8} "
            f"{row['credits']:>2} credited  {short(row['subject'] or '', 50)}"
        )


@tasks.command(name="show")
@click.argument("task_id")
@json_option
def tasks_show(task_id: str, as_json: bool) -> None:
    """Show a task, its events, and each memory it judged with the evidence.

    \b
    Example:
        memory-layer tasks show 3
    """
    from memory_layer.api import task_detail

    db = open_store()
    info = task_detail(db, task_id)
    if as_json:
        echo_json(info)
        return
    for key in (
        "id",
        "source",
        "subject",
        "project",
        "status",
        "outcome",
        "reason",
        "opened_at",
        "started_at",
        "closed_at",
    ):
        say(f"{key:>10}: {info.get(key)}")
    say("events:")
    for ev in info["events"]:
        mark = "" if ev["applied"] else f"  (not applied: {ev['note']})"
        say(f"  {ev['at']}  {ev['event']:<7} {ev['status'] or '':<11} {ev['source']}{mark}")
    say("memories:")
    for credit in info["credits"]:
        state = " reversed" if credit["reversed_at"] else ""
        say(
            f"  #{credit['id']} {credit['memory_id']} {credit['outcome']} weight "
            f"{credit['weight']:g} applied {credit['applied']:+.2f}{state}  "
            f"{short(credit.get('memory_text') or '', 50)}"
        )
        for ev in credit["evidence"]:
            say(f"      {ev.get('kind')}: {ev.get('detail') or ev.get('how') or ''}")


@tasks.command(name="sync")
@click.option(
    "--tasks-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Claude Code's task lists (default: outcomes.tasks_dir, ~/.claude/tasks).",
)
@json_option
def tasks_sync(tasks_dir: Path | None, as_json: bool) -> None:
    """Catch up with Claude Code task files: apply completions the hooks missed.

    The hooks also do this for the current session at SessionStart, Stop and SessionEnd.

    \b
    Example:
        memory-layer tasks sync
    """
    from memory_layer.api import reconcile_tasks as reconcile

    report = reconcile(open_store(), directory=tasks_dir, config=config())
    if as_json:
        echo_json(report.to_dict())
        return
    say(
        f"{report.lists} list(s), {report.files} task file(s): "
        f"{len(report.applied)} change(s), {len(report.skipped)} skipped."
    )
    for item in report.applied:
        say(f"  {item['message']}")


@cli.group()
def beads() -> None:
    """Beads (bd) integration: closes and reopens credit the memories used.

    \b
    Examples:
        memory-layer beads install
        memory-layer beads sync
    """


_REPO = click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    help="The repository holding .beads (default: found from the current directory).",
)


@beads.command(name="install")
@_REPO
@click.option("--force", is_flag=True, help="Replace hooks not written by memory-layer.")
def beads_install(repo: Path | None, force: bool) -> None:
    """Add .beads/hooks/on_close and on_update to a repository.

    They call this memory-layer (the interpreter running now, else `memory-layer` on
    PATH), discard their output and always exit 0, so they never block or fail bd.

    \b
    Example:
        cd my-repo && memory-layer beads install
    """
    from memory_layer.api import find_beads_repo
    from memory_layer.api import install_beads_hook as install

    root = repo.resolve() if repo else find_beads_repo()
    for path in install(root, force=force):
        say(f"Installed {path}")


@beads.command(name="sync")
@_REPO
@click.option("--no-bd", is_flag=True, help="Do not run `bd list`; read the files only.")
@json_option
def beads_sync(repo: Path | None, no_bd: bool, as_json: bool) -> None:
    """Catch up from .beads/interactions.jsonl, .beads/issues.jsonl and `bd list`.

    Safe to repeat: what was already applied is not applied again.

    \b
    Example:
        memory-layer beads sync --json
    """
    from memory_layer.api import find_beads_repo
    from memory_layer.api import sync_beads as sync

    root = repo.resolve() if repo else find_beads_repo()
    report = sync(open_store(), root, use_bd=not no_bd, config=config())
    if as_json:
        echo_json(report.to_dict())
        return
    say(
        f"{report.issues} issue(s), {report.interactions} interaction(s), bd: {report.bd}: "
        f"{len(report.applied)} change(s)."
    )
    for item in report.applied:
        say(f"  {item['message']}")
    for line in report.skipped:
        say(f"  skipped {line}", err=True)


@beads.command(name="hook", hidden=True)
@click.argument("issue_id")
@click.argument("event")
@_REPO
def beads_hook(issue_id: str, event: str, repo: Path | None) -> None:
    """What the installed .beads/hooks scripts run (issue JSON on stdin). Never fails:
    problems go to the log in ~/.memory-layer/logs/beads.log."""
    from memory_layer.paths import logs_dir

    payload = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
    try:
        from memory_layer.api import on_beads_hook

        on_beads_hook(open_store(), issue_id, event, payload, repo=repo, config=config())
    except Exception as exc:  # bd ignores our exit status anyway; keep a trace
        import traceback

        try:
            logs = logs_dir()
            logs.mkdir(parents=True, exist_ok=True)
            with (logs / "beads.log").open("a", encoding="utf-8") as fh:
                fh.write(f"{issue_id} {event}: {exc!r}\n{traceback.format_exc()}\n")
        except OSError:
            pass
