"""review, dispute, verify, log, mirror, backup and mcp: the trust and sharing commands."""

from __future__ import annotations

from typing import Any

import click

from memory_layer.api import counted
from memory_layer.cli import cli
from memory_layer.cli.common import config, echo_json, json_option, open_store, say, short

ACTOR = "cli"


def _print_item(item: dict[str, Any]) -> None:
    where = item.get("project") or "global"
    scene = f" · scene {item['scene']}" if item.get("scene") else ""
    say(f"{item['id']}  {item['kind']:<10} {item['why']}")
    if item["kind"] == "conflict":
        say(f"    {item['subject']} / {item['key']} · {where}")
        for cand in item["candidates"]:
            say(
                f"    - {cand['memory_id']}  {short(cand['text'], 70)}  (from {cand['source']})"
            )
        return
    fact = f"{item['subject']} / {item['key']} = " if item.get("subject") else ""
    say(f"    [{item['category']}] {fact}{short(item['text'], 100)}")
    if item["kind"] == "change":
        say(f"    → proposed: {short(item['proposed_text'], 100)}")
    origin = f" · origin {item['origin']}" if item.get("origin") else ""
    say(f"    {where}{scene} · by {item['source']}{origin} · {item['created_at'][:19]}")


@cli.group(invoke_without_command=True)
@json_option
@click.pass_context
def review(ctx: click.Context, as_json: bool) -> None:
    """The review inbox: what waits for a person before agents may see it.

    Without a subcommand, lists the inbox: pending proposals (new), proposed
    changes (change), conflicting values of a fact (conflict), disputed records,
    records edited since they were verified (unverified) and overdue ones.

    \b
    Examples:
        memory-layer review
        memory-layer review accept 3f2a --reason "matches the runbook"
        memory-layer review revise 3f2a --text "Deploy with fly deploy --strategy rolling"
        memory-layer review reject p1c2 --reason "we moved off Heroku"
        memory-layer review accept c9d1 --choose 77ab --reason "checked on the host"
    """
    if ctx.invoked_subcommand is not None:
        return
    from memory_layer.api import inbox

    cfg = config()
    items = inbox(open_store(), config=cfg)
    if as_json:
        echo_json(items)
        return
    if not items:
        say("The review inbox is empty.", err=True)
        return
    for item in items:
        _print_item(item)
    say(
        f"{len(items)} item(s). Decide with `memory-layer review accept|revise|reject ID`.",
        err=True,
    )


def _decide(
    item_id: str,
    decision: str,
    reason: str | None,
    text: str | None,
    choose: str | None,
    as_json: bool,
) -> None:
    from memory_layer.api import decide
    from memory_layer.cli.common import embedder_for

    cfg = config()
    db = open_store()
    result = decide(
        db,
        item_id,
        decision,
        actor=ACTOR,
        reason=reason,
        revised_text=text,
        choose=choose,
        config=cfg,
        embedder=embedder_for(cfg, wanted=text is not None),
    )
    if as_json:
        echo_json(result)
        return
    memory = result.get("memory")
    done = {"accept": "Accepted", "revise": "Revised and accepted", "reject": "Rejected"}
    suffix = f": {memory['id']} is now {memory['status']}" if memory else ""
    say(f"{done[decision]} {result['item_id']}{suffix}.")
    if result.get("confirmed"):
        say(f"Confirmed {result['confirmed']['id']}, the only value left.")


@review.command()
@click.argument("item_id")
@click.option("--reason", help="Why; kept in the history.")
@click.option("--choose", help="For a conflict id: the candidate memory to confirm.")
@json_option
def accept(item_id: str, reason: str | None, choose: str | None, as_json: bool) -> None:
    """Accept an inbox item: the record (or change, or chosen value) becomes what agents see.

    Stores the approver, the time, a review-by date and the sha256 of the text.

    \b
    Examples:
        memory-layer review accept 3f2a --reason "matches the runbook"
        memory-layer review accept c9d1 --choose 77ab
    """
    _decide(item_id, "accept", reason, None, choose, as_json)


@review.command()
@click.argument("item_id")
@click.option("--text", required=True, help="The corrected text to accept instead.")
@click.option("--reason", required=True, help="Why; kept in the history.")
@click.option("--choose", help="For a conflict id: the candidate memory to confirm.")
@json_option
def revise(item_id: str, text: str, reason: str, choose: str | None, as_json: bool) -> None:
    """Accept an inbox item with a corrected text.

    \b
    Example:
        memory-layer review revise 3f2a --text "Use pnpm 9, not npm" --reason "version"
    """
    _decide(item_id, "revise", reason, text, choose, as_json)


@review.command()
@click.argument("item_id")
@click.option("--reason", required=True, help="Why; kept in the history.")
@json_option
def reject(item_id: str, reason: str, as_json: bool) -> None:
    """Reject an inbox item: agents never see it; the history keeps it.

    \b
    Example:
        memory-layer review reject 3f2a --reason "one-off workaround, not a rule"
    """
    _decide(item_id, "reject", reason, None, None, as_json)


@cli.command()
@click.argument("memory_id")
@click.option("--reason", required=True, help="What is wrong with it.")
@json_option
def dispute(memory_id: str, reason: str, as_json: bool) -> None:
    """Mark a record as wrong: every agent stops receiving it until it is reviewed.

    \b
    Example:
        memory-layer dispute 3f2a --reason "staging moved to eu-west-2"
    """
    from memory_layer.api import dispute as do_dispute

    memory = do_dispute(open_store(), memory_id, actor=ACTOR, reason=reason)
    if as_json:
        echo_json(memory.to_dict())
        return
    say(f"Disputed {memory.id}; `memory-layer review` lists it for a decision.")


@cli.command()
@click.argument("memory_id")
@click.option("--reason", help="Why it is right; kept in the history.")
@json_option
def verify(memory_id: str, reason: str | None, as_json: bool) -> None:
    """Vouch for a record's current text: restamp its checksum, approver and review date.

    Use it after checking a record that was edited outside memory-layer (in the
    mirror, or with SQL) or that is overdue for review.

    \b
    Example:
        memory-layer verify 3f2a --reason "re-checked against the deploy script"
    """
    from memory_layer.api import agent_withheld_reason
    from memory_layer.api import verify as do_verify

    cfg = config()
    db = open_store()
    from memory_layer.api import get_memory

    current = get_memory(db, memory_id)
    if current.status not in {"active", "disputed", "pending"}:
        raise click.ClickException(
            f"Memory {current.id} is {current.status}; `memory-layer review` decides on it, "
            "or `memory-layer restore` brings a retired one back."
        )
    memory = do_verify(db, current.id, actor=ACTOR, config=cfg, reason=reason)
    if as_json:
        echo_json(memory.to_dict())
        return
    still = agent_withheld_reason(memory, cfg)
    say(
        f"Verified {memory.id}; review by {memory.extra.get('review_by') or 'never'}."
        + (f" Still withheld: {still}." if still else "")
    )


@cli.command(name="log")
@click.option("--since", help="Only operations at or after this time (ISO, or 30m / 12h / 7d).")
@click.option("--after-id", type=int, default=0, help="Only operations after this op id (replay).")
@click.option("-m", "--memory", "memory_id", help="Only operations on this memory.")
@click.option("-n", "--limit", type=int, help="At most this many operations.")
@json_option
def log_command(
    since: str | None, after_id: int, memory_id: str | None, limit: int | None, as_json: bool
) -> None:
    """The operations log: who changed what, when, with old and new values.

    A client catches up by replaying it: remember the last op id it has seen and
    ask for `--after-id` that id next time (ids only grow).

    \b
    Examples:
        memory-layer log --since 1d
        memory-layer log --after-id 1200 --json
        memory-layer log -m 3f2a
    """
    from memory_layer.api import get_memory, history, operations, parse_since, summarise

    db = open_store()
    if memory_id:
        ops = [op for op in history(db, get_memory(db, memory_id).id) if op.id > after_id]
        if since:
            cutoff = parse_since(since)
            ops = [op for op in ops if op.at >= cutoff]
        ops = ops[:limit] if limit else ops
    else:
        ops = operations(
            db, since=parse_since(since) if since else None, after_id=after_id, limit=limit
        )
    if as_json:
        echo_json([op.to_dict() for op in ops])
        return
    for op in ops:
        target = op.memory_id or "-"
        say(
            f"{op.id:>6}  {op.at[:19]}  {op.actor:<14} {op.action:<16} {target:<16} "
            f"{short(summarise(op), 80)}"
        )


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--commit", "do_commit", is_flag=True, help="Commit a git snapshot after syncing.")
@json_option
def mirror(directory: str, do_commit: bool, as_json: bool) -> None:
    """Sync a folder of Markdown files, one per record (readable in Obsidian).

    Each file has YAML frontmatter (id, category, scope, scene, status, source,
    review date, checksum) and the text as its body. Edits you make to a body come
    back on the next sync as a change to that record which agents do not see until
    it is verified (`memory-layer review`); a new file without an id becomes a
    pending proposal. --commit snapshots the folder in git (created if needed).

    \b
    Examples:
        memory-layer mirror ~/notes/memory
        memory-layer mirror ~/notes/memory --commit
    """
    from pathlib import Path

    from memory_layer.mirror import sync

    report = sync(open_store(), Path(directory).expanduser(), config=config(), commit=do_commit)
    if as_json:
        echo_json(report)
        return
    say(
        f"Wrote {report['written']} file(s), removed {report['removed']}; "
        f"{len(report['edited'])} edit(s) and {len(report['new'])} new file(s) came back "
        "for review." + (f" Committed {report['commit'][:10]}." if report.get("commit") else "")
    )
    for item in report["skipped"]:
        say(f"Skipped {item['file']}: {item['why']}.", err=True)


@cli.group(invoke_without_command=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Backup file to write.")
@json_option
@click.pass_context
def backup(ctx: click.Context, output: str | None, as_json: bool) -> None:
    """Copy the database consistently, even while other processes use it.

    Default destination: backups/memories-<time>.db in the memory-layer directory.
    `memory-layer backup restore FILE` puts a backup back.

    \b
    Examples:
        memory-layer backup
        memory-layer backup -o /mnt/usb/memories.db
        memory-layer backup restore ~/.memory-layer/backups/memories-20260101T120000Z.db
    """
    if ctx.invoked_subcommand is not None:
        return
    from pathlib import Path

    from memory_layer.api import backup as do_backup

    info = do_backup(Path(output).expanduser() if output else None)
    if as_json:
        echo_json(info)
        return
    say(f"Backed up {counted(info['memories'], 'memory', 'memories')} to {info['path']}.")


@backup.command(name="restore")
@click.argument("file", type=click.Path(dir_okay=False))
@json_option
def backup_restore(file: str, as_json: bool) -> None:
    """Replace the store with the backup FILE, exactly; the current store is kept.

    Stops the background engine first (what it acknowledged is written to the current
    store before it is set aside), and refuses while another process (the dashboard,
    an MCP server, a Claude Code session's hook) has the store open. FILE must pass
    SQLite's integrity check and hold a schema this version knows. The current files
    are kept as backups/replaced-<time>.db, so a restore can itself be undone.

    \b
    Examples:
        memory-layer backup restore ~/.memory-layer/backups/memories-20260101T120000Z.db
        memory-layer backup restore /mnt/usb/memories.db --json
    """
    from pathlib import Path

    from memory_layer.api import restore_backup
    from memory_layer.engine.lifecycle import stop
    from memory_layer.engine.server import replay_into

    stop()
    unreplayed = replay_into()
    info = restore_backup(Path(file))
    info["unreplayed_journal"] = unreplayed
    if as_json:
        echo_json(info)
        return
    click.echo(
        f"Restored {info['memories']} memories and {info['operations']} operations "
        f"from {info['restored']}."
    )
    if info["previous"]:
        click.echo(
            f"The previous store is kept at {info['previous'][0]} "
            f"(`memory-layer backup restore {info['previous'][0]}` puts it back)."
        )
    if unreplayed:
        click.echo(f"Engine events that could not be written to the old store: {unreplayed}.")


@cli.command()
@click.option("-p", "--project", help="Project to serve (default: the working directory's).")
@click.option("--scene", help="The client's scene (deploy, server_ops, coding...).")
@click.option("--client", help="Name the client for provenance (default: what it reports).")
def mcp(project: str | None, scene: str | None, client: str | None) -> None:
    """Serve memory over MCP on stdin/stdout, for Codex, Cursor, Claude Code...

    Tools: search, read, check, propose, report_outcome, dispute. There is no tool to
    approve, delete or retire: proposals wait in `memory-layer review`.

    \b
    Examples:
        memory-layer mcp
        memory-layer mcp --scene deploy --client codex
    """
    from memory_layer.mcp_server import run

    run(project=project, scene=scene, client=client)
