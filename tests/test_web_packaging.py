"""A non-editable install ships the dashboard: web/ becomes memory_layer.web with its
templates and stylesheet, and no memory_layer package is left out of the wheel."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def staged_copy(target: Path) -> Path:
    """What a checkout holds, so the build's build/ and *.egg-info never touch the tree."""
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    for name in ("pyproject.toml", "setup.py", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, target / name)
    for folder in ("memory_layer", "web"):
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    return target


def test_wheel_contains_the_dashboard_and_every_package(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = staged_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = wheels.glob("memory_layer-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "web").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            assert "memory_layer/web/" + path.relative_to(ROOT / "web").as_posix() in names
    assert not any(name.startswith("web/") for name in names)
    for init in (ROOT / "memory_layer").rglob("__init__.py"):
        if "__pycache__" not in init.parts:
            assert init.relative_to(ROOT).as_posix() in names
