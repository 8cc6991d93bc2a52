"""Does it learn? Simulated Claude Code sessions driven through the real hooks.

Usage:
    .venv/bin/python benchmarks/learning.py [--memories code|prose] [--scenario rivals|newcomer]
        [--noise 0.1[,0.2,...]] [--seeds 7[,1,2]] [--rounds 30] [--variant chosen[,shipped,...]]
        [--subprocess] [--no-closing-message] [--curve] [--write-results]

Twenty topics. In the **rivals** scenario each has one good memory and one plausible
bad one: the same error, a wrong fix; the wrong fix is worded closer to the question in
the code mode, so that before any learning recall puts it first for most topics. In
the **newcomer** scenario each topic starts with one established fix that works 65% of
the time; at round ``--newcomer-round`` (10) a better fix that works 95% of the time,
worded like it (same problem, another fix), is added. Each round, every topic gets one
session:

1. ``UserPromptSubmit`` asks about the topic; the hook injects memories and records
   them in ``usage``;
2. ``TaskCreated`` opens a task;
3. the agent acts on the top injected memory (rank 1 in ``usage`` for the session).
   ``--memories code``: the memories carry their fix in backticks and the agent runs
   it in Bash or applies it in an Edit. ``--memories prose``: no code spans at all; the
   agent runs ``./scripts/apply_fix.sh "<word>" && make test``, where <word> is the one
   word that tells the fix from its rival (``react-dom``, ``libpq-dev``, ``PyYAML``);
4. the task completes with probability 1 − noise if that memory is the good fix, and
   with probability noise if it is the bad one (newcomer: 0.65 and 0.95; 0.5 when
   nothing was injected); completion is ``TaskCompleted``, failure is ``PostToolUse``
   TaskUpdate ``deleted``;
5. ``Stop`` ends the turn with the agent's closing message naming what it applied
   (prose: "Applying the stored fix (<word>) and re-running the tests.").

Every event goes through ``memory_layer.hooks.main.dispatch(name, stdin_bytes, env)``,
the function ``python -m memory_layer.hooks <Event>`` runs — in this process by
default, or as real subprocesses with ``--subprocess``. The warm engine is off, so the
hooks answer keyword-only in process, as they do when the engine is not running.

Before each round, precision@1 for every topic's question: the share of topics whose
first result is the target (the good fix; the newcomer). "agent" is what the prompt
hook and MCP search rank (``api.recall`` for the agent audience: sinking memories
withheld except on probation); "raw" ranks every memory. A good memory is "withheld"
in a round when it is sinking (``outcomes.floor``); "came back" counts good memories
withheld in some round and not at the end.

``--variant`` compares scorers on the same sessions (the config written for the run):
``shipped`` (fixed steps, absorbing floor: explore 0, probation off), ``probation``,
``explore`` (UCB exploration 0.2), ``chosen`` (the defaults: both).
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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

# Prose memories (no code spans), for --memories prose: (question, good fix, the word
# that tells it apart, bad fix, its word). Each pair shares the problem's words; only
# the fix differs, as in issue 13 ("align react-dom with the react major version").
PROSE_TOPICS: list[tuple[str, str, str, str, str]] = [
    (
        "npm test fails with Invalid hook call after upgrading react",
        "Invalid hook call after upgrading react: align react-dom with the react major "
        "version in package.json, then run npm install again",
        "react-dom",
        "Invalid hook call after upgrading react: delete node_modules and the lockfile, "
        "then run npm install again",
        "lockfile",
    ),
    (
        "pip install psycopg2 fails with pg_config executable not found",
        "pg_config executable not found when installing psycopg2: install the libpq-dev "
        "system package first",
        "libpq-dev",
        "pg_config executable not found when installing psycopg2: pin the older "
        "psycopg2-binary release instead",
        "psycopg2-binary",
    ),
    (
        "scripts crash with ModuleNotFoundError no module named yaml",
        "ModuleNotFoundError no module named yaml: the missing dependency is PyYAML, add "
        "it to the requirements",
        "PyYAML",
        "ModuleNotFoundError no module named yaml: the virtualenv is stale, recreate it "
        "from scratch",
        "virtualenv",
    ),
    (
        "git push fails with Permission denied publickey",
        "Permission denied publickey on git push: the key is not loaded into the agent, "
        "load it with ssh-add",
        "ssh-add",
        "Permission denied publickey on git push: loosen the permissions of the ssh "
        "folder with chmod",
        "chmod",
    ),
    (
        "docker build fails with no space left on device",
        "docker build no space left on device: prune unused images and the build cache",
        "prune",
        "docker build no space left on device: delete the systemd journal to free space",
        "journal",
    ),
    (
        "alembic says target database is not up to date",
        "alembic target database is not up to date: apply the pending revisions with "
        "alembic upgrade",
        "upgrade",
        "alembic target database is not up to date: stamp the database as current",
        "stamp",
    ),
    (
        "dev server crashes with EADDRINUSE port 3000 already in use",
        "EADDRINUSE port 3000 already in use: find the stale dev server with lsof and stop it",
        "lsof",
        "EADDRINUSE port 3000 already in use: move the dev server to port 3001",
        "3001",
    ),
    (
        "go build fails with missing go.sum entry for module",
        "missing go.sum entry for module: tidy the module requirements",
        "tidy",
        "missing go.sum entry for module: clear the modcache and build again",
        "modcache",
    ),
    (
        "cargo build fails with linker cc not found",
        "cargo linker cc not found: install the build-essential package",
        "build-essential",
        "cargo linker cc not found: update the toolchain with rustup",
        "rustup",
    ),
    (
        "pip install fails with SSL CERTIFICATE_VERIFY_FAILED",
        "pip SSL CERTIFICATE_VERIFY_FAILED: the CA bundle is outdated, upgrade certifi",
        "certifi",
        "pip SSL CERTIFICATE_VERIFY_FAILED: mark the package index as a trusted-host",
        "trusted-host",
    ),
    (
        "webpack build dies with JavaScript heap out of memory",
        "webpack JavaScript heap out of memory: raise max-old-space-size for Node",
        "max-old-space-size",
        "webpack JavaScript heap out of memory: reinstall every package from a clean checkout",
        "reinstall",
    ),
    (
        "git pull says fatal refusing to merge unrelated histories",
        "git pull refusing to merge unrelated histories: pull once with allow-unrelated-histories",
        "allow-unrelated-histories",
        "git pull refusing to merge unrelated histories: hard reset to the remote branch",
        "reset",
    ),
    (
        "kubernetes pod stuck in ImagePullBackOff from the private registry",
        "ImagePullBackOff from the private registry: create the regcred pull secret",
        "regcred",
        "ImagePullBackOff from the private registry: recreate every pod in the namespace",
        "namespace",
    ),
    (
        "terraform plan fails with Error acquiring the state lock",
        "terraform Error acquiring the state lock: a crashed run left it, release it "
        "with force-unlock",
        "force-unlock",
        "terraform Error acquiring the state lock: remove the local tfstate",
        "tfstate",
    ),
    (
        "mypy says library stubs not installed for requests",
        "mypy library stubs not installed for requests: install types-requests",
        "types-requests",
        "mypy library stubs not installed for requests: silence it with ignore-missing-imports",
        "ignore-missing-imports",
    ),
    (
        "playwright times out waiting for selector on the login page",
        "playwright times out waiting for selector: wait for networkidle before looking for it",
        "networkidle",
        "playwright times out waiting for selector: raise the limit to 120000 ms",
        "120000",
    ),
    (
        "browser blocks the API call: CORS no Access-Control-Allow-Origin header",
        "CORS no Access-Control-Allow-Origin header: allow the frontend origin in the "
        "server middleware",
        "middleware",
        "CORS no Access-Control-Allow-Origin header: start chrome with disable-web-security",
        "disable-web-security",
    ),
    (
        "reading the csv raises UnicodeDecodeError charmap codec can't decode",
        "UnicodeDecodeError charmap codec reading the csv: open the file as utf-8",
        "utf-8",
        "UnicodeDecodeError charmap codec reading the csv: skip undecodable bytes",
        "undecodable",
    ),
    (
        "redis refuses writes: MISCONF redis is configured to save RDB snapshots",
        "redis MISCONF RDB snapshots: the disk is full, free space under /var/lib/redis",
        "/var/lib/redis",
        "redis MISCONF RDB snapshots: switch the stop-writes-on-bgsave-error check off",
        "stop-writes-on-bgsave-error",
    ),
    (
        "jest fails with SyntaxError cannot use import statement outside a module",
        "jest cannot use import statement outside a module: transform ESM with babel-jest",
        "babel-jest",
        "jest cannot use import statement outside a module: rename the files to mjs",
        "mjs",
    ),
]

SNIPPET = re.compile(r"`([^`]+)`")
VARIANTS = {
    "shipped": {"explore": 0.0, "probation": False},
    "probation": {"explore": 0.0, "probation": True},
    "explore": {"explore": 0.2, "probation": False},
    "chosen": {},  # the defaults in memory_layer/config.py
}
NEWCOMER_RATES = (0.65, 0.95)  # established, newcomer


def code_action(text: str) -> tuple[str, str, str]:
    """What an agent does when it follows a code memory: (kind, command or code, message)."""
    code = SNIPPET.findall(text)[-1]
    kind = "edit" if ("(" in code or "=" in code) and " " not in code.split("(")[0] else "bash"
    return kind, code, f"Applied `{code}`."


def prose_action(word: str) -> tuple[str, str, str]:
    return (
        "bash",
        f'./scripts/apply_fix.sh "{word}" && make test',
        f"Applying the stored fix ({word}) and re-running the tests.",
    )


@dataclass
class Arm:
    """One memory of a topic: its text, what following it looks like, how often it works."""

    text: str
    action: tuple[str, str, str]
    role: str  # good | bad | established | newcomer
    memory_id: str | None = None


@dataclass
class Topic:
    question: str
    arms: list[Arm]
    ever_withheld: set[str] = field(default_factory=set)

    @property
    def target(self) -> Arm:
        return next(a for a in self.arms if a.role in {"good", "newcomer"})


def build_topics(memories: str, scenario: str) -> list[Topic]:
    topics = []
    if memories == "code":
        for question, good, bad in TOPICS:
            arms = [Arm(good, code_action(good), "good"), Arm(bad, code_action(bad), "bad")]
            topics.append(Topic(question, arms))
    else:
        for question, good, good_word, bad, bad_word in PROSE_TOPICS:
            arms = [
                Arm(good, prose_action(good_word), "good"),
                Arm(bad, prose_action(bad_word), "bad"),
            ]
            topics.append(Topic(question, arms))
    if scenario == "newcomer":
        for topic in topics:  # the wrong fix becomes a 65% fix, the good one arrives late
            bad = next(a for a in topic.arms if a.role == "bad")
            good = next(a for a in topic.arms if a.role == "good")
            bad.role, good.role = "established", "newcomer"
    return topics


def success_rate(arm: Arm | None, noise: float) -> float:
    if arm is None:
        return 0.5
    return {
        "good": 1 - noise,
        "bad": noise,
        "established": NEWCOMER_RATES[0],
        "newcomer": NEWCOMER_RATES[1],
    }[arm.role]


def setup_home(variant: str) -> Path:
    home = Path(tempfile.mkdtemp(prefix="ml-learn-"))
    os.environ["MEMORY_LAYER_HOME"] = str(home)
    lines = ["embedding:\n  enabled: false\nengine:\n  enabled: false\nhooks:\n  capture: true\n"]
    settings = VARIANTS[variant]
    if settings:
        lines.append("outcomes:\n")
        for key, value in settings.items():
            lines.append(f"  {key}: {json.dumps(value)}\n")
    (home / "config.yaml").write_text("".join(lines), encoding="utf-8")
    from memory_layer import config as config_module

    config_module._cache.clear()
    return home


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


def precision(db: Any, cfg: dict[str, Any], project: str, topics: list[Topic]) -> dict:
    """P@1 in the agent view and raw; records which good memories are withheld now."""
    from memory_layer import api
    from memory_layer.outcomes import is_sinking
    from memory_layer.retrieval.search import Scope, recall
    from memory_layer.storage.records import get_memory

    hits = {"agent": 0, "raw": 0}
    withheld = 0
    for topic in topics:
        target = topic.target.memory_id
        if target is None:
            continue
        scope = Scope.for_project(project)
        top = api.recall(db, topic.question, config=cfg, scope=scope, audience=api.AGENT, limit=1)
        hits["agent"] += bool(top and top[0].memory.id == target)
        top = recall(db, topic.question, scope=scope, config=cfg, limit=1)
        hits["raw"] += bool(top and top[0].memory.id == target)
        if is_sinking(get_memory(db, target), cfg):
            topic.ever_withheld.add(target)
            withheld += 1
    out: dict[str, Any] = {k: v / len(topics) for k, v in hits.items()}
    out["withheld"] = withheld
    return out


def remember_arm(db: Any, cfg: dict[str, Any], project: str, arm: Arm) -> None:
    from memory_layer.memories import remember

    arm.memory_id = remember(
        db,
        arm.text,
        config=cfg,
        category="troubleshooting",
        project=project,
        source="user",
        dedupe=False,
    ).memory.id


def session(
    hooks: Hooks,
    db: Any,
    topic: Topic,
    name: str,
    workdir: Path,
    noise: float,
    args: Any,
    rng: random.Random,
) -> tuple[Arm | None, bool]:
    """One Claude Code session on the topic; (memory acted on, task succeeded)."""
    base = {"session_id": name, "cwd": str(workdir), "transcript_path": ""}
    hooks("UserPromptSubmit", {**base, "prompt": topic.question})
    row = db.execute(
        "SELECT memory_id FROM usage WHERE session_id = ? ORDER BY at, rank LIMIT 1", [name]
    ).fetchone()
    hooks("TaskCreated", {**base, "task_id": "1", "task_subject": topic.question[:60]})
    acted = next((a for a in topic.arms if row and a.memory_id == row[0]), None)
    if acted is not None:
        kind, code, _ = acted.action
        if kind == "bash":
            tool_input: dict[str, Any] = {"command": code}
            response: dict[str, Any] = {"stdout": "", "stderr": "", "interrupted": False}
            tool = "Bash"
        else:
            path = str(workdir / "app.py")
            tool_input = {"file_path": path, "old_string": "x", "new_string": code}
            response = {"filePath": path, "oldString": "x", "newString": code}
            tool = "Edit"
        hooks(
            "PostToolUse",
            {**base, "tool_name": tool, "tool_input": tool_input, "tool_response": response},
        )
    ok = rng.random() < success_rate(acted, noise)
    if ok:
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
    # usually does) says what it applied. It arrives after the task closed and counts
    # through the re-judging of the tasks closed during the turn.
    message = (
        acted.action[2] if acted is not None and not args.no_closing_message else "Done for now."
    )
    hooks("Stop", {**base, "stop_hook_active": False, "last_assistant_message": message})
    return acted, ok


def run(args: Any, noise: float, seed: int, variant: str) -> dict[str, Any]:
    """One simulation; its summary (and per-round curve)."""
    setup_home(variant)
    from memory_layer.config import load_config
    from memory_layer.outcomes import is_sinking
    from memory_layer.storage.db import open_db
    from memory_layer.storage.records import get_memory

    workdir = Path(tempfile.mkdtemp(prefix="ml-learn-repo-"))
    project = str(workdir.resolve())  # not a git repo: the directory is the project
    cfg = load_config()
    db = open_db()
    topics = build_topics(args.memories, args.scenario)[: args.topics]
    for topic in topics:
        for arm in topic.arms:
            if arm.role != "newcomer":
                remember_arm(db, cfg, project, arm)
    rng = random.Random(seed)
    hooks = Hooks(args.subprocess)
    curve = []
    started = time.perf_counter()
    for round_no in range(1, args.rounds + 1):
        if args.scenario == "newcomer" and round_no == args.newcomer_round:
            for topic in topics:
                remember_arm(db, cfg, project, topic.target)
        before = precision(db, cfg, project, topics)
        successes = acted_target = 0
        for index, topic in enumerate(topics):
            acted, ok = session(
                hooks, db, topic, f"r{round_no}-t{index}", workdir, noise, args, rng
            )
            successes += ok
            acted_target += acted is topic.target
        curve.append(
            {
                "round": round_no,
                **before,
                "acted_target": acted_target / len(topics),
                "successes": successes / len(topics),
            }
        )
        if args.curve:
            print(
                f"round {round_no:>2}: P@1 agent {before['agent']:.2f} raw {before['raw']:.2f}"
                f"  withheld {before['withheld']}  acted on target {acted_target}"
                f"  tasks ok {successes}/{len(topics)}",
                flush=True,
            )
    final = precision(db, cfg, project, topics)
    ever = {m for t in topics for m in t.ever_withheld}
    still = {
        t.target.memory_id
        for t in topics
        if t.target.memory_id and is_sinking(get_memory(db, t.target.memory_id), cfg)
    }
    from_round = args.newcomer_round if args.scenario == "newcomer" else 1
    threshold = 0.7 if args.scenario == "newcomer" else 0.9
    reached = next(
        (c["round"] for c in curve if c["round"] >= from_round and c["agent"] >= threshold),
        None,
    )
    db.close()
    return {
        "variant": variant,
        "memories": args.memories,
        "scenario": args.scenario,
        "noise": noise,
        "seed": seed,
        "start": curve[0]["agent"] if args.scenario == "rivals" else None,
        "final": final,
        "first_round_at_threshold": reached,
        "threshold": threshold,
        "ever_withheld": len(ever),
        "came_back": len(ever - still),
        "withheld_at_end": len(still),
        "hook_calls": hooks.calls,
        "ms_per_hook_call": round(1000 * hooks.seconds / max(1, hooks.calls), 1),
        "seconds": round(time.perf_counter() - started, 1),
        "curve": curve,
    }


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", choices=("code", "prose"), default="code")
    parser.add_argument("--scenario", choices=("rivals", "newcomer"), default="rivals")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--newcomer-round", type=int, default=10)
    parser.add_argument(
        "--topics", type=int, default=20, help="Use only the first N topics (a shorter run)."
    )
    parser.add_argument("--seeds", default="7", help="Comma-separated seeds.")
    parser.add_argument("--noise", default="0.1", help="Comma-separated outcome noise levels.")
    parser.add_argument(
        "--variant", default="chosen", help=f"Comma-separated, of {', '.join(VARIANTS)}."
    )
    parser.add_argument("--subprocess", action="store_true", help="Spawn real hook processes.")
    parser.add_argument(
        "--no-closing-message",
        action="store_true",
        help="End turns with a Stop that names nothing (evidence from tools only).",
    )
    parser.add_argument("--curve", action="store_true", help="Print every round.")
    parser.add_argument(
        "--write-results", action="store_true", help="Write the table into benchmarks/RESULTS.md."
    )
    args = parser.parse_args()
    variants = [v.strip() for v in args.variant.split(",") if v.strip()]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}; choose from {', '.join(VARIANTS)}")
    runs = []
    for variant in variants:
        for noise in _floats(args.noise):
            for seed in (int(x) for x in args.seeds.split(",") if x.strip()):
                result = run(args, noise, seed, variant)
                runs.append(result)
                print(row(result), flush=True)
    print(json.dumps([{k: v for k, v in r.items() if k != "curve"} for r in runs], indent=1))
    if args.write_results:
        write_results(runs, args)


TABLE_HEAD = (
    "| variant | noise | seed | P@1 agent at start | P@1 agent after 30 rounds | raw after | "
    "first round at threshold | good ever withheld | came back | withheld at end |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def row(r: dict[str, Any]) -> str:
    start = "—" if r["start"] is None else f"{r['start']:.2f}"
    return (
        f"| {r['variant']} | {r['noise']:.1f} | {r['seed']} | {start} | "
        f"{r['final']['agent']:.2f} | {r['final']['raw']:.2f} | "
        f"{r['first_round_at_threshold'] or '—'} | {r['ever_withheld']} | {r['came_back']} | "
        f"{r['withheld_at_end']} |"
    )


def _machine() -> str:
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
    except (OSError, subprocess.TimeoutExpired):
        commit = "unknown"
    return (
        f"{platform.platform()}, {cpu}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; code at commit {commit}"
    )


def write_results(runs: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """Replace (or add) this invocation's subsection of "## Outcome learning"."""
    path = ROOT / "benchmarks" / "RESULTS.md"
    mode = "subprocess hooks" if args.subprocess else "in-process dispatch()"
    title = f"### learning.py: {args.memories} memories, {args.scenario}, {mode}"
    command = " ".join([".venv/bin/python", "benchmarks/learning.py", *sys.argv[1:]])
    calls = sum(r["hook_calls"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    per_call = sum(r["ms_per_hook_call"] * r["hook_calls"] for r in runs) / max(1, calls)
    lines = [
        title,
        "",
        f"`{command}` — {len(runs)} run(s), {args.rounds} rounds × {args.topics} topics, "
        f"{calls} hook calls at {per_call:.1f} ms each, {seconds:.0f} s. Machine: {_machine()}.",
        "Threshold: P@1 ≥ 0.7 of the newcomer from its round on (newcomer), ≥ 0.9 (rivals).",
        "",
        TABLE_HEAD,
        *(row(r) for r in runs),
    ]
    section = "\n".join(lines) + "\n"
    text = path.read_text(encoding="utf-8")
    pattern = re.compile(r"^" + re.escape(title) + r"\n.*?(?=^##|\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        anchor = re.search(r"^## Outcome learning\n", text, re.M)
        if anchor is None:
            text = text.rstrip("\n") + "\n\n## Outcome learning\n\n" + section
        else:
            cut = anchor.end()
            text = text[:cut] + "\n" + section + "\n" + text[cut:]
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
