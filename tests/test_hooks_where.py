"""Project identity on the hook path: ``fast_project`` agrees with GitPython's
``project_for``, and the cases it hands to GitPython are cached by config mtimes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import memory_layer.project as project_module
from memory_layer import api
from memory_layer.hooks import where
from memory_layer.project import project_for


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repo(path: Path, remote: str | None) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    if remote:
        git("remote", "add", "origin", remote, cwd=path)
    return path


@pytest.fixture(autouse=True)
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No ~/.gitconfig of the machine's user: its insteadOf rules would change the answer.
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    project_module._identity.cache_clear()


def test_fast_project_agrees_with_gitpython(tmp_path: Path) -> None:
    remote = repo(tmp_path / "shop", "git@github.com:acme/shop.git")
    local = repo(tmp_path / "scratch", None)
    (remote / "src").mkdir()
    plain = tmp_path / "notes"
    plain.mkdir()
    for directory in (remote, remote / "src", local, plain):
        assert where.fast_project(str(directory)) == project_for(directory)
    assert where.fast_project(str(remote)) == "github.com/acme/shop"


def test_rewritten_urls_ask_gitpython_once_per_config_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = repo(tmp_path / "shop", "gh:acme/shop.git")
    # insteadOf rewriting: reading .git/config alone cannot give the real URL.
    git("config", "url.git@github.com:.insteadOf", "gh:", cwd=shop)
    calls: list[str] = []

    def counting(directory: str | os.PathLike[str] | None = None) -> str:
        calls.append(str(directory))
        return project_for(directory)

    # The hooks reach project identity through the use-case package, like every door.
    monkeypatch.setattr(api, "project_for", counting)
    assert where.fast_project(str(shop)) == "github.com/acme/shop"
    assert where.fast_project(str(shop)) == "github.com/acme/shop"
    assert len(calls) == 1  # the second answer came from run/projects.json
    # Another remote: .git/config changes, so the cached id is not trusted.
    git("remote", "set-url", "origin", "gh:acme/shop-v2.git", cwd=shop)
    config = shop / ".git" / "config"
    os.utime(config, ns=(config.stat().st_atime_ns, config.stat().st_mtime_ns + 10**9))
    project_module._identity.cache_clear()
    assert where.fast_project(str(shop)) == "github.com/acme/shop-v2"
    assert len(calls) == 2
