"""Which project a hook event belongs to, and whether that project opted out.

``memory_layer.project.project_for`` asks GitPython, which costs ~0.15 s to
import: more than a hook may spend. ``fast_project`` gives the same answer
(normalised ``origin`` URL, else the first remote, else the repository root,
else the directory) by reading ``.git/config`` directly, and hands the few
cases it cannot decide cheaply (``include``/``insteadOf`` rewriting) to
``project_for``, whose answer is cached in ``run/projects.json`` by directory and
the modification times of the git config files involved, so GitPython stays the
source of truth without being imported by every hook. Standard library only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.hooks.events import Event

IGNORE_FILES = (".memory-layer-ignore", os.path.join(".memory-layer", "ignore"))

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$")


def git_root(directory: str) -> tuple[Path, Path] | None:
    """(working tree root, git directory) for ``directory``, or None outside git."""
    try:
        start = Path(directory).expanduser().resolve()
    except OSError:
        return None
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                gitdir = Path(line[len("gitdir:") :].strip())
                return folder, (folder / gitdir).resolve() if not gitdir.is_absolute() else gitdir
            return None
    return None


def _common_dir(gitdir: Path) -> Path:
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gitdir
    path = Path(common)
    return path if path.is_absolute() else (gitdir / path).resolve()


def _remote_urls(config_text: str) -> list[tuple[str, str]] | None:
    """(remote name, first url) in file order; None when the file needs real git."""
    remotes: list[tuple[str, str]] = []
    seen: set[str] = set()
    section, name = "", ""
    for line in config_text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        m = _SECTION.match(stripped)
        if m:
            section, name = m.group(1).lower(), m.group(2) or ""
            if section in ("include", "includeif"):
                return None
            continue
        k = _KEY.match(stripped)
        if not k:
            continue
        key = k.group(1).lower()
        if section == "url" and key in ("insteadof", "pushinsteadof"):
            return None
        if section == "remote" and key == "url" and name not in seen and k.group(2):
            value = k.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            remotes.append((name, value))
            seen.add(name)
    return remotes


def _global_configs() -> tuple[Path, Path]:
    home = Path.home()
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return home / ".gitconfig", Path(xdg) / "git" / "config"


def _global_rewrites() -> bool:
    """True when the user's git config rewrites URLs (then ask git itself)."""
    for path in _global_configs():
        try:
            text = path.read_text(encoding="utf-8", errors="replace").lower()
        except OSError:
            continue
        if "insteadof" in text or "[include" in text:
            return True
    return False


CACHE_NAME = "projects.json"
MAX_CACHED = 200


def _stamp(config_file: Path) -> list[int | None]:
    """Modification times of the files git reads for the remote URL (the repository's
    config and the user's global ones): any edit there invalidates a cached id."""
    stamps: list[int | None] = []
    for path in (config_file, *_global_configs()):
        try:
            stamps.append(path.stat().st_mtime_ns)
        except OSError:
            stamps.append(None)
    return stamps


def _cache_file() -> Path:
    from memory_layer.paths import run_dir

    return run_dir() / CACHE_NAME


def _via_git(directory: str, config_file: Path) -> str:
    """``project_for`` (GitPython, ~0.15 s to import), cached per directory."""
    from memory_layer.api import project_for

    key = str(directory)
    stamp = _stamp(config_file)
    try:
        cache = json.loads(_cache_file().read_text(encoding="utf-8"))
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    hit = cache.get(key)
    if isinstance(hit, dict) and hit.get("stamp") == stamp and isinstance(hit.get("id"), str):
        return hit["id"]
    project = project_for(directory)
    cache.pop(key, None)
    cache[key] = {"stamp": stamp, "id": project}  # last in file order = most recent
    try:
        path = _cache_file()
        tmp = path.with_name(f"{CACHE_NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(dict(list(cache.items())[-MAX_CACHED:])), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # the cache only saves time
    return project


def fast_project(directory: str) -> str:
    """The project id for ``directory``, as ``project.project_for`` computes it."""
    from memory_layer.api import normalise_remote, project_for

    if not directory:
        return project_for(None)
    found = git_root(directory)
    if found is None:
        try:
            return str(Path(directory).expanduser().resolve())
        except OSError:
            return directory
    root, gitdir = found
    config_file = _common_dir(gitdir) / "config"
    try:
        text = config_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return project_for(directory)
    remotes = _remote_urls(text)
    if remotes is None or _global_rewrites():
        return _via_git(directory, config_file)
    if remotes:
        by_name = dict(remotes)
        return normalise_remote(by_name.get("origin") or remotes[0][1])
    return str(root)


def ignore_file(directories: Iterable[str]) -> str | None:
    """The ignore file that opts these directories' project out, if any.

    Looked for at each directory's repository root (or the directory itself
    outside git), so a subfolder cd cannot escape the opt-out.
    """
    for directory in directories:
        if not directory:
            continue
        found = git_root(directory)
        roots = [found[0]] if found else []
        roots.append(Path(directory).expanduser())
        for root in roots:
            for name in IGNORE_FILES:
                candidate = root / name
                if candidate.is_file():
                    return str(candidate)
    return None


def ignored_by_config(project: str, directories: Iterable[str], patterns: Iterable[str]) -> bool:
    """``hooks.ignore_projects``: fnmatch patterns on the project id or a directory.

    A pattern that names a directory also covers everything below it.
    """
    import fnmatch

    dirs = [os.path.normpath(os.path.expanduser(d)) for d in directories if d]
    for raw in patterns:
        pattern = raw.strip()
        if not pattern:
            continue
        if fnmatch.fnmatch(project, pattern) or fnmatch.fnmatch(project.lower(), pattern.lower()):
            return True
        expanded = os.path.normpath(os.path.expanduser(pattern))
        for d in dirs:
            if fnmatch.fnmatch(d, expanded) or d == expanded or d.startswith(expanded + os.sep):
                return True
    return False


def skip_reason(event: Event, project: str, config: dict[str, Any]) -> str | None:
    """Why hooks do nothing here: turned off, or the project opted out."""
    hooks = config["hooks"]
    if not hooks["enabled"]:
        return "hooks.enabled is false"
    dirs = [event.directory, event.project_dir]
    found = ignore_file(dirs)
    if found:
        return f"ignore file {found}"
    if ignored_by_config(project, dirs, hooks["ignore_projects"]):
        return "listed in hooks.ignore_projects"
    return None
