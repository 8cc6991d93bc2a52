"""A non-editable install ships the dashboard: web/ becomes memory_layer.web with its
templates and stylesheet, and no memory_layer package is left out of the wheel. The
build says nothing alarming: setuptools' warnings are a test failure."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from memory_layer import __version__

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


# pip's notes about this machine's pip configuration (an extra index folder that does
# not exist here), not about the package.
MACHINE_NOTE = re.compile(r"^WARNING: Location '.*' is ignored", re.MULTILINE)


def warnings_in(log: str) -> list[str]:
    return [
        line
        for line in MACHINE_NOTE.sub("", log).splitlines()
        if re.search(r"warn|deprecat|would be ignored|is absent", line, re.IGNORECASE)
    ]


def test_the_build_log_has_no_warnings() -> None:
    """The unit test of the filter: setuptools' real warning lines are caught."""
    sample = (
        "WARNING: Location 'file:///opt/pypi-more/simple/x/' is ignored: it is neither\n"
        "_Warning: Package 'memory_layer.web.static' is absent from the `packages` "
        "configuration.\n"
        "running bdist_wheel\n"
    )
    assert warnings_in(sample) == [
        "_Warning: Package 'memory_layer.web.static' is absent from the `packages` "
        "configuration."
    ]


def test_wheel_contains_the_dashboard_and_every_package(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    source = staged_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    # Byte-compiling on, as on a user's machine (this environment turns it off, and
    # setuptools then says so in a line of its own).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert warnings_in(result.stdout + result.stderr) == []
    (wheel,) = wheels.glob("memory_layer_agents-*.whl")
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    metadata = archive.read(f"memory_layer_agents-{__version__}.dist-info/METADATA").decode()
    assert "\nName: memory-layer-agents\n" in metadata
    entry_points = archive.read(f"memory_layer_agents-{__version__}.dist-info/entry_points.txt").decode()
    assert "memory-layer = memory_layer.cli.fast:main" in entry_points
    for path in (ROOT / "web").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            assert "memory_layer/web/" + path.relative_to(ROOT / "web").as_posix() in names
    assert not any(name.startswith("web/") for name in names)
    for init in (ROOT / "memory_layer").rglob("__init__.py"):
        if "__pycache__" not in init.parts:
            assert init.relative_to(ROOT).as_posix() in names
