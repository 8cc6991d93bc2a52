"""remember, recall, list, show, edit, forget, restore."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from memory_layer.cli import cli, spec
from memory_layer.cli.common import (
    config,
    echo_json,
    embedder_for,
    json_option,
    open_store,
    say,
    short,
)
from memory_layer.models import CATEGORIES, STATUSES

CATEGORY_HELP = "One of: " + ", ".join(CATEGORIES) + "."


def spec_options(table: tuple[spec.Opt, ...], **help_for: str) -> Callable[[Any], Any]:
    """The click options of a command, from the table the fast path parses too."""

    def apply(fn: Any) -> Any:
        for opt in reversed(table):
            kwargs: dict[str, Any] = {"help": help_for.get(opt.dest, opt.help)}
            if opt.kind == spec.FLAG:
                kwargs["is_flag"] = True
            elif opt.kind == spec.COUNT:
                kwargs["type"] = click.IntRange(min=1)
            elif opt.kind == spec.WHOLE:
                kwargs["type"] = click.IntRange(min=0)
            elif opt.kind == spec.NUMBER:
                kwargs["type"] = float
            elif opt.kind == spec.MANY:
                kwargs["multiple"] = True
            elif opt.default is not None:
                kwargs.update(default=opt.default, show_default=True)
            fn = click.option(*opt.names, opt.dest, **kwargs)(fn)
        return fn

    return apply


def _engine_reply(ctx: click.Context, op: str, request: Any) -> dict[str, Any] | None:
    """The warm engine's answer, unless the fast path asked it already (and it did not
    answer): then this process answers by itself."""
    from memory_layer.cli.fast import ask_engine

    if (ctx.obj or {}).get("engine_asked"):
        return None
    return ask_engine(op, request)


@cli.command()
@click.argument("text")
@spec_options(spec.REMEMBER, category=CATEGORY_HELP)
@click.pass_context
def remember(ctx: click.Context, text: str, **values: Any) -> None:
    """Store a memory (TEXT, or - to read it from stdin) and print its id.

    A near-duplicate of an existing memory in the same scope reinforces that memory
    instead of adding a copy, and says so. Answered by the warm engine when one is
    running (no model load here), else in this process.

    \b
    Examples:
        memory-layer remember "pg_dump needs --no-owner for the staging restore" -c gotcha
        memory-layer remember "Prefer ruff over flake8" -c tool_preference --global
        git log -1 --format=%B | memory-layer remember - -c decision
        memory-layer remember "ubuntu 22.04" --subject prod-server --key os --scene server_ops
        memory-layer remember "Caroline: Three times a week." --thread chat-7 --position 12

    With --thread, the memory is a turn of that conversation: it is never merged into a
    memory with the same words (turns repeat), and recall lets it inherit part of the
    relevance of the turn before it (retrieval.thread_share), so the reply to the
    question a query repeats is found. Writing the same text at the same place again
    changes nothing.
    """
    from memory_layer import api
    from memory_layer.cli.fast import read_stdin, remember_request, show

    if values["is_global"] and values["project"]:
        raise click.UsageError("Use either --project or --global, not both.")
    if text == "-":
        text = (ctx.obj or {}).get("stdin_text") or read_stdin()
    request = remember_request(text, values)
    cfg = config()
    # Refused here, before the engine or the model is asked.
    api.check_memory_input(
        request.text,
        config=cfg,
        category=request.category,
        tags=list(request.tags),
        confidence=request.confidence,
    )
    reply = _engine_reply(ctx, "remember", request)
    if reply is None:
        record = api.remember_record(
            open_store(), request, config=cfg, embedder=embedder_for(cfg)
        )
        reply = {"ok": True, "records": [record]}
    ctx.exit(show("remember", reply, as_json=values["as_json"]))


@cli.command()
@click.argument("query")
@spec_options(spec.RECALL)
@click.pass_context
def recall(ctx: click.Context, query: str, **values: Any) -> None:
    """Find the memories that best answer QUERY, best first.

    Searches the current project plus global memories unless told otherwise, ranking
    by 0.35·similarity + 0.25·outcome + 0.15·recency + 0.15·frequency + 0.10·confidence,
    times the category boost when the query's intent matches the category. The
    closest matches come first (by score among matches of about the same similarity);
    a line marks where the weaker ones, under retrieval.relative_floor of the best
    match's similarity, begin. Answered by the warm engine when one is running, else
    in this process.

    Run inside a Claude Code session (the session id comes from --session or
    $MEMORY_LAYER_SESSION_ID, which the plugin's SessionStart hook sets), the results an
    agent may see are recorded as recalled in that session, so a task that applies
    one credits it like an injected memory. --for-agent shows only those.

    \b
    Examples:
        memory-layer recall "how do we run migrations"
        memory-layer recall "ECONNREFUSED" --explain
        memory-layer recall "deploy" --all-projects --json
        memory-layer recall "ECONNREFUSED" --include-sinking
        memory-layer recall "staging restore" --for-agent --session "$SESSION"
    """
    from memory_layer import api
    from memory_layer.cli.fast import recall_request, show

    if values["all_projects"] and values["project"]:
        raise click.UsageError("Use either --project or --all-projects, not both.")
    request = recall_request(query, values)
    # Refused here, before the engine or the model is asked.
    api.check_query(request.query, limit=request.limit or 1, category=request.category)
    reply = _engine_reply(ctx, "recall", request)
    if reply is None:
        cfg = config()
        records = api.recall_records(
            open_store(),
            request,
            config=cfg,
            embedder=embedder_for(cfg, wanted=not request.keyword_only),
        )
        share = float(cfg["retrieval"]["vector_common_share"])
        reply = {"ok": True, "records": records, "common_share": share}
    ctx.exit(show("recall", reply, as_json=values["as_json"], explain=values["explain"]))


@cli.command(name="list")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("-p", "--project", help="Only this project (use 'global' for global ones).")
@click.option("-c", "--category", help="Only this category.")
@click.option(
    "--status",
    type=click.Choice(STATUSES, case_sensitive=False),
    help="Only this status (default: every status).",
)
@click.option("-s", "--source", help="Only memories written by this source.")
@click.option("-t", "--tag", help="Only memories with this tag.")
@json_option
def list_command(
    limit: int,
    offset: int,
    project: str | None,
    category: str | None,
    status: str | None,
    source: str | None,
    tag: str | None,
    as_json: bool,
) -> None:
    """List memories, newest first.

    \b
    Examples:
        memory-layer list --category gotcha
        memory-layer list --project github.com/acme/api --status retired --json
    """
    from memory_layer.api import Filters, list_memories

    db = open_store()
    memories = list_memories(
        db,
        Filters(project=project, category=category, status=status, source=source, tag=tag),
        limit=limit,
        offset=offset,
    )
    if as_json:
        echo_json([m.to_dict() for m in memories])
        return
    for memory in memories:
        where = memory.project or "global"
        say(
            f"{memory.id}  {memory.status:<8} {memory.category:<15} {where:<28} "
            f"{short(memory.text, 70)}"
        )


@cli.command()
@click.argument("memory_id")
@json_option
def show(memory_id: str, as_json: bool) -> None:
    """Show one memory with its scores, counts, status and history.

    \b
    Example:
        memory-layer show 3f2a
    """
    from memory_layer.api import details

    db = open_store()
    info = details(db, memory_id)
    if as_json:
        echo_json(info)
        return
    for key in (
        "id",
        "text",
        "category",
        "project",
        "tags",
        "source",
        "confidence",
        "status",
        "outcome_score",
        "success_count",
        "failure_count",
        "use_count",
        "last_used_at",
        "proven_at",
        "created_at",
        "updated_at",
        "embedding_model",
    ):
        value = info.get(key)
        if key == "project" and value is None:
            value = "global"
        # A multi-line text stays readable: its later lines indented under the first.
        say(f"{key:>16}: " + str(value).replace("\n", "\n" + " " * 18))
    for line in info.get("notes", []):
        say(f"{'':>16}  {line}")
    say("history:")
    for op in info["history"]:
        who = op["actor"]
        say(f"  {op['at']}  {op['action']:<10} by {who}: {op['summary']}")


def _need_terminal(memory_id: str) -> None:
    """An editor without a terminal hangs or prints escape codes into a pipe or a log."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise click.UsageError(
            "No change given, and there is no terminal to open $EDITOR in. Pass the change "
            f'as options, e.g. `memory-layer edit {memory_id} --text "..."` '
            "(or --category, --tag, --confidence)."
        )


@cli.command()
@click.argument("memory_id")
@click.option("--text", help="New text (without options, $EDITOR opens).")
@click.option("-c", "--category", help="New category.")
@click.option("-t", "--tag", "tags", multiple=True, help="Replace the tags.")
@click.option("--confidence", type=float, help="New confidence, 0 to 1.")
@click.option("--reason", help="For a team memory: why the change (shown to its reviewers).")
@json_option
def edit(
    memory_id: str,
    text: str | None,
    category: str | None,
    tags: tuple[str, ...],
    confidence: float | None,
    reason: str | None,
    as_json: bool,
) -> None:
    """Change a memory. History keeps the old values.

    A team memory is the team's reviewed text: editing it proposes the change to the
    team (queued if offline); this device's copy changes once a reviewer accepts it and
    it is pulled.

    \b
    Examples:
        memory-layer edit 3f2a --category gotcha
        memory-layer edit 3f2a            # opens $EDITOR on the text
        memory-layer edit tm3f2a9c1b --text "make test-all" --reason "the old target is gone"
    """
    from memory_layer import api
    from memory_layer.api import get_memory

    cfg = config()
    db = open_store()
    current = get_memory(db, memory_id)
    if api.is_team_memory(current):
        db.close()
        _propose_team_edit(current, text, category, tags, confidence, reason, as_json)
        return
    if text is None and category is None and not tags and confidence is None:
        _need_terminal(memory_id)
        edited = click.edit(current.text)
        if edited is None or edited.strip() == current.text.strip():
            say("No change.", err=True)
            return
        text = edited
    # The text you write is vouched for like your own write (the trust policy decides);
    # a tags- or confidence-only change vouches for nothing (api.edit).
    memory = api.edit(
        db,
        memory_id,
        config=cfg,
        actor="cli",
        text=text,
        category=category,
        tags=list(tags) if tags else None,
        confidence=confidence,
        embedder=embedder_for(cfg) if text is not None else None,
    )
    if as_json:
        echo_json(memory.to_dict())
    else:
        say(f"Updated {memory.id}.")


def _propose_team_edit(
    current: Any, text: str | None, category: str | None, tags: tuple[str, ...],
    confidence: float | None, reason: str | None, as_json: bool,
) -> None:
    """`edit` of a team memory: a change proposal to the team, never a local change."""
    from memory_layer import api

    if text is None and category is None and not tags and confidence is None:
        _need_terminal(current.id)
        edited = click.edit(current.text)
        if edited is None or edited.strip() == current.text.strip():
            say("No change.", err=True)
            return
        text = edited
    result = api.team_propose_edit(current.id, text=text, category=category,
                                   tags=list(tags) if tags else None, confidence=confidence,
                                   reason=reason)
    if as_json:
        echo_json(result)
        return
    if result["refused"]:
        raise click.ClickException(
            f"The team server refused the change: {result['refused'][0]['error']}")
    where = ("queued: the team server is unreachable, `memory-layer team sync` sends it"
             if result["offline"] else "sent")
    say(f"{current.id} is a team memory: your change was proposed to the team against "
        f"revision {result['base_revision']} ({where}). A reviewer there accepts or rejects "
        "it; this device's copy stays as it is until the change is accepted and pulled.")
    from memory_layer.cli.team import others_refused_note

    others_refused_note(result)


@cli.command()
@click.argument("memory_id")
@click.option("--purge", is_flag=True, help="Delete for good instead of retiring.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before purging.")
@click.option("--reason", help="Why; kept in the history.")
def forget(memory_id: str, purge: bool, yes: bool, reason: str | None) -> None:
    """Retire a memory so agents no longer see it (restorable), or --purge it.

    \b
    Examples:
        memory-layer forget 3f2a --reason "we moved to pnpm"
        memory-layer restore 3f2a
        memory-layer forget 3f2a --purge --yes
    """
    from memory_layer import api
    from memory_layer.api import get_memory

    db = open_store()
    if purge:
        memory = get_memory(db, memory_id)
        if not yes:
            click.confirm(
                f'Delete memory {memory.id} for good? "{short(memory.text, 60)}"', abort=True
            )
        api.purge(db, memory.id, actor="cli", reason=reason)
        say(f"Purged {memory.id}.")
        return
    memory = api.forget(db, memory_id, actor="cli", reason=reason)
    say(f"Retired {memory.id}. `memory-layer restore {memory.id}` brings it back.")


@cli.command()
@click.argument("memory_id")
@click.option("--reason", help="Why; kept in the history.")
def restore(memory_id: str, reason: str | None) -> None:
    """Make a retired (or otherwise withheld) memory active again.

    \b
    Example:
        memory-layer restore 3f2a
    """
    from memory_layer.api import restore as do_restore

    memory = do_restore(open_store(), memory_id, actor="cli", reason=reason)
    say(f"Restored {memory.id}.")
