"""Project identity: which project a working directory belongs to.

From git: the normalised URL of the ``origin`` remote (else the first remote), else
the repository root path. Outside git: the directory itself. Never the folder name
alone, so two unrelated repos both called ``api`` do not share memories.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")


def normalise_remote(url: str) -> str:
    """``git@github.com:Org/Repo.git`` and ``https://tok@github.com/org/repo`` both become
    ``github.com/org/repo``: host plus path, lower-cased, without credentials, port
    numbers of the default protocols, ``.git`` or trailing slashes."""
    url = url.strip()
    match = _SCP_LIKE.match(url) if "://" not in url else None
    if match:
        host, path = match.group("host"), match.group("path")
    elif "://" in url:
        scheme, rest = url.split("://", 1)
        if scheme == "file":
            return "file://" + rest.rstrip("/").removesuffix(".git")
        netloc, _, path = rest.partition("/")
        host = netloc.rsplit("@", 1)[-1]
        if ":" in host and host.rsplit(":", 1)[1] in {"22", "80", "443", "9418"}:
            host = host.rsplit(":", 1)[0]
    else:
        return str(Path(url).expanduser().resolve())
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host.lower()}/{path.lower()}"


@lru_cache(maxsize=64)
def _identity(directory: str) -> str:
    try:
        import git  # gitpython; imported here because it costs ~0.15 s
    except ImportError:
        return directory
    try:
        repo = git.Repo(directory, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return directory
    try:
        remotes = {r.name: r for r in repo.remotes}
        remote = remotes.get("origin") or (repo.remotes[0] if repo.remotes else None)
        if remote is not None:
            urls = list(remote.urls)
            if urls:
                return normalise_remote(urls[0])
        root = repo.working_tree_dir or repo.git_dir
        return str(Path(root).resolve())
    finally:
        repo.close()


def project_for(directory: str | os.PathLike[str] | None = None) -> str:
    """The project id for ``directory`` (default: the current directory)."""
    path = Path(directory) if directory is not None else Path.cwd()
    try:
        resolved = str(path.expanduser().resolve())
    except OSError:
        resolved = str(path)
    return _identity(resolved)
