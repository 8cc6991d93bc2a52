"""Does it learn? A simulation of Claude Code sessions driven through the real hooks.

Usage:  .venv/bin/python benchmarks/learning.py [--rounds 30] [--seed 7] [--noise 0.1]
                                                [--subprocess] [--write-results]

Twenty topics, each with one good memory and one plausible bad one: the same error, a
wrong fix. The wrong fix is worded closer to the question, so that before any
learning recall puts it first for most topics (15 of 20). Each round, every topic gets one session:

1. ``UserPromptSubmit`` asks about the topic; the hook injects memories and records
   them in ``usage``;
2. ``TaskCreated`` opens a task;
3. the agent acts on the top injected memory (rank 1 in ``usage`` for the session):
   a ``PostToolUse`` Bash running its command, or an Edit applying its code;
4. the task completes with probability 1 − noise if that memory is the good fix, and
   with probability noise if it is the bad one (or 0.5 when nothing was injected);
   completion is ``TaskCompleted``, failure is ``PostToolUse`` TaskUpdate ``deleted``;
5. ``Stop`` ends the turn with the agent's closing message naming what it applied.

Every event goes through ``memory_layer.hooks.main.dispatch(name, stdin_bytes, env)``,
the function ``python -m memory_layer.hooks <Event>`` runs — in this process by
default (600 sessions × 5 events as subprocesses take ~20 min), or as real
subprocesses with ``--subprocess``. The warm engine is off, so the hooks answer
keyword-only in process, as they do when the engine is not running.

Before each round, precision@1 of recall for every topic's question: the share of
topics whose first result is the good fix. "recall" is what ``memory-layer recall``
and the injection hook see (sinking memories withheld); "raw" ranks every memory.
The no-learning baseline is the same sessions with the outcome hooks left out, where
rankings never change: round 0's precision.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HOME = Path(os.environ.setdefault("MEMORY_LAYER_HOME", tempfile.mkdtemp(prefix="ml-learn-")))

# (question, good fix, bad fix). A fix's command or code is in backticks; code with
# "(" or "=" is applied as an edit, the rest is run in Bash.
TOPICS: list[tuple[str, str, str]] = [
    (
        "pytest fails with ECONNREFUSED 5432 connecting to postgres",
        "ECONNREFUSED 5432 in pytest: the postgres container is not running; start it with "
        "`docker compose up -d db`",
        "ECONNREFUSED 5432 in pytest connecting to postgres: point the tests at localhost with "
        "`export PGHOST=127.0.0.1`",
    ),
    (
        "ModuleNotFoundError: No module named app when running pytest",
        "ModuleNotFoundError No module named app: install the package in editable mode, "
        "`pip install -e .`",
        "ModuleNotFoundError: No module named app when running pytest: add the source dir, "
        "`export PYTHONPATH=src`",
    ),
    (
        "npm install fails with ERESOLVE unable to resolve dependency tree",
        "npm ERESOLVE unable to resolve dependency tree when installing: "
        "`npm install --legacy-peer-deps`",
        "npm ERESOLVE: the cache is corrupt, run `npm cache clean --force`",
    ),
    (
        "git push fails with Permission denied (publickey)",
        "Permission denied (publickey) on git push: the key is not loaded, "
        "`ssh-add ~/.ssh/id_ed25519`",
        "git push Permission denied publickey: fix the ssh folder permissions with "
        "`chmod -R 777 ~/.ssh`",
    ),
    (
        "docker build fails with no space left on device",
        "docker build no space left on device: remove unused images and layers with "
        "`docker system prune -af`",
        "No space left on device: clear old logs, `sudo rm -rf /var/log/journal`",
    ),
    (
        "alembic says target database is not up to date",
        "alembic target database is not up to date: apply pending migrations, "
        "`alembic upgrade head`",
        "alembic says target database is not up to date: mark it current with `alembic stamp head`",
    ),
    (
        "dev server crashes with EADDRINUSE port 3000 already in use",
        "EADDRINUSE port 3000 already in use: a stale dev server holds it, "
        "`lsof -ti:3000 | xargs kill`",
        "EADDRINUSE: move the dev server to another port, `export PORT=3001`",
    ),
    (
        "go build fails with missing go.sum entry for module",
        "missing go.sum entry for module: regenerate go.sum with `go mod tidy`",
        "go build missing go.sum entry for module: the module cache is stale, `go clean -modcache`",
    ),
    (
        "cargo build fails with linker cc not found",
        "linker cc not found: install a C toolchain, `sudo apt-get install -y build-essential`",
        "cargo build fails with linker cc not found: update the toolchain, `rustup update`",
    ),
    (
        "pip install fails with SSL CERTIFICATE_VERIFY_FAILED",
        "pip SSL CERTIFICATE_VERIFY_FAILED: the CA bundle is outdated, "
        "`pip install --upgrade certifi`",
        "pip install fails with SSL CERTIFICATE_VERIFY_FAILED: skip verification with "
        "`pip config set global.trusted-host pypi.org`",
    ),
    (
        "webpack build dies with JavaScript heap out of memory",
        "JavaScript heap out of memory in webpack: raise the Node heap, "
        "`export NODE_OPTIONS=--max-old-space-size=4096`",
        "webpack build dies with JavaScript heap out of memory: reinstall clean, `npm ci`",
    ),
    (
        "git pull says fatal refusing to merge unrelated histories",
        "refusing to merge unrelated histories: allow it once with "
        "`git pull origin main --allow-unrelated-histories`",
        "git pull fatal refusing to merge unrelated histories: reset to the remote, "
        "`git reset --hard origin/main`",
    ),
    (
        "kubernetes pod stuck in ImagePullBackOff from the private registry",
        "ImagePullBackOff from the private registry: create the pull secret, "
        "`kubectl create secret docker-registry regcred`",
        "kubernetes pod stuck in ImagePullBackOff: recreate the pods, `kubectl delete pod --all`",
    ),
    (
        "terraform plan fails with Error acquiring the state lock",
        "Error acquiring the state lock: a crashed run left it, release it with "
        "`terraform force-unlock`",
        "terraform plan fails with Error acquiring the state lock: delete the local state, "
        "`rm terraform.tfstate`",
    ),
    (
        "mypy says library stubs not installed for requests",
        "library stubs not installed for requests: install them, `pip install types-requests`",
        "mypy says library stubs not installed for requests: silence it with "
        "`mypy --ignore-missing-imports`",
    ),
    (
        "playwright test times out waiting for selector on the login page",
        "Playwright times out waiting for selector: wait for the page first, "
        "`await page.waitForLoadState('networkidle')`",
        "playwright test times out waiting for selector on the login page: raise the "
        "timeout, `test.setTimeout(120000)`",
    ),
    (
        "browser blocks the API call: CORS no Access-Control-Allow-Origin header",
        "CORS no Access-Control-Allow-Origin header: allow the frontend origin, "
        "`app.use(cors({origin: FRONTEND_URL}))`",
        "browser blocks the API call CORS: start chrome with `--disable-web-security`",
    ),
    (
        "reading the csv raises UnicodeDecodeError charmap codec can't decode",
        "UnicodeDecodeError charmap codec: open the file as UTF-8, `open(path, encoding='utf-8')`",
        "reading the csv raises UnicodeDecodeError charmap codec can't decode: drop bad "
        "bytes, `open(path, errors='ignore')`",
    ),
    (
        "redis refuses writes: MISCONF redis is configured to save RDB snapshots",
        "MISCONF redis RDB snapshots: the disk is full, free space under "
        "`/var/lib/redis` then run `redis-cli bgsave`",
        "redis refuses writes MISCONF configured to save RDB snapshots: turn the check off, "
        "`redis-cli config set stop-writes-on-bgsave-error no`",
    ),
    (
        "jest fails with SyntaxError cannot use import statement outside a module",
        "jest cannot use import statement outside a module: transform ESM with "
        "`npm i -D babel-jest @babel/preset-env`",
        "jest fails with SyntaxError cannot use import statement outside a module: rename "
        "the tests, `mv app.test.js app.test.mjs`",
    ),
]

SNIPPET = re.compile(r"`([^`]+)`")


def action_for(text: str) -> tuple[str, str]:
    """What an agent does when it follows a memory: ("bash", command) or ("edit", code)."""
    snippets = SNIPPET.findall(text)
    code = snippets[-1]
    return (
        ("edit", code)
        if ("(" in code or "=" in code) and " " not in code.split("(")[0]
        else ("bash", code)
    )


def setup_home() -> None:
    HOME.mkdir(parents=True, exist_ok=True)
    (HOME / "config.yaml").write_text(
        "embedding:\n  enabled: false\nengine:\n  enabled: false\nhooks:\n  capture: true\n",
        encoding="utf-8",
    )


class Hooks:
    """Sends one event the way Claude Code does: the event name and JSON on stdin."""

    def __init__(self, use_subprocess: bool) -> None:
        self.use_subprocess = use_subprocess
        self.calls = 0
        self.seconds = 0.0

    def __call__(self, name: str, payload: dict[str, Any]) -> str:
        raw = json.dumps({**payload, "hook_event_name": name}).encode()
        started = time.perf_counter()
        if self.use_subprocess:
            done = subprocess.run(
                [sys.executable, "-m", "memory_layer.hooks", name],
                input=raw,
                capture_output=True,
                timeout=120,
                env=os.environ.copy(),
            )
            out = done.stdout.decode()
        else:
            from memory_layer.hooks.main import dispatch

            out = dispatch(name, raw, os.environ)
        self.seconds += time.perf_counter() - started
        self.calls += 1
        return out


def precision(db: Any, cfg: dict[str, Any], project: str, ids: list[tuple[str, str]]) -> dict:
    from memory_layer.outcomes import is_sinking
    from memory_layer.retrieval.search import Scope, recall

    hits = {"recall": 0, "raw": 0}
    for (question, _, _), (good, _) in zip(TOPICS, ids, strict=True):
        for view, visible in (("recall", lambda m: not is_sinking(m, cfg)), ("raw", None)):
            top = recall(
                db, question, scope=Scope.for_project(project), config=cfg, limit=1, visible=visible
            )
            hits[view] += bool(top and top[0].memory.id == good)
    return {k: v / len(TOPICS) for k, v in hits.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--subprocess", action="store_true", help="Spawn real hook processes.")
    parser.add_argument(
        "--no-closing-message",
        action="store_true",
        help="End turns with a Stop that names nothing (evidence from tools only).",
    )
    parser.add_argument(
        "--write-results", action="store_true", help="Write the curve into benchmarks/RESULTS.md."
    )
    args = parser.parse_args()
    setup_home()

    from memory_layer.config import load_config
    from memory_layer.memories import remember
    from memory_layer.storage.db import open_db

    workdir = Path(tempfile.mkdtemp(prefix="ml-learn-repo-"))
    project = str(workdir.resolve())  # not a git repo: the directory is the project
    cfg = load_config()
    db = open_db()
    ids = []
    for _, good, bad in TOPICS:
        pair = []
        for text in (good, bad):
            pair.append(
                remember(
                    db,
                    text,
                    config=cfg,
                    category="troubleshooting",
                    project=project,
                    source="user",
                    dedupe=False,
                ).memory.id
            )
        ids.append((pair[0], pair[1]))
    good_ids = {g for g, _ in ids}
    text_of = {
        mid: text
        for (_, g, b), pair in zip(TOPICS, ids, strict=True)
        for mid, text in zip(pair, (g, b), strict=True)
    }

    rng = random.Random(args.seed)
    hooks = Hooks(args.subprocess)
    curve = []
    started = time.perf_counter()
    baseline = precision(db, cfg, project, ids)
    for round_no in range(1, args.rounds + 1):
        before = precision(db, cfg, project, ids)
        successes = acted_good = 0
        for topic, (question, _, _) in enumerate(TOPICS):
            session = f"r{round_no}-t{topic}"
            base = {"session_id": session, "cwd": str(workdir), "transcript_path": ""}
            hooks("UserPromptSubmit", {**base, "prompt": question})
            row = db.execute(
                "SELECT memory_id FROM usage WHERE session_id = ? ORDER BY at, rank LIMIT 1",
                [session],
            ).fetchone()
            hooks("TaskCreated", {**base, "task_id": "1", "task_subject": question[:60]})
            acted = row[0] if row else None
            if acted is not None:
                kind, code = action_for(text_of[acted])
                if kind == "bash":
                    hooks(
                        "PostToolUse",
                        {
                            **base,
                            "tool_name": "Bash",
                            "tool_input": {"command": code},
                            "tool_response": {"stdout": "", "stderr": "", "interrupted": False},
                        },
                    )
                else:
                    path = str(workdir / "app.py")
                    hooks(
                        "PostToolUse",
                        {
                            **base,
                            "tool_name": "Edit",
                            "tool_input": {
                                "file_path": path,
                                "old_string": "x",
                                "new_string": code,
                            },
                            "tool_response": {
                                "filePath": path,
                                "oldString": "x",
                                "newString": code,
                            },
                        },
                    )
            p_success = (
                0.5 if acted is None else (1 - args.noise if acted in good_ids else args.noise)
            )
            acted_good += acted in good_ids
            if rng.random() < p_success:
                successes += 1
                hooks("TaskCompleted", {**base, "task_id": "1"})
            else:
                hooks(
                    "PostToolUse",
                    {
                        **base,
                        "tool_name": "TaskUpdate",
                        "tool_input": {"taskId": "1", "status": "deleted"},
                        "tool_response": {"success": True, "taskId": "1"},
                    },
                )
            # The turn ends: Stop carries the agent's closing message, which (as Claude's
            # usually does) says what it applied. It arrives after the task closed and
            # counts through the re-judging of the tasks closed during the turn.
            message = (
                f"Applied `{code}`."
                if acted is not None and not args.no_closing_message
                else "Done for now."
            )
            hooks("Stop", {**base, "stop_hook_active": False, "last_assistant_message": message})
        curve.append(
            {
                "round": round_no,
                **before,
                "acted_good": acted_good / len(TOPICS),
                "successes": successes / len(TOPICS),
            }
        )
        print(
            f"round {round_no:>2}: P@1 recall {before['recall']:.2f} raw {before['raw']:.2f}"
            f"  acted on good {acted_good}/{len(TOPICS)}  tasks ok {successes}/{len(TOPICS)}",
            flush=True,
        )
    final = precision(db, cfg, project, ids)
    elapsed = time.perf_counter() - started
    reached = next((c["round"] for c in curve if c["recall"] >= 0.9), None)
    summary = {
        "baseline": baseline,
        "final": final,
        "first_round_at_0.9": reached,
        "hook_calls": hooks.calls,
        "ms_per_hook_call": round(1000 * hooks.seconds / max(1, hooks.calls), 1),
        "seconds": round(elapsed, 1),
        "mode": "subprocess" if args.subprocess else "in-process dispatch()",
    }
    print(json.dumps(summary, indent=2))
    if args.write_results:
        write_results(curve, summary, args)


def write_results(curve: list[dict], summary: dict, args: argparse.Namespace) -> None:
    path = ROOT / "benchmarks" / "RESULTS.md"
    cpu = ""
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu = platform.processor()
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "memory_layer"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        commit, dirty = "unknown", ""
    code_state = f"commit {commit}" + (
        " plus uncommitted changes under memory_layer/" if dirty else ""
    )
    lines = [
        "## Outcome learning",
        "",
        f"`{' '.join(['.venv/bin/python', 'benchmarks/learning.py', *sys.argv[1:]])}` — "
        f"{len(TOPICS)} topics × {args.rounds} rounds, noise {args.noise}, seed {args.seed}. "
        f"Events went through `memory_layer.hooks.main.dispatch` ({summary['mode']}; the "
        "function `python -m memory_layer.hooks <Event>` runs), engine off, keyword-only, "
        f"{summary['hook_calls']} hook calls at {summary['ms_per_hook_call']} ms each, "
        f"{summary['seconds']} s in all.",
        "",
        f"Machine: {platform.platform()}, {cpu}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}. Code: {code_state}.",
        "",
        "Precision@1 is measured before each round's sessions. *recall* = `recall()` "
        "with sinking memories withheld, as `memory-layer recall` and the injection hook "
        "call it (injection also applies its own relevance floor); *raw* = every memory "
        "ranked. The no-learning baseline stays at round 0's value because without "
        "outcome events no ranking changes.",
        "",
        f"Baseline (no learning): P@1 {summary['baseline']['recall']:.2f}. After "
        f"{args.rounds} rounds: recall {summary['final']['recall']:.2f}, raw "
        f"{summary['final']['raw']:.2f}. First round starting at ≥ 0.9: "
        f"{summary['first_round_at_0.9']}.",
        "",
        "| round | P@1 recall | P@1 raw | baseline | agent acted on the good fix | tasks succeeded |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in curve:
        lines.append(
            f"| {row['round']} | {row['recall']:.2f} | {row['raw']:.2f} | "
            f"{summary['baseline']['recall']:.2f} | {row['acted_good']:.2f} | "
            f"{row['successes']:.2f} |"
        )
    section = "\n".join(lines) + "\n"
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    # Replace only our section; other sections belong to other benchmarks.
    pattern = re.compile(r"^## Outcome learning\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
