"""A non-editable install ships the dashboard: web/ becomes memory_layer.web with its
templates and stylesheet, and no memory_layer package is left out of the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_contains_the_dashboard_and_every_package(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = tmp_path.glob("memory_layer-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (ROOT / "web").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            assert "memory_layer/web/" + path.relative_to(ROOT / "web").as_posix() in names
    assert not any(name.startswith("web/") for name in names)
    for init in (ROOT / "memory_layer").rglob("__init__.py"):
        if "__pycache__" not in init.parts:
            assert init.relative_to(ROOT).as_posix() in names
