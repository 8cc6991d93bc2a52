"""Durability and faults (issue 14): three figures, through the real processes.

1. Acknowledged capture events lost when the engine is stopped (`memory-layer engine
   stop`), sent SIGTERM or killed with SIGKILL, while its worker is busy: reading a
   7.5 MB transcript a Stop hook handed it (the default config, MiniLM loaded), or
   waiting behind another process's write lock. Every PostToolUse hook is spawned as
   Claude Code spawns it, with the captured payload shape of tests/fixtures/hooks.
   Lost = hooks run - tool events in the store once a new engine has replayed its
   journal (goal 0).
2. Restore fidelity: the 10k store of hooks_latency.py is backed up, changed (CLI
   writes, a warm engine, hooks), then `memory-layer backup restore`d. Compared with
   the backup: file digest, SQL dump, row counts (goal: identical). For contrast, the
   `cp` over a store whose -wal is live, as the issue found it.
3. UserPromptSubmit's wall time and whether it injected, on the 10k store, with the
   engine warm, frozen (SIGSTOP), and with another process holding the write lock
   (engine stopped, and frozen). Goal: within the hook's deadline, still injecting.

Run: ``.venv/bin/python benchmarks/durability.py [--events 20] [--runs 20] [--write]``
(``--write`` puts the tables into the ``## Durability and faults`` section of
benchmarks/RESULTS.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hooks_latency import Bench, build_cache, machine, percentile  # noqa: E402

from memory_layer.storage.restore import content_digest  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
BASH_RESPONSE = json.loads(
    (FIXTURES / "hooks" / "post_tool_use_bash.tool_response.captured.json").read_text()
)["template"]
TRANSCRIPT_MB = 7.5
SECTION = "## Durability and faults"
LOAD: list[float] = []
# hooks/hooks.json gives UserPromptSubmit 15 s; the engine's own answer is due in 150 ms.
PROMPT_TIMEOUT_S = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"][
    "UserPromptSubmit"
][0]["hooks"][0]["timeout"]


def cli(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        env=env, capture_output=True, text=True, timeout=300,
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"memory-layer {' '.join(args)}: {done.stderr}")
    return done


def fresh_home(work: Path, name: str, store: Path | None = None) -> Bench:
    home = work / name / "home"
    home.mkdir(parents=True)
    if store is not None:
        shutil.copy2(store, home / "memories.db")
    project = work / name / "shop"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(
        ["git", "-C", str(project), "remote", "add", "origin", "git@github.com:acme/shop.git"],
        check=True,
    )
    return Bench(home, project)


def long_transcript(path: Path, session_id: str, cwd: Path) -> None:
    """The fixture transcripts (real Claude Code line shapes), repeated to 7.5 MB."""
    lines = []
    for source in sorted((FIXTURES / "transcripts").glob("*.jsonl")):
        for raw in source.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if isinstance(entry, dict):
                entry.update(sessionId=session_id, cwd=str(cwd))
                lines.append(json.dumps(entry))
    block = "\n".join(lines) + "\n"
    with path.open("w", encoding="utf-8") as f:
        for _ in range(int(TRANSCRIPT_MB * 1024 * 1024 / len(block)) + 1):
            f.write(block)


def burst(bench: Bench, session: str, events: int) -> None:
    """PostToolUse hooks spawned all at once, as Claude Code runs async hooks (hooks.json
    marks them ``async``) while the agent goes on: each through /bin/sh, its own stdin."""
    from hooks_latency import HOOKS

    command = HOOKS["PostToolUse"].replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT))
    procs = []
    for i in range(events):
        payload = {
            "session_id": session,
            "transcript_path": str(bench.project / "t.jsonl"),
            "cwd": str(bench.project),
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": f"echo probe-{i}"},
            "tool_response": {**BASH_RESPONSE, "stdout": f"probe-{i}"},
            "tool_use_id": f"toolu_{i:04d}",
        }
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=bench.project, env=bench.env,
        )
        procs.append((proc, json.dumps(payload).encode()))
    for proc, payload in procs:
        proc.communicate(payload, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError("a hook exited non-zero")


def taken(home: Path) -> int:
    """Jobs the engine has taken on so far (done, waiting, in hand)."""
    from memory_layer.engine import lifecycle

    os.environ["MEMORY_LAYER_HOME"] = str(home)
    status = lifecycle.status()
    return int(status.get("jobs_done", 0)) + int(status.get("queued", 0)) + bool(status.get("busy"))


def count(db: Path, sql: str, params: tuple[Any, ...] = ()) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql, params).fetchone()[0])
    finally:
        conn.close()


def journal_count(home: Path) -> int:
    folder = home / "journal"
    return len(list(folder.glob("*.json"))) if folder.is_dir() else 0


def engine_pid(home: Path) -> int:
    raw = (home / "run" / "engine.lock").read_text().strip()
    return int(raw)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


# --- 1: acknowledged events under stop, SIGTERM, SIGKILL --------------------------------


def lost_events(work: Path, how: str, busy: str, events: int) -> dict[str, Any]:
    bench = fresh_home(work, f"loss-{how}-{busy}-{time.monotonic_ns()}".replace(" ", "_"))
    (bench.home / "config.yaml").write_text("engine:\n  enabled: true\n  idle_timeout_s: 300\n")
    env = bench.env
    cli(env, "engine", "start")
    db = bench.home / "memories.db"
    session = "b7d3c0de-0000-4000-8000-00000000beef"
    transcript = bench.project / "t.jsonl"
    holder = None
    if busy == "busy":
        long_transcript(transcript, session, bench.project)
    else:
        transcript.write_text("")
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
    bench.run("Stop", session_id=session, stop_hook_active=False, last_assistant_message="")
    before = taken(bench.home)
    burst(bench, session, events)
    acknowledged = taken(bench.home) - before
    waiting = journal_count(bench.home)
    pid = engine_pid(bench.home)
    began = time.monotonic()
    if how == "engine stop":
        cli(env, "engine", "stop")
    else:
        os.kill(pid, signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL)
    while alive(pid):
        time.sleep(0.02)
    stop_s = time.monotonic() - began
    if holder is not None:
        holder.rollback()
        holder.close()
    tool_sql = "SELECT count(*) FROM session_events WHERE kind = 'tool'"
    before_restart = count(db, tool_sql)
    left = journal_count(bench.home)
    cli(env, "engine", "start")
    end = time.monotonic() + 300
    while journal_count(bench.home) and time.monotonic() < end:
        time.sleep(0.1)
    time.sleep(0.5)
    written = count(db, tool_sql)
    offset = count(
        db,
        "SELECT coalesce(max(offset), 0) FROM transcript_offsets WHERE path = ?",
        (str(transcript),),
    )
    cli(env, "engine", "stop")
    return {
        "how": how,
        "busy": busy,
        "hooks": events,
        "acknowledged": acknowledged,
        "acknowledged_waiting": waiting,
        "stop_s": round(stop_s, 2),
        "in_store_at_exit": before_restart,
        "left_in_journal": left,
        "written_after_replay": written,
        "lost": events - written,
        "transcript_read": offset == transcript.stat().st_size,
    }


# --- 2: restore fidelity --------------------------------------------------------------------


def dump(db: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def tables(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%fts%' ORDER BY name")]
        return {n: int(conn.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0]) for n in names}
    finally:
        conn.close()


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def restore_fidelity(work: Path, store: Path) -> dict[str, Any]:
    bench = fresh_home(work, "restore", store)
    (bench.home / "config.yaml").write_text("engine:\n  enabled: true\n  idle_timeout_s: 300\n")
    env = bench.env
    backup = Path(json.loads(cli(env, "backup", "--json").stdout)["path"])
    expected = tables(backup)
    # Change the store the way a day of use does: CLI writes, a warm engine, hooks.
    cli(env, "engine", "start")
    for text in ("Deploys go through `make release`, never by hand.",
                 "The CI cache key includes the lockfile hash.",
                 "Staging needs the VPN up before `kubectl` works."):
        cli(env, "remember", text, "--category", "gotcha")
    bench.run("UserPromptSubmit", prompt="how do I run the tests")
    bench.run("PostToolUse", tool_name="Bash", tool_input={"command": "make test"},
              tool_response=BASH_RESPONSE)
    began = time.monotonic()
    out = json.loads(cli(env, "backup", "restore", str(backup), "--json").stdout)
    took = time.monotonic() - began
    restored = bench.home / "memories.db"
    result = {
        "memories": expected.get("memories"),
        "restore_s": round(took, 2),
        "sha256_equal": sha(restored) == sha(backup),
        "pages_equal": content_digest(restored) == content_digest(backup),
        "dump_equal": dump(restored) == dump(backup),
        "tables_equal": tables(restored) == expected,
        "previous_kept": bool(out["previous"]),
    }
    previous = Path(out["previous"][0])
    result["previous_has_changes"] = tables(previous)["memories"] >= expected["memories"] + 3
    result["cp_over_live_store"] = naive_copy(work, store)
    return result


def naive_copy(work: Path, store: Path) -> dict[str, Any]:
    """What the issue did: `cp backup memories.db` while a process holds the store with a
    live -wal. The log is applied again on top of the copy."""
    home = work / "cp" / "home"
    home.mkdir(parents=True)
    db = home / "memories.db"
    shutil.copy2(store, db)
    backup = home / "backup.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    src = sqlite3.connect(str(backup))
    conn.backup(src)
    src.execute("PRAGMA journal_mode = DELETE")
    src.close()
    before = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    conn.execute("DELETE FROM memories WHERE rowid IN (SELECT rowid FROM memories LIMIT 500)")
    shutil.copyfile(backup, db)  # the naive restore, the -wal still beside it
    reader = sqlite3.connect(db)
    try:
        after = int(reader.execute("SELECT count(*) FROM memories").fetchone()[0])
        verdict = str(reader.execute("PRAGMA quick_check").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        after, verdict = -1, str(exc)
    reader.close()
    conn.close()
    return {"backup_memories": before, "after_cp": after, "quick_check": verdict[:60]}


# --- 3: the prompt hook with a frozen engine or a locked store ------------------------------


def prompt_times(work: Path, store: Path, runs: int) -> list[dict[str, Any]]:
    bench = fresh_home(work, "prompt", store)
    (bench.home / "config.yaml").write_text("engine:\n  enabled: true\n  idle_timeout_s: 300\n")
    env = bench.env
    data = [json.loads(line) for line in (ROOT / "benchmarks/data/coding_memories.jsonl").open()]
    prompts = [d["queries"]["question"] for d in data if d.get("project")][: runs + 3]
    times = [bench.baseline() for _ in range(runs)]
    results = [{
        "scenario": "baseline: `sh -c 'python -c pass'` (the machine's floor)",
        "runs": runs,
        "p50_ms": round(statistics.median(times) * 1000),
        "p95_ms": round(percentile(times, 0.95) * 1000),
        "max_ms": round(max(times) * 1000),
        "injected": "",
    }]
    scenarios = [
        ("engine warm", False, False),
        ("engine frozen (SIGSTOP)", True, False),
        ("engine stopped, store write-locked", None, True),
        ("engine frozen, store write-locked", True, True),
    ]
    for name, frozen, locked in scenarios:
        holder = None
        pid = None
        if frozen is None:
            cli(env, "engine", "stop")
            (bench.home / "config.yaml").write_text("engine:\n  enabled: false\n")
        else:
            (bench.home / "config.yaml").write_text(
                "engine:\n  enabled: true\n  idle_timeout_s: 300\n"
            )
            cli(env, "engine", "start")
            for prompt in prompts[:3]:
                bench.run("UserPromptSubmit", prompt=prompt)
            pid = engine_pid(bench.home)
            if frozen:
                os.kill(pid, signal.SIGSTOP)
        if locked:
            holder = sqlite3.connect(bench.home / "memories.db", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
        times, injected = [], 0
        try:
            for prompt in prompts[3 : 3 + runs]:
                times.append(bench.run("UserPromptSubmit", prompt=prompt))
                injected += bool(bench.last.strip())
        finally:
            if holder is not None:
                holder.rollback()
                holder.close()
            if pid is not None and frozen:
                os.kill(pid, signal.SIGCONT)
        results.append({
            "scenario": name,
            "runs": len(times),
            "p50_ms": round(statistics.median(times) * 1000),
            "p95_ms": round(percentile(times, 0.95) * 1000),
            "max_ms": round(max(times) * 1000),
            "injected": f"{injected}/{len(times)}",
        })
    cli(env, "engine", "stop", check=False)
    return results


# --- output -------------------------------------------------------------------------------------


def table(loss: list[dict[str, Any]], fidelity: dict[str, Any], prompts: list[dict[str, Any]],
          events: int, runs: int) -> str:
    lines = [
        SECTION,
        "",
        f"`.venv/bin/python benchmarks/durability.py --events {events} --runs {runs} --write` "
        f"({time.strftime('%Y-%m-%d')}). Machine: {machine()}; load average (1 min) at "
        f"the start {LOAD[0]:.1f} (the machine was shared).",
        "",
        f"**Acknowledged events lost** ({events} PostToolUse hooks at once, as async hooks "
        "run, right after a Stop, per row; "
        "goal 0). *busy*: the worker reads a 7.5 MB transcript with MiniLM loaded; "
        "*blocked*: it waits behind another process's write lock, held until the engine "
        "is gone. Lost = hooks - tool events in the store after the next engine replayed "
        "its journal.",
        "",
        "| engine ended by | worker | acknowledged by the engine | in journal before the end "
        "| exit took s | in store at exit | left in journal | written after replay | lost "
        "| Stop's transcript read |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in loss:
        lines.append(
            f"| {r['how']} | {r['busy']} | {r['acknowledged']} | {r['acknowledged_waiting']} "
            f"| {r['stop_s']} | "
            f"{r['in_store_at_exit']} | {r['left_in_journal']} | {r['written_after_replay']} | "
            f"**{r['lost']}** | {'yes' if r['transcript_read'] else 'no'} |"
        )
    cp = fidelity["cp_over_live_store"]
    lines += [
        "",
        f"**Restore fidelity** ({fidelity['memories']} memories; backed up, changed by three "
        "CLI writes, a warm engine and two hooks, then `memory-layer backup restore`, "
        f"{fidelity['restore_s']} s): every page equal **{fidelity['pages_equal']}** "
        "(the file digest with SQLite's header counters left out; the whole-file digest "
        f"equal: {fidelity['sha256_equal']}, the backup API bumps those counters), "
        f"SQL dump equal **{fidelity['dump_equal']}**, row counts of every table equal "
        f"**{fidelity['tables_equal']}**; the replaced store kept in backups/ with the "
        f"changes: {fidelity['previous_has_changes']}. For contrast, `cp` of a "
        f"{cp['backup_memories']}-memory backup over a store whose live -wal had deleted "
        f"500: {cp['after_cp']} memories after the copy (quick_check: {cp['quick_check']}).",
        "",
        "**UserPromptSubmit under faults** (10k store; hooks.json timeout "
        f"{PROMPT_TIMEOUT_S} s, engine answer due in 150 ms; goal: within the deadline, "
        "still injecting). A frozen engine accepts the connection and never answers: the "
        "hook waits out 150 ms and answers by itself; a write lock costs it only its "
        "bookkeeping (100 ms wait, then skipped for the turn).",
        "",
        "| scenario | runs | p50 ms | p95 ms | max ms | injected |",
        "|---|---|---|---|---|---|",
    ]
    for r in prompts:
        lines.append(
            f"| {r['scenario']} | {r['runs']} | {r['p50_ms']} | {r['p95_ms']} | "
            f"{r['max_ms']} | {r['injected']} |"
        )
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    path = ROOT / "benchmarks" / "RESULTS.md"
    current = path.read_text(encoding="utf-8")
    lines = current.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.strip() == SECTION), None)
    if start is None:
        path.write_text(current.rstrip("\n") + "\n\n" + text, encoding="utf-8")
        return
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = "".join(lines[end:])
    path.write_text("".join(lines[:start]) + text + ("\n" + tail if tail else ""), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = parser.parse_args()
    LOAD.append(os.getloadavg()[0])
    store = build_cache()
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "memory_layer")], check=True
    )
    work = Path(tempfile.mkdtemp(prefix="ml-durability-"))
    try:
        loss = [
            lost_events(work, how, busy, args.events)
            for busy in ("busy", "blocked")
            for how in ("engine stop", "SIGTERM", "SIGKILL")
        ]
        for r in loss:
            print(json.dumps(r))
        fidelity = restore_fidelity(work, store)
        print(json.dumps(fidelity))
        prompts = prompt_times(work, store, args.runs)
        for r in prompts:
            print(json.dumps(r))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = table(loss, fidelity, prompts, args.events, args.runs)
    print(text)
    if args.write:
        write_section(text)


if __name__ == "__main__":
    main()
