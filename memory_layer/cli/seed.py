"""import-instructions and backfill: starting the store from what already exists."""

from __future__ import annotations

import click

from memory_layer.cli import cli
from memory_layer.cli.common import (
    config,
    echo_json,
    embedder_for,
    json_option,
    open_store,
    progress,
    say,
    short,
)


@cli.command(name="import-instructions")
@click.argument("paths", nargs=-1, required=True)
@click.option("-p", "--project", help="Project id (default: the project of each file's directory).")
@click.option("--global", "is_global", is_flag=True, help="Import as global memories.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option(
    "--no-embed", is_flag=True, help="Skip embeddings now; `memory-layer index` adds them."
)
@json_option
def import_instructions_command(
    paths: tuple[str, ...],
    project: str | None,
    is_global: bool,
    dry_run: bool,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Split agent-instruction files into memories, one rule, fact or command each.

    PATHS are files (CLAUDE.md, AGENTS.md, .cursorrules, .github/copilot-instructions.md,
    CONTRIBUTING.md, Cursor .mdc rules, any Markdown) or directories, searched for those
    files. Each memory keeps its file (source import:<file>, tagged with the file name)
    and section. Importing again changes nothing; after the file changed, reworded items
    update their memory (the operations log keeps the old text), removed items are
    retired, and a memory you edited since is never overwritten: the file's new wording
    goes to the review inbox instead.

    \b
    Examples:
        memory-layer import-instructions .
        memory-layer import-instructions CLAUDE.md AGENTS.md --dry-run
        memory-layer import-instructions ~/.claude/CLAUDE.md --json
    """
    from memory_layer.api import import_instructions

    cfg = config()
    db = open_store()
    reports = import_instructions(
        db,
        list(paths),
        config=cfg,
        project=project,
        is_global=is_global,
        dry_run=dry_run,
        embedder=None if dry_run else embedder_for(cfg, wanted=not no_embed),
    )
    if as_json:
        echo_json({"dry_run": dry_run, "files": [r.to_dict() for r in reports]})
        return
    verb = "Would import" if dry_run else "Imported"
    for report in reports:
        counts = ", ".join(f"{n} {action}" for action, n in report.counts().items()) or "nothing"
        say(
            f"{verb} {report.path} ({report.project or 'global'}): {report.items} items; {counts}."
        )
        for change in report.changes:
            if change.action == "unchanged":
                continue
            where = f" [{short(change.section, 40)}]" if change.section else ""
            say(
                f"  {change.action:<9} {change.category:<15} {short(change.text, 90)}{where}"
            )
            if change.old_text and change.old_text != change.text:
                say(f"  {'':<9} {'was':<15} {short(change.old_text, 90)}")


@cli.command(name="backfill")
@click.option(
    "--path",
    "paths",
    multiple=True,
    help="A transcript file or directory (default ~/.claude/projects); repeatable.",
)
@click.option(
    "-p", "--project", "projects", multiple=True, help="Only this project id (or pattern)."
)
@click.option("--since", help="Only transcripts changed since: an ISO time or 30m / 12h / 7d.")
@click.option("--dry-run", is_flag=True, help="Show what would be kept; write nothing.")
@click.option(
    "--no-embed", is_flag=True, help="Skip embeddings now; `memory-layer index` adds them."
)
@json_option
def backfill_command(
    paths: tuple[str, ...],
    projects: tuple[str, ...],
    since: str | None,
    dry_run: bool,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Capture memories from past Claude Code transcripts, as the hooks would have.

    Reads ~/.claude/projects/**/*.jsonl (or --path) through the hooks' own capture: the
    same extractors, confidence floor and trust policy (source hook:backfill). Each
    transcript is read from where the hooks or an earlier backfill stopped, so running
    it again changes nothing.

    \b
    Examples:
        memory-layer backfill --dry-run
        memory-layer backfill --since 30d --project github.com/acme/api
        memory-layer backfill --path ~/old-laptop/projects --json
    """
    from memory_layer.api import parse_since
    from memory_layer.hooks.backfill import backfill, transcript_files
    from memory_layer.models import utcnow

    cfg = config()
    files = transcript_files(paths, since=parse_since(since) if since else None)
    db = open_store()
    embedder = None if dry_run else embedder_for(cfg, wanted=not no_embed)
    runs = backfill(
        db,
        files,
        cfg,
        embedder=embedder,
        now=utcnow(),
        projects=projects,
        dry_run=dry_run,
        progress=progress("Reading transcripts"),
    )
    if as_json:
        echo_json({"dry_run": dry_run, "transcripts": [r.to_dict() for r in runs]})
        return
    kept = sum(len(r.kept) for r in runs)
    read = sum(1 for r in runs if r.end > r.start)
    verb = "would keep" if dry_run else "kept"
    say(f"{len(runs)} transcripts, {read} with new lines; {verb} {kept} memories.")
    for run in runs:
        if run.skipped:
            say(f"  skipped {run.path}: {run.skipped}")
        for item in run.kept:
            mark = " (already stored)" if item.already_stored else ""
            say(f"  {item.category:<15} {short(item.text, 100)}{mark}")
