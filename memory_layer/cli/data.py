"""import, export, index, stats."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import click

from memory_layer.api import counted
from memory_layer.cli import cli
from memory_layer.cli.common import (
    config,
    echo_json,
    embedder_for,
    json_option,
    open_store,
    progress,
    say,
)


def _batch_progress(label: str) -> Any:
    """backfill's progress: a bar counting memories (it steps over batch starts)."""

    def wrap(starts: range) -> Iterator[int]:
        if not sys.stderr.isatty():
            yield from starts
            return
        with click.progressbar(length=starts.stop, label=label, file=sys.stderr) as bar:
            for start in starts:
                yield start
                bar.update(min(starts.step, starts.stop - start))

    return wrap


@cli.command(name="import")
@click.argument("source", type=click.File("rb"))
@click.option(
    "--no-embed", is_flag=True, help="Skip embeddings now; `memory-layer index` adds them."
)
@json_option
def import_command(source: BinaryIO, no_embed: bool, as_json: bool) -> None:
    """Import memories from a JSONL FILE (or - for stdin).

    Each line is an object with at least "text"; optional "id", "category", "project",
    "tags", "source", "created_at", "confidence" (and everything `export` writes).
    Given ids are kept. A bad line is reported with its number and nothing is imported.
    Records already stored (same id, or same text in the same project) are skipped.

    A chat log imports as turns of a conversation: "thread" (the conversation's id) and
    "position" (its turn number; left out, the next one of the thread). Turns are never
    skipped for repeating another's words, only when their place holds the same text
    already; recall lets a turn inherit part of the relevance of the turn before it.

    \b
    Examples:
        memory-layer import memories.jsonl
        memory-layer export | ssh other-host memory-layer import -
        echo '{"text": "Ana: Three times a week.", "thread": "chat-7"}' | memory-layer import -
    """
    from memory_layer.api import import_records, read_lines

    cfg = config()
    records = read_lines(source, int(cfg["remember"]["max_chars"]))
    db = open_store()
    embedder = embedder_for(cfg, wanted=not no_embed)
    report = import_records(
        db,
        records,
        embedder=embedder,
        progress=progress("Embedding"),
        write_progress=progress("Importing"),
    )
    if as_json:
        echo_json({"imported": report.imported, "skipped": report.skipped})
    else:
        say(
            f"Imported {counted(report.imported, 'memory', 'memories')}; "
            f"skipped {report.skipped} already stored."
        )


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option(
    "-o",
    "--output",
    type=click.File("w", encoding="utf-8"),
    default="-",
    help="File to write (default: stdout).",
)
def export(fmt: str, output: Any) -> None:
    """Export every memory as JSONL; `import` reads it back unchanged.

    \b
    Examples:
        memory-layer export -o backup.jsonl
        memory-layer export | jq -r .text
    """
    from memory_layer.api import export_records

    for record in export_records(open_store()):
        output.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")


@cli.command()
@click.option("--force", is_flag=True, help="Re-embed every memory, not only missing ones.")
@json_option
def index(force: bool, as_json: bool) -> None:
    """Add embeddings to memories that lack one from the configured model (all, with --force).

    After `config set embedding.model ...`, this re-embeds the memories the previous
    model embedded. Recall keeps answering meanwhile: memories not yet re-embedded are
    found by keywords, and the warm engine picks up each batch of new vectors.

    \b
    Examples:
        memory-layer index
        memory-layer config set embedding.model multilingual && memory-layer index --force
    """
    from memory_layer.api import backfill, other_model_count, unembedded_count

    cfg = config()
    embedder = embedder_for(cfg)
    if embedder is None:
        from memory_layer.api import embedder_status

        raise click.ClickException(
            "The embedding model is not available: "
            + embedder_status(cfg).reason
            + ". Run `memory-layer doctor` for details."
        )
    db = open_store()
    missing = unembedded_count(db)
    replaced = other_model_count(db, embedder.model_id)
    count = backfill(db, embedder, force=force, progress=_batch_progress("Indexing"))
    if as_json:
        echo_json(
            {"embedded": count, "model": embedder.model_id, "without_vector": missing,
             "from_other_model": replaced}
        )
    else:
        detail = f" ({missing} had no vector, {replaced} had one from another model)"
        embedded = counted(count, 'memory', 'memories')
        say(f"Embedded {embedded} with {embedder.model_id}{detail if count else ''}.")


@cli.command()
@json_option
def stats(as_json: bool) -> None:
    """Counts by category, status, project and source, and what outcome learning did.

    \b
    Example:
        memory-layer stats --json
    """
    from memory_layer.api import stats as get_stats

    data = get_stats(open_store())
    if as_json:
        echo_json(data)
        return
    say(
        f"{counted(data['total'], 'memory', 'memories')}, {data['embedded']} with vectors, "
        f"{counted(data['operations'], 'operation')} logged."
    )
    o = data["outcomes"]
    say(
        f"outcomes: {counted(o['tasks_succeeded'], 'task')} succeeded, {o['tasks_failed']} failed; "
        f"{counted(o['judged'], 'active memory', 'active memories')} judged, {o['proven']} proven, {o['sinking']} sinking."
    )
    for title in ("by_status", "by_category", "by_project", "by_source"):
        say(title.replace("_", " ") + ":")
        for key, value in data[title].items():
            say(f"  {key:<40} {value}")
