"""The public CLI contract, bad input, import/export round trip, docs coverage."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memory_layer.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, input: str | bytes | None = None, ok: bool = True):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_remember_prints_id_and_json_record():
    out = run(
        "remember",
        "Use pnpm, not npm, in acme/web",
        "-c",
        "convention",
        "-p",
        "acme/web",
        "-t",
        "js",
        "-s",
        "user",
        "--confidence",
        "0.9",
    ).stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{16}", out)
    record = json.loads(run("show", out, "--json").output)
    assert record["text"] == "Use pnpm, not npm, in acme/web"
    assert record["category"] == "convention" and record["project"] == "acme/web"
    assert record["tags"] == ["js"] and record["source"] == "user"
    assert record["confidence"] == 0.9 and record["outcome_score"] == 0.0
    assert record["status"] == "active" and record["history"][0]["action"] == "create"
    data = json.loads(run("remember", "Prefer httpx", "--global", "--json").output)
    assert data["project"] is None and data["created"] is True


def test_duplicate_remember_says_so():
    first = run("remember", "Run make lint before pushing", "-p", "x").output.strip()
    second = CliRunner().invoke(cli, ["remember", "run make lint before pushing.", "-p", "x"])
    assert second.exit_code == 0
    assert second.stdout.strip() == first
    assert "Reinforced existing memory" in second.stderr
    third = CliRunner().invoke(cli, ["remember", "Run make lint before pushing!", "-p", "x",
                                     "--json"])
    assert json.loads(third.stdout)["created"] is False  # stdout stays pure JSON
    assert "Reinforced existing memory" in third.stderr


def test_recall_json_contract_and_explain():
    run(
        "remember",
        "ECONNREFUSED 127.0.0.1:5432 means postgres is not running; "
        "start it with docker compose up -d db",
        "-c",
        "troubleshooting",
        "-p",
        "api",
    )
    run("remember", "Deploys go through make release", "-c", "command", "-p", "api")
    results = json.loads(run("recall", "ECONNREFUSED 5432", "-p", "api", "--json").output)
    assert results[0]["category"] == "troubleshooting"
    for key in ("id", "text", "category", "project", "score", "scores"):
        assert key in results[0]
    assert set(results[0]["scores"]) >= {
        "similarity",
        "outcome",
        "recency",
        "frequency",
        "confidence",
        "boost",
    }
    assert results[0]["scores"]["boost"] == 1.5
    explained = run("recall", "ECONNREFUSED 5432", "-p", "api", "--explain").output
    assert "boost 1.50" in explained and "error intent" in explained
    assert "similarity" in explained and "recency" in explained


def test_recall_limit_and_category():
    for n in range(12):
        run("remember", f"Service {n} listens on port 80{n:02d}", "-p", "ports")
    results = json.loads(run("recall", "service port", "-p", "ports", "--json").output)
    assert len(results) == 8
    results = json.loads(run("recall", "service port", "-p", "ports", "-n", "3", "--json").output)
    assert len(results) == 3
    none = json.loads(run("recall", "service port", "-p", "ports", "-c", "gotcha", "--json").output)
    assert none == []


def test_list_forget_restore_purge():
    mid = run("remember", "Temporary note about flaky CI", "-p", "ci").output.strip()
    assert mid in run("list").output
    assert "Retired" in run("forget", mid, "--reason", "fixed").output
    statuses = {m["id"]: m["status"] for m in json.loads(run("list", "--json").output)}
    assert statuses[mid] == "retired"
    assert json.loads(run("recall", "flaky CI", "-p", "ci", "--json").output) == []
    run("restore", mid)
    assert json.loads(run("recall", "flaky CI", "-p", "ci", "--json").output)[0]["id"] == mid
    aborted = CliRunner().invoke(cli, ["forget", mid, "--purge"], input="n\n")
    assert aborted.exit_code == 1
    run("forget", mid, "--purge", "--yes")
    missing = CliRunner().invoke(cli, ["show", mid])
    assert missing.exit_code == 1 and "No memory with id" in missing.output


def test_edit_keeps_history():
    mid = run("remember", "Use yarn", "-p", "w").output.strip()
    run("edit", mid, "--text", "Use pnpm (we moved off yarn in March)", "-c", "decision")
    info = json.loads(run("show", mid, "--json").output)
    assert info["text"].startswith("Use pnpm") and info["category"] == "decision"
    edit = next(op for op in info["history"] if op["action"] == "edit")
    assert edit["old_value"]["text"] == "Use yarn"
    assert "Use yarn" in run("show", mid).output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["remember", ""], "empty"),
        (["remember", "x", "-c", "troubleshoot"], "Did you mean 'troubleshooting'"),
        (["remember", "x" * 10001], "limit is 10000"),
        (["remember", "x", "--confidence", "2"], "from 0 to 1"),
        (["recall", "  "], "empty"),
        (["show", "doesnotexist"], "No memory"),
        (["config", "set", "weights.similarity", "abc"], "must be a number"),
        (["config", "set", "weights.similarty", "1"], "Did you mean 'weights.similarity'"),
        (["config", "get", "nope.key"], "`memory-layer config keys` lists every setting"),
        (["recall", "x", "-n", "0"], "0 is not in the range x>=1"),
        (["list", "-n", "-1"], "-1 is not in the range x>=1"),
        (["list", "--offset", "-5"], "-5 is not in the range x>=0"),
        (["remember", "x", "--tag", "t" * 101], "the limit is 100"),
        (["remember", "x", *[a for i in range(51) for a in ("--tag", f"t{i}")]], "limit is 50"),
        (["config", "set", "weights.similarity", "nan"], "must be a finite number"),
        (["config", "set", "boosts.gotcha", "1e999"], "must be a finite number"),
        (["config", "set", "trust.hook_writes", "bogus"], "must be one of active, pending"),
        (["config", "set", "trust.overdue", "later"], "must be one of withhold, flag"),
    ],
)
def test_bad_input_exits_non_zero(args, message):
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0
    assert message in result.output
    assert json.loads(run("list", "--json").output) == []


def test_invalid_utf8_from_stdin_and_argv():
    result = CliRunner().invoke(cli, ["remember", "-"], input=b"caf\xe9 \xff")
    assert result.exit_code == 1 and "not valid UTF-8" in result.output
    env = {**os.environ, "MEMORY_LAYER_HOME": os.environ["MEMORY_LAYER_HOME"]}
    proc = subprocess.run(
        [sys.executable, "-m", "memory_layer", "remember", b"bad \xff byte", "--global"],
        capture_output=True,
        env={**env, "LC_ALL": "C.UTF-8"},
    )
    assert proc.returncode == 1
    assert b"UTF-8" in proc.stderr


def test_missing_config_value_is_reported(user_home):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("weights:\n  similarity:\n")
    result = CliRunner().invoke(cli, ["recall", "anything"])
    assert result.exit_code == 1
    assert "weights.similarity" in result.output and "empty" in result.output
    (user_home / "config.yaml").write_text("weights: [1, 2\n")
    result = CliRunner().invoke(cli, ["recall", "anything"])
    assert result.exit_code == 1 and "not valid YAML" in result.output


def test_damage_past_the_header_is_a_clear_error(user_home):
    """The file opens (header intact) but the table pages are garbage: exit 1 with what
    to do, not a traceback."""
    for i in range(40):
        run("remember", f"memory number {i} about the staging deploy", "-p", "p")
    path = user_home / "memories.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'memories'"
        ).fetchone()[0]
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start : start + page_size] = b"\xa5" * page_size
    path.write_bytes(bytes(data))
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 1, result.output
    assert "corrupt" in result.output and "backup" in result.output
    assert "Traceback" not in result.output


def test_corrupt_database_cli(user_home):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "memories.db").write_bytes(b"garbage" * 1000)
    result = CliRunner().invoke(cli, ["list"])
    assert result.exit_code == 1 and "corrupt" in result.output and "backup" in result.output


def test_import_export_round_trip(tmp_path):
    lines = [
        {
            "text": "Use ruff",
            "id": "keep-1",
            "category": "tool_preference",
            "project": "p",
            "tags": ["py"],
            "source": "old-tool",
            "created_at": "2025-03-01T10:00:00Z",
            "confidence": 0.7,
        },
        {"text": "部署前必须运行迁移"},
        {"text": "Global one", "project": None},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n\n")
    assert "Imported 3" in run("import", str(src)).output
    kept = json.loads(run("show", "keep-1", "--json").output)
    assert kept["created_at"].startswith("2025-03-01T10:00:00") and kept["source"] == "old-tool"
    out = tmp_path / "out.jsonl"
    run("export", "-o", str(out))
    exported = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(exported) == 3
    # Into a fresh store: identical records.
    os.environ["MEMORY_LAYER_HOME"] = str(tmp_path / "second")
    run("import", str(out))
    out2 = tmp_path / "out2.jsonl"
    run("export", "-o", str(out2))
    assert out2.read_text() == out.read_text()
    # Importing again changes nothing.
    assert "Imported 0" in run("import", str(out)).output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"text": "ok"}\n{"text": \n', "Line 2: not valid JSON"),
        (b'{"text": "ok"}\n{"nope": 1}\n', 'Line 2: missing "text"'),
        (b'{"text": "ok"}\n{"text": "x", "category": "gotchas"}\n', "Line 2: Unknown category"),
        (b'{"text": "ok"}\n\xff\xfe\n', "Line 2: not valid UTF-8"),
        (b'{"text": "a", "id": "d"}\n{"text": "b", "id": "d"}\n', "repeats line 1"),
        (b"[1, 2]\n", "Line 1: expected a JSON object"),
    ],
)
def test_import_bad_line_imports_nothing(tmp_path, content, message):
    src = tmp_path / "bad.jsonl"
    src.write_bytes(content)
    result = CliRunner().invoke(cli, ["import", str(src)])
    assert result.exit_code == 1
    assert message in result.output and "Nothing was imported" in result.output
    assert json.loads(run("list", "--json").output) == []


def test_import_accepts_a_byte_order_mark_and_defaults_to_global(tmp_path):
    src = tmp_path / "windows.jsonl"
    src.write_bytes(b'\xef\xbb\xbf{"text": "saved by notepad"}\r\n')
    assert "Imported 1" in run("import", str(src)).output
    (stored,) = json.loads(run("list", "--json").output)
    assert stored["text"] == "saved by notepad" and stored["project"] is None


def test_import_from_stdin():
    result = run("import", "-", input='{"text": "from stdin", "project": "s"}\n')
    assert "Imported 1" in result.output


def test_keyword_only_fallback_and_index(keyword_only, user_home):
    from memory_layer import embed

    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  model: no-such/model\n")
    embed.reset_embedder()
    stored = run("remember", "pg_dump needs --no-owner for staging", "-p", "db")
    mid = stored.stdout.strip()
    assert "Keyword-only: the embedding model did not load" in stored.stderr
    assert "no-such/model" in stored.stderr
    info = json.loads(run("show", mid, "--json").output)
    assert info["embedding_model"] is None
    hits = json.loads(run("recall", "pg_dump staging", "-p", "db", "--json").stdout)
    assert hits[0]["id"] == mid and hits[0]["explain"]["mode"] == "keyword-only"
    doctor = CliRunner().invoke(cli, ["doctor"])
    assert doctor.exit_code == 1
    assert "keyword-only mode" in doctor.output and "no-such/model" in doctor.output
    failed = CliRunner().invoke(cli, ["index"])
    assert failed.exit_code == 1 and "not available" in failed.output
    # The model comes back (here: the fake through the seam): index backfills.
    from tests.fakes import FakeEmbedder

    embed.use_embedder(FakeEmbedder())
    assert "Embedded 1" in run("index").output
    assert json.loads(run("show", mid, "--json").output)["embedding_model"] == "fake-hash-256"
    assert "Embedded 0" in run("index").output


def test_config_commands(user_home):
    assert run("config", "get", "weights.similarity").output.strip() == "0.35"
    run("config", "set", "recency.half_life_days", "14")
    assert run("config", "get", "recency.half_life_days").output.strip() == "14.0"
    assert "half_life_days: 14.0" in (user_home / "config.yaml").read_text()
    run("config", "unset", "recency.half_life_days")
    assert run("config", "get", "recency.half_life_days").output.strip() == "30.0"
    shown = json.loads(run("config", "show", "--json").output)
    assert shown["boosts"]["troubleshooting"] == 1.5
    assert run("config").output == run("config", "show").output  # bare group shows too
    assert "half_life_days: 30.0" in run("config").output
    assert run("path").output.strip() == str(user_home)
    assert run("path", "--db").output.strip() == str(user_home / "memories.db")


def test_stats():
    run("remember", "a gotcha", "-c", "gotcha", "-p", "p")
    data = json.loads(run("stats", "--json").output)
    assert data["total"] == 1 and data["by_category"] == {"gotcha": 1}
    assert data["outcomes"] == {"judged": 0, "proven": 0, "sinking": 0,
                                "tasks_succeeded": 0, "tasks_failed": 0}
    mid = json.loads(run("list", "--json").output)[0]["id"]
    for _ in range(2):
        run("outcome", "--memory", mid, "--failed")
    data = json.loads(run("stats", "--json").output)
    assert data["outcomes"]["judged"] == 1 and data["outcomes"]["sinking"] == 1  # -0.6
    assert "1 active memory judged, 0 proven, 1 sinking" in run("stats").output


def _all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        out.append((full, command))
        if isinstance(command, click.Group):
            out.extend(_all_commands(command, full + " "))
    return out


def test_every_command_has_help_and_is_documented():
    docs = (ROOT / "README.md").read_text() + "".join(
        p.read_text() for p in (ROOT / "docs").glob("*.md")
    )
    for name, command in _all_commands(cli):
        assert command.help and len(command.help.strip()) > 20, f"{name} lacks help text"
        assert f"memory-layer {name}" in docs, f"`memory-layer {name}` is not in README/docs"
