"""benchmarks/capture_llm.py refuses clearly when its model or runtime is missing.

The script needs llama_cpp and a GGUF file, neither a project dependency: run as a
subprocess (never imported), it must exit 2 with a message saying how to fix it, before
it reads a transcript or loads anything."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "capture_llm.py"


def _run(
    args: list[str], tmp_path: Path, *, block_llama: bool = False
) -> subprocess.CompletedProcess:
    if block_llama:
        # None in sys.modules makes "import llama_cpp" raise ImportError, installed or not.
        code = (
            "import runpy, sys; sys.modules['llama_cpp'] = None; "
            f"sys.argv = [{str(SCRIPT)!r}, *{args!r}]; "
            f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
        )
        command = [sys.executable, "-c", code]
    else:
        command = [sys.executable, str(SCRIPT), *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False
    )


def test_missing_model_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.gguf"
    done = _run(["--model", str(missing), "--split", "tune", "--data", str(tmp_path)], tmp_path)
    assert done.returncode == 2
    assert f"model file {missing} not found" in done.stderr
    assert "--model" in done.stderr


def test_missing_llama_cpp_says_how_to_install(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    done = _run(
        ["--model", str(model), "--split", "tune", "--data", str(tmp_path)],
        tmp_path,
        block_llama=True,
    )
    assert done.returncode == 2
    assert "llama_cpp is not importable" in done.stderr
    assert "pip install llama-cpp-python" in done.stderr


def test_verbose_refuses_held_out_splits(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    done = _run(["--model", str(model), "--split", "holdout", "-v"], tmp_path)
    assert done.returncode == 2
    assert "totals only" in done.stderr
