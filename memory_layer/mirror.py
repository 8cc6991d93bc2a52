"""`memory-layer mirror DIR`: one Markdown file per record, with YAML frontmatter.

The database stays the source of truth; the folder is a readable (Obsidian-friendly)
view that people may edit. Each file records the sha256 of the body it was written
with (``body_sha256``), so the next sync can tell a person's edit from a change in
the database:

- an edited body comes back as an edit of that record by ``mirror`` — the text no
  longer matches its approved checksum, so agents stop receiving it until someone
  verifies it (``memory-layer verify`` or ``review``);
- a new file without an ``id`` comes back as a pending proposal;
- frontmatter edits are ignored (status and approval change only through review).

``commit=True`` snapshots the folder in git (gitpython), giving history and a
backup that can be pushed off the machine.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import yaml

from memory_layer import api
from memory_layer.api import Conn, agent_withheld_reason, all_memories, get_memory
from memory_layer.errors import InvalidInput, NotFound
from memory_layer.models import Memory, utcnow

ACTOR = "mirror"
_FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n?(.*)\Z", re.DOTALL)


def body_sha(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()


def render(memory: Memory, config: dict[str, Any]) -> str:
    meta: dict[str, Any] = {
        "id": memory.id,
        "category": memory.category,
        "scope": memory.scope,
        "project": memory.project,
        "scene": memory.extra.get("scene"),
        "status": memory.status,
        "source": memory.source,
        "tags": list(memory.tags),
        "approved_by": memory.extra.get("approved_by"),
        "approved_at": memory.extra.get("approved_at"),
        "review_by": memory.extra.get("review_by"),
        "checksum": memory.extra.get("checksum"),
        "withheld": agent_withheld_reason(memory, config),
        "created_at": memory.created_at,
        "body_sha256": body_sha(memory.text),
        # Obsidian lists and links notes by alias; ids alone are unreadable.
        "aliases": [" ".join(memory.text.split())[:60]],
    }
    if memory.extra.get("subject"):
        meta["subject"] = memory.extra["subject"]
        meta["key"] = memory.extra.get("fact_key")
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n{memory.text}\n"


def parse(content: str) -> tuple[dict[str, Any], str]:
    match = _FRONTMATTER.match(content.replace("\r\n", "\n"))
    if not match:
        return {}, content.strip()
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError:
        meta = {}
    return (meta if isinstance(meta, dict) else {}), match.group(2).strip()


def _files(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.rglob("*.md") if ".git" not in p.relative_to(directory).parts
    )


# Written into a folder once it is a mirror. A sync imports every other Markdown file
# as a proposal and deletes it, so a folder holding someone's notes (a vault, a repo's
# docs/) is refused unless it is already a mirror or holds only mirror-written files.
MARKER = ".memory-layer-mirror"


def _check_mirror_folder(directory: Path) -> None:
    if (directory / MARKER).exists():
        return
    for path in _files(directory):
        meta, _body = parse(path.read_text(encoding="utf-8"))
        if not (meta.get("id") and meta.get("body_sha256")):
            raise InvalidInput(
                f"{directory} already holds Markdown that memory-layer did not write "
                f"({path.relative_to(directory)}); a sync would import and delete it. "
                "Give a new or empty folder for the mirror, or move the new notes into "
                "the mirror folder after its first sync."
            )


def _take_edit(db: Conn, memory: Memory, body: str, config: dict[str, Any], path: Path) -> bool:
    text = api.clean(api.check_text(body, int(config["remember"]["max_chars"])))
    if text == memory.text:
        return False
    # The approved checksum is left as it was (vouch=False): the record is now edited
    # since verification and withheld from agents until a person vouches for it.
    api.edit(
        db,
        memory.id,
        config=config,
        actor=ACTOR,
        text=text,
        vouch=False,
        action="mirror_edit",
        context={"file": str(path), "reason": "edited in the Markdown mirror"},
    )
    return True


def _take_new(db: Conn, meta: dict[str, Any], body: str, config: dict[str, Any]) -> Memory:
    from memory_layer.models import CATEGORIES

    category = str(meta.get("category") or "general")
    done = api.remember(
        db,
        body,
        config=config,
        source=ACTOR,
        category=category if category in CATEGORIES else "general",
        project=meta.get("project") or None,
        scene=meta.get("scene") or None,
        tags=meta.get("tags") if isinstance(meta.get("tags"), list) else None,
    )
    return done.memory


def sync(
    db: Conn, directory: Path, *, config: dict[str, Any], commit: bool = False
) -> dict[str, Any]:
    """Bring edits in ``directory`` back, then write every record out. Returns a report."""
    if directory.exists() and not directory.is_dir():
        raise InvalidInput(f"{directory} is a file; give a folder for the mirror.")
    directory.mkdir(parents=True, exist_ok=True)
    _check_mirror_folder(directory)
    (directory / MARKER).touch()
    api.stamp_trusted_writes(db, config)
    edited: list[str] = []
    new: list[str] = []
    removed = 0
    for path in _files(directory):
        meta, body = parse(path.read_text(encoding="utf-8"))
        memory_id = str(meta.get("id") or "").strip()
        if not memory_id:
            if body:
                new.append(_take_new(db, meta, body, config).id)
            path.unlink()
            continue
        try:
            memory = get_memory(db, memory_id)
        except NotFound:  # purged, or an id from another store: nothing to mirror
            path.unlink()
            removed += 1
            continue
        if body and body_sha(body) != meta.get("body_sha256"):
            if _take_edit(db, memory, body, config, path):
                edited.append(memory.id)
    written = 0
    keep: set[Path] = set()
    for memory in all_memories(db):
        path = directory / f"{memory.id}.md"
        keep.add(path)
        content = render(memory, config)
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
            written += 1
    for path in _files(directory):
        if path not in keep:
            path.unlink()
            removed += 1
    report: dict[str, Any] = {
        "directory": str(directory),
        "records": len(keep),
        "written": written,
        "removed": removed,
        "edited": edited,
        "new": new,
        "commit": None,
    }
    if commit:
        report["commit"] = git_snapshot(directory, report)
    return report


def git_snapshot(directory: Path, report: dict[str, Any]) -> str | None:
    """Commit the folder's current state; returns the commit sha, or None if unchanged."""
    import git

    try:
        repo = git.Repo(directory)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        repo = git.Repo.init(directory)
    # The marker is the mirror's bookkeeping, not a record: keep it out of the history.
    exclude = Path(repo.git_dir) / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    listed = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if MARKER not in listed.split():
        exclude.write_text(listed.rstrip("\n") + f"\n{MARKER}\n", encoding="utf-8")
    repo.git.add(A=True)
    fresh = not repo.head.is_valid()
    if not fresh and not repo.is_dirty(index=True, working_tree=False, untracked_files=False):
        return None
    author = git.Actor("memory-layer", "memory-layer@localhost")
    message = (
        f"memory-layer mirror {utcnow().strftime('%Y-%m-%d %H:%M:%SZ')}: "
        f"{report['records']} records, {report['written']} written, "
        f"{len(report['edited'])} edited, {len(report['new'])} new"
    )
    return repo.index.commit(message, author=author, committer=author).hexsha
