"""CPU time of a UserPromptSubmit hook process (no engine, keyword-only), this tree
against another checkout, runs alternating: the A/B the hot-path changes are judged by.

    .venv/bin/python benchmarks/hooks_cpu_ab.py --base /work/main --runs 40

Each run is a fresh ``python -m memory_layer.hooks UserPromptSubmit`` with the tree on
PYTHONPATH and a new session id (so the memory is injected every time, not deduplicated
as already shown); CPU is the child's rusage (user + system), which load moves far less
than wall time. Both trees are byte-compiled first (PYTHONDONTWRITEBYTECODE is set on
the development machines, and stale .pyc files would inflate one side).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CONFIG = "embedding:\n  enabled: false\nengine:\n  enabled: false\n"
MEMORY = "psycopg2 connection refused on port 5432: run docker compose up -d db first"
PROMPT = "psycopg2 connection refused on port 5432"


def _payload(project: str, session: str) -> bytes:
    event = {
        "session_id": session,
        "transcript_path": f"{project}/t.jsonl",
        "cwd": project,
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPT,
    }
    return json.dumps(event).encode()


def _one(tree: str, env: dict[str, str], project: str, session: str) -> float:
    child = subprocess.Popen(
        [sys.executable, "-m", "memory_layer.hooks", "UserPromptSubmit"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**env, "PYTHONPATH": tree},
        cwd=project,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(_payload(project, session))
    child.stdin.close()
    out = child.stdout.read()
    _, _, usage = os.wait4(child.pid, 0)
    if b"docker compose" not in out:
        raise SystemExit(f"{tree}: the hook injected nothing: {out[:200]!r}")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the other checkout (e.g. /work/main)")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    trees = {"base": str(Path(args.base).resolve()), "this": str(HERE)}
    home = tempfile.mkdtemp(prefix="ml-ab-")
    Path(home, "config.yaml").write_text(CONFIG)
    project = tempfile.mkdtemp(prefix="ml-ab-project-")
    subprocess.run(["git", "init", "-q", project], check=True)
    env = {**os.environ, "MEMORY_LAYER_HOME": home}
    subprocess.run(
        [sys.executable, "-m", "memory_layer", "remember", "-g", MEMORY],
        env={**env, "PYTHONPATH": trees["this"]},
        check=True,
        capture_output=True,
    )
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", f"{tree}/memory_layer"])
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    for run in range(args.runs):
        for name, tree in trees.items():
            cpu[name].append(_one(tree, env, project, f"ab-{run}-{name}"))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    for name, tree in trees.items():
        values = cpu[name]
        print(f"{name} ({tree}): CPU p50 {statistics.median(values):.1f} ms, n={len(values)}")


if __name__ == "__main__":
    main()
