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

Only regular files are read. A symbolic link (dangling or not), a hard-linked file, a
folder named ``*.md`` or anything else is skipped with a note in the report and never
followed: a link to ``~/.bashrc`` must not become a proposal (and a commit). Records
are written out through a temporary file renamed over the name, so a link planted at
``<id>.md`` is replaced, not written through. A file that cannot be taken (too large,
not UTF-8, a field over its limit) is skipped with the reason; the sync goes on.

``commit=True`` snapshots the folder in git (gitpython), giving history and a
backup that can be pushed off the machine.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
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
    """Every ``*.md`` name under the folder (outside .git), whatever kind of file it is;
    pathlib does not descend into linked folders."""
    return sorted(
        p for p in directory.rglob("*.md") if ".git" not in p.relative_to(directory).parts
    )


# Far above any record (remember.max_chars is 10,000 characters), far below what would
# hurt to read: a bigger file is skipped unread.
MAX_FILE_BYTES = 1024 * 1024


class Skipped(Exception):
    """This file is not taken; the message says why (it goes into the report)."""


def _not_regular(info: os.stat_result) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        return "a symbolic link (links are never followed)"
    if stat.S_ISDIR(info.st_mode):
        return "a folder"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    if info.st_nlink > 1:
        # A hard link shares its content with a file that may live anywhere.
        return "a hard-linked file (its content lives elsewhere too)"
    return None


def read_safely(path: Path) -> str:
    """The file's text, if it is a regular file of our own folder; else ``Skipped``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        try:
            why = _not_regular(os.lstat(path))
        except OSError:
            why = None
        raise Skipped(why or f"unreadable ({exc.strerror or exc})") from None
    try:
        why = _not_regular(os.fstat(fd))
        if why:
            raise Skipped(why)
        data = os.read(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise Skipped(f"larger than {MAX_FILE_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Skipped("not UTF-8 text") from None


def write_safely(path: Path, content: str) -> None:
    """Write through a temporary file renamed over ``path``: a link (or anything) at
    that name is replaced, never written through."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(content)
        if path.is_dir() and not path.is_symlink():
            raise Skipped("a folder holds the record's name")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _rendered_already(path: Path, content: str) -> bool:
    try:
        return read_safely(path) == content
    except (Skipped, FileNotFoundError):
        return False


# Written into a folder once it is a mirror. A sync imports every other Markdown file
# as a proposal and deletes it, so a folder holding someone's notes (a vault, a repo's
# docs/) is refused unless it is already a mirror or holds only mirror-written files.
MARKER = ".memory-layer-mirror"


def _check_mirror_folder(directory: Path) -> None:
    if (directory / MARKER).exists():
        return
    for path in _files(directory):
        try:
            meta, _body = parse(read_safely(path))
        except Skipped:
            continue  # never read, never imported: it cannot be lost
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


def _take_file(
    db: Conn, path: Path, config: dict[str, Any], *, edited: list[str], new: list[str]
) -> int:
    """Bring one file's change back; 1 if it was removed as an orphan, else 0. Raises
    ``Skipped`` (or ``InvalidInput``) and leaves the file alone when it cannot be taken."""
    meta, body = parse(read_safely(path))
    memory_id = str(meta.get("id") or "").strip()
    if not memory_id:
        if body:
            new.append(_take_new(db, meta, body, config).id)
        path.unlink()
        return 0
    try:
        memory = get_memory(db, memory_id)
    except NotFound:  # purged, or an id from another store: nothing to mirror
        path.unlink()
        return 1
    if body and body_sha(body) != meta.get("body_sha256"):
        if _take_edit(db, memory, body, config, path):
            edited.append(memory.id)
    return 0


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
    skipped: dict[Path, str] = {}
    removed = 0
    for path in _files(directory):
        try:
            removed += _take_file(db, path, config, edited=edited, new=new)
        except (Skipped, InvalidInput) as exc:
            skipped[path] = str(exc)
    written = 0
    keep: set[Path] = set()
    for memory in all_memories(db):
        path = directory / f"{memory.id}.md"
        keep.add(path)
        content = render(memory, config)
        if not _rendered_already(path, content):
            try:
                write_safely(path, content)
            except Skipped as exc:
                skipped[path] = str(exc)
                continue
            if path in skipped:  # a link planted at the record's name: gone now
                skipped[path] += "; replaced by the record's own file"
            written += 1
    for path in _files(directory):
        if path not in keep and path not in skipped:
            path.unlink()
            removed += 1
    report: dict[str, Any] = {
        "directory": str(directory),
        "records": len(keep),
        "written": written,
        "removed": removed,
        "edited": edited,
        "new": new,
        # left: still in the folder as it was (not the mirror's; never committed).
        "skipped": [
            {"file": str(path.relative_to(directory)), "why": why, "left": path not in keep}
            for path, why in sorted(skipped.items())
        ],
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
    for item in report.get("skipped", ()):
        # What the sync did not take (a link, a file over a limit) is not the mirror's.
        if item["left"]:
            repo.git.rm("--cached", "-q", "--ignore-unmatch", "--", item["file"])
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
