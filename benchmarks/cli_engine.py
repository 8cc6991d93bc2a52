"""The CLI through the warm engine: fresh `memory-layer recall` / `remember` processes
with an engine running, against the same commands answering in their own process, and
as ratios against the bare interpreter.

Usage:  .venv/bin/python benchmarks/cli_engine.py [--size 10000] [--runs 21]

Uses the 10k store that benchmarks/latency.py builds (cached in $ML_BENCH_DIR, default
/tmp/ml-bench; built here if missing: real MiniLM vectors, ~2 minutes the first time).
Each row is a fresh process per run, started as a user starts it: the `memory-layer`
console script of this venv, in a project directory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from latency import BENCH, build, machine, percentile  # noqa: E402

CLI = Path(sys.executable).parent / "memory-layer"
QUERY = "pytest ECONNREFUSED staging"
# What `remember ""` must beat: refused before any model loads.
EMPTY_REMEMBER_TARGET_MS = 200
WARM_RECALL_TARGET_MS = 150


def timed(argv: list[str], env: dict[str, str], runs: int, *, ok: bool = True) -> list[float]:
    times = []
    for n in range(runs):
        args = [a.format(n=n) for a in argv]
        started = time.perf_counter()
        done = subprocess.run(args, env=env, capture_output=True, cwd=env["BENCH_CWD"])
        times.append((time.perf_counter() - started) * 1000)
        if ok and done.returncode != 0:
            sys.exit(f"{' '.join(args)} failed: {done.stderr.decode()[-500:]}")
    return times


def row(label: str, times: list[float], bare: float) -> str:
    p50 = statistics.median(times)
    return f"| {label} | {p50:.0f} / {percentile(times, 0.95):.0f} ms | {p50 / bare:.1f}× |"


def engine(env: dict[str, str], verb: str) -> None:
    done = subprocess.run([str(CLI), "engine", verb], env=env, capture_output=True, timeout=120)
    if verb == "start" and done.returncode != 0:
        sys.exit(f"engine start failed: {done.stderr.decode()}")


def wait_ready(env: dict[str, str]) -> None:
    deadline = time.time() + 120
    info = Path(env["MEMORY_LAYER_HOME"]) / "run" / "engine.json"
    while time.time() < deadline and not info.exists():
        time.sleep(0.2)
    if not info.exists():
        sys.exit("the engine did not become ready")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    BENCH.mkdir(parents=True, exist_ok=True)
    os.environ["MEMORY_LAYER_HOME"] = str(BENCH / "model-home")
    from memory_layer.config import load_config
    from memory_layer.embed import get_embedder

    embedder = get_embedder(load_config())
    if embedder is None:
        sys.exit("embedding model unavailable; run memory-layer doctor")
    home = build(args.size, embedder, rebuild=False)
    # A copy: the engine and the remember runs write, the cached store stays as built.
    work = BENCH / f"cli-engine-{args.size}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copy(home / "memories.db", work / "memories.db")
    cwd = work / "project"
    cwd.mkdir()
    env = {**os.environ, "MEMORY_LAYER_HOME": str(work), "BENCH_CWD": str(cwd)}
    env.pop("MEMORY_LAYER_SESSION_ID", None)  # a bench run is in no Claude Code session
    runs = args.runs
    print(machine(), f"; load average at start {os.getloadavg()[0]:.2f}")
    bare = statistics.median(timed([sys.executable, "-c", "pass"], env, runs))
    recall = [str(CLI), "recall", QUERY, "--all-projects"]
    remember = [str(CLI), "remember", "bench note {n}: run make lint before pushing", "--global"]
    empty = [str(CLI), "remember", ""]
    results = {"cold recall": timed(recall, env, max(5, runs // 4))}
    results["cold remember"] = timed(remember, env, max(5, runs // 4))
    results["cold remember ''"] = timed(empty, env, runs, ok=False)
    engine(env, "start")
    wait_ready(env)
    timed(recall, env, 2)  # the engine's first recall loads its scope sample
    results["warm recall"] = timed(recall, env, runs)
    results["warm remember"] = timed([*remember[:2], "warm " + remember[2], *remember[3:]], env, runs)
    results["warm remember ''"] = timed(empty, env, runs, ok=False)
    engine(env, "stop")
    print(f"load average at end {os.getloadavg()[0]:.2f}; {args.size:,} memories; {runs} runs")
    print(f"\nbare interpreter (`python -c pass`): {bare:.0f} ms\n")
    print("| command (fresh process) | p50 / p95 | p50 ÷ bare interpreter |")
    print("|---|---|---|")
    for label, times in results.items():
        print(row(label, times, bare))
    warm = statistics.median(results["warm recall"])
    refused = max(statistics.median(results[k]) for k in ("cold remember ''", "warm remember ''"))
    print(f"\nwarm recall p50 {warm:.0f} ms (target ≤ {WARM_RECALL_TARGET_MS}); "
          f"remember '' p50 ≤ {refused:.0f} ms (target ≤ {EMPTY_REMEMBER_TARGET_MS})")


if __name__ == "__main__":
    main()
