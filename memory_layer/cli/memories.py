"""remember, recall, list, show, edit, forget, restore."""

from __future__ import annotations

import sys
from typing import Any

import click

from memory_layer.cli import cli
from memory_layer.cli.common import (
    config,
    current_project,
    echo_json,
    embedder_for,
    json_option,
    open_store,
    short,
)
from memory_layer.errors import InvalidInput
from memory_layer.models import CATEGORIES

CATEGORY_HELP = "One of: " + ", ".join(CATEGORIES) + "."


def _read_text(text: str) -> str:
    if text != "-":
        return text
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"Standard input is not valid UTF-8 (byte {exc.start}). Re-encode it as UTF-8."
        ) from None


@cli.command()
@click.argument("text")
@click.option("-c", "--category", default="general", show_default=True, help=CATEGORY_HELP)
@click.option("-p", "--project", help="Project id (default: the current git project).")
@click.option("-g", "--global", "is_global", is_flag=True, help="Store for every project.")
@click.option("-t", "--tag", "tags", multiple=True, help="A tag; repeat for more.")
@click.option("-s", "--source", default="cli", show_default=True, help="Who is writing this.")
@click.option("--confidence", type=float, help="0 to 1 (default: remember.default_confidence).")
@click.option("--scene", help="Scene it belongs to (deploy, server_ops, coding...).")
@click.option("--subject", help="Structured fact: what it is about (e.g. prod-server).")
@click.option("--key", help="Structured fact: which property (e.g. os); TEXT is the value.")
@json_option
def remember(
    text: str,
    category: str,
    project: str | None,
    is_global: bool,
    tags: tuple[str, ...],
    source: str,
    confidence: float | None,
    scene: str | None,
    subject: str | None,
    key: str | None,
    as_json: bool,
) -> None:
    """Store a memory (TEXT, or - to read it from stdin) and print its id.

    A near-duplicate of an existing memory in the same scope reinforces that memory
    instead of adding a copy, and says so.

    \b
    Examples:
        memory-layer remember "pg_dump needs --no-owner for the staging restore" -c gotcha
        memory-layer remember "Prefer ruff over flake8" -c tool_preference --global
        git log -1 --format=%B | memory-layer remember - -c decision
        memory-layer remember "ubuntu 22.04" --subject prod-server --key os --scene server_ops
    """
    # Through the trust policy: the source decides active or pending (docs/sharing.md).
    from memory_layer.trust.facts import write as do_remember

    if is_global and project:
        raise click.UsageError("Use either --project or --global, not both.")
    cfg = config()
    db = open_store()
    result = do_remember(
        db,
        _read_text(text),
        config=cfg,
        category=category,
        project=None if is_global else current_project(project),
        tags=list(tags),
        source=source,
        confidence=confidence,
        embedder=embedder_for(cfg),
        scene=scene,
        subject=subject,
        key=key,
    )
    # Notices go to stderr in both modes, so `--json` output stays parseable.
    if result.memory.status == "conflict":
        click.echo(
            "Another source recorded a different value for this fact: both are now "
            "candidates until you choose one (`memory-layer review`).",
            err=True,
        )
    elif result.memory.status != "active":
        click.echo(
            f"Stored as {result.memory.status}: agents do not see it until it is reviewed "
            "(`memory-layer review`).",
            err=True,
        )
    if not result.created:
        click.echo(
            f"Reinforced existing memory {result.memory.id} instead of adding a copy "
            f"(now used {result.memory.use_count}x).",
            err=True,
        )
    if as_json:
        echo_json({**result.memory.to_dict(), "created": result.created})
    else:
        click.echo(result.memory.id)


def _format_result(rank: int, item: Any, explain: bool) -> str:
    memory = item.memory
    where = memory.project or "global"
    lines = [
        f"{rank}. [{memory.category}] {short(memory.text, 160)}",
        f"   id {memory.id} · {where} · score {item.score:.3f}",
    ]
    if explain:
        s = item.scores
        e = item.explain
        lines.append(
            "   similarity {:.3f} (keyword {:.3f}, vector {}) · outcome {:.3f} · recency {:.3f} "
            "(age {:.1f}d) · frequency {:.3f} · confidence {:.3f}".format(
                s["similarity"],
                e["keyword"],
                "n/a" if e["vector"] is None else f"{e['vector']:.3f}",
                s["outcome"],
                s["recency"],
                e["age_days"],
                s["frequency"],
                s["confidence"],
            )
        )
        weighted = " + ".join(f"{k} {v:.3f}" for k, v in e["weighted"].items())
        lines.append(
            f"   = ({weighted}) = {e['base']:.3f} × boost {s['boost']:.2f} "
            f"[{e['boost_reason']}] = {item.score:.3f}"
        )
    return "\n".join(lines)


@cli.command()
@click.argument("query")
@click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=None, help="How many results (default 8)."
)
@click.option("-p", "--project", help="Project id (default: the current git project).")
@click.option("--all-projects", is_flag=True, help="Search every project.")
@click.option("--no-global", is_flag=True, help="Leave out global memories.")
@click.option("-c", "--category", help="Only this category.")
@click.option("--keyword-only", is_flag=True, help="Skip the embedding model.")
@click.option("--scene", help="Only this scene plus memories without a scene.")
@click.option("--explain", is_flag=True, help="Show every term, the boost and why.")
@click.option(
    "--include-sinking",
    is_flag=True,
    help="Also show memories at or below the outcome floor (withheld from injection).",
)
@json_option
def recall(
    query: str,
    limit: int | None,
    project: str | None,
    all_projects: bool,
    no_global: bool,
    category: str | None,
    keyword_only: bool,
    scene: str | None,
    explain: bool,
    include_sinking: bool,
    as_json: bool,
) -> None:
    """Find the memories that best answer QUERY, best first.

    Searches the current project plus global memories unless told otherwise, ranking
    by 0.35·similarity + 0.25·outcome + 0.15·recency + 0.15·frequency + 0.10·confidence,
    times the category boost when the query's intent matches the category.

    \b
    Examples:
        memory-layer recall "how do we run migrations"
        memory-layer recall "ECONNREFUSED" --explain
        memory-layer recall "deploy" --all-projects --json
        memory-layer recall "ECONNREFUSED" --include-sinking
    """
    from memory_layer.outcomes import is_sinking
    from memory_layer.retrieval.search import Scope
    from memory_layer.retrieval.search import recall as do_recall

    cfg = config()
    if all_projects and project:
        raise click.UsageError("Use either --project or --all-projects, not both.")
    if all_projects:
        scope = Scope(projects=None, category=category)
    else:
        scope = Scope.for_project(
            current_project(project), include_global=not no_global, category=category
        )
    if scene:
        import dataclasses

        from memory_layer.trust.facts import clean_scene

        scope = dataclasses.replace(scope, scenes=(clean_scene(scene) or "",))
    db = open_store()
    results = do_recall(
        db,
        query,
        scope=scope,
        config=cfg,
        limit=limit if limit is not None else int(cfg["retrieval"]["default_limit"]),
        embedder=embedder_for(cfg, wanted=not keyword_only),
        # Sinking memories (outcome at or below outcomes.floor) only on request.
        visible=None if include_sinking else (lambda m: not is_sinking(m, cfg)),
    )
    from memory_layer.trust.visibility import withheld_reason

    # /recall hands this output to the agent: say which records the trust layer
    # withholds from agents (edited since verification, overdue) so they are not
    # applied as if reviewed.
    if as_json:
        echo_json(
            [
                {
                    **item.to_dict(),
                    "sinking": is_sinking(item.memory, cfg),
                    "withheld": withheld_reason(item.memory, cfg),
                }
                for item in results
            ]
        )
        return
    if not results:
        click.echo("No matching memories.", err=True)
        return
    left_out = results[0].explain.get("vector_query_left_out")
    if explain and left_out:
        click.echo(
            "Left out of the embedded query (in over "
            f"{cfg['retrieval']['vector_common_share']:.0%} of the searched memories; "
            f"keywords still use them): {', '.join(left_out)}"
        )
    for position, item in enumerate(results, 1):
        click.echo(_format_result(position, item, explain))
        reason = withheld_reason(item.memory, cfg)
        if reason:
            click.echo(f"   withheld from agents: {reason}")
        if is_sinking(item.memory, cfg):
            click.echo(
                f"   sinking: outcome {item.memory.outcome_score:+.2f}, withheld from injection "
                f"(`memory-layer outcome --memory {item.memory.id} --restore`)"
            )


@cli.command(name="list")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("-p", "--project", help="Only this project (use 'global' for global ones).")
@click.option("-c", "--category", help="Only this category.")
@click.option("--status", help="Only this status (default: every status).")
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
    from memory_layer.listing import Filters, list_memories

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
        click.echo(
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
    from memory_layer.listing import details

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
        click.echo(f"{key:>16}: {value}")
    for line in info.get("notes", []):
        click.echo(f"{'':>16}  {line}")
    click.echo("history:")
    for op in info["history"]:
        who = op["actor"]
        click.echo(f"  {op['at']}  {op['action']:<10} by {who}: {op['summary']}")


@cli.command()
@click.argument("memory_id")
@click.option("--text", help="New text (without options, $EDITOR opens).")
@click.option("-c", "--category", help="New category.")
@click.option("-t", "--tag", "tags", multiple=True, help="Replace the tags.")
@click.option("--confidence", type=float, help="New confidence, 0 to 1.")
@json_option
def edit(
    memory_id: str,
    text: str | None,
    category: str | None,
    tags: tuple[str, ...],
    confidence: float | None,
    as_json: bool,
) -> None:
    """Change a memory. History keeps the old values.

    \b
    Examples:
        memory-layer edit 3f2a --category gotcha
        memory-layer edit 3f2a            # opens $EDITOR on the text
    """
    from memory_layer.memories import edit as do_edit
    from memory_layer.storage.records import get_memory

    cfg = config()
    db = open_store()
    if text is None and category is None and not tags and confidence is None:
        current = get_memory(db, memory_id)
        edited = click.edit(current.text)
        if edited is None or edited.strip() == current.text.strip():
            click.echo("No change.", err=True)
            return
        text = edited
    memory = do_edit(
        db,
        memory_id,
        config=cfg,
        text=text,
        category=category,
        tags=list(tags) if tags else None,
        confidence=confidence,
        embedder=embedder_for(cfg) if text is not None else None,
    )
    if text is not None:
        from memory_layer.trust.verify import verify_if_trusted

        # The text you wrote is vouched for like your own write (the trust policy
        # decides). Changing only tags or confidence vouches for nothing: a text
        # still waiting for review stays withheld until someone reviews it.
        memory = verify_if_trusted(db, memory.id, source="cli", config=cfg)
    if as_json:
        echo_json(memory.to_dict())
    else:
        click.echo(f"Updated {memory.id}.")


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
    from memory_layer.memories import forget as do_forget
    from memory_layer.storage.records import delete_memory, get_memory

    db = open_store()
    if purge:
        memory = get_memory(db, memory_id)
        if not yes:
            click.confirm(
                f'Delete memory {memory.id} for good? "{short(memory.text, 60)}"', abort=True
            )
        delete_memory(db, memory.id, actor="cli", context={"reason": reason} if reason else None)
        click.echo(f"Purged {memory.id}.")
        return
    memory = do_forget(db, memory_id, reason=reason)
    click.echo(f"Retired {memory.id}. `memory-layer restore {memory.id}` brings it back.")


@cli.command()
@click.argument("memory_id")
@click.option("--reason", help="Why; kept in the history.")
def restore(memory_id: str, reason: str | None) -> None:
    """Make a retired (or otherwise withheld) memory active again.

    \b
    Example:
        memory-layer restore 3f2a
    """
    from memory_layer.memories import restore as do_restore

    memory = do_restore(open_store(), memory_id, reason=reason)
    click.echo(f"Restored {memory.id}.")
