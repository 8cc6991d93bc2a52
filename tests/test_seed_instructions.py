"""import-instructions on real, public instruction files (tests/fixtures/instructions,
SOURCES.md there names each file's repository, path and commit): the split itself, and
the CLI against a real store, re-imports and a real change between two commits."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_layer.capture.instructions import split_instructions
from memory_layer.cli.app import cli
from tests.conftest import FIXTURES
from tests.test_hooks_support import make_project

FILES = FIXTURES / "instructions"
OLD = FILES / "pydantic-ai-10eb5b8" / "CLAUDE.md"  # pydantic/pydantic-ai@10eb5b8
NEW = FILES / "pydantic-ai-0d87ab4" / "CLAUDE.md"  # pydantic/pydantic-ai@0d87ab4


def run(*args: str) -> dict:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def rows(home: Path, sql: str, *args: object) -> list[tuple]:
    conn = sqlite3.connect(str(home / "memories.db"))
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def by_text(items: list) -> dict[str, object]:
    return {item.text: item for item in items}


# --- the split -----------------------------------------------------------------------


def test_claude_md_commands_rules_and_sections() -> None:
    items = by_text(split_instructions(OLD.read_text()))
    run_tests = items["Run tests: `make test`"]
    assert run_tests.category == "command"
    assert run_tests.section == "Development Commands / Core Development Tasks"
    coverage = items[
        "Every pull request MUST have 100% coverage. You can check the coverage by running "
        "`make test`."
    ]
    assert (coverage.category, coverage.section) == ("convention", "Best Practices / Coverage")
    assert items["Multi-version testing: Python 3.9-3.13 support"].section == "Testing Strategy"
    texts = " ".join(items)
    # The file describing itself, and the Python examples, are not memories.
    assert "This file provides guidance" not in texts
    assert "class MyDeps" not in texts and "deps_type=MyDeps" not in texts
    # A term under a bold label keeps the label it needs.
    assert "Output Handling: `ToolOutput`: Structured data via tool calls" in items
    assert all(3 <= len(t.split()) and len(t) <= 500 for t in items)


def test_contributing_links_and_lists() -> None:
    items = by_text(split_instructions((FILES / "cli-cli/.github/CONTRIBUTING.md").read_text()))
    assert items["Run tests with: `make test` or `go test ./...`"].category == "command"
    assert items["Submit a pull request: `gh pr create --web`"].section == (
        "Submitting a pull request"
    )
    # A list introduced by "Please avoid:" keeps the introduction.
    assert "Please avoid: adding installation instructions specifically for your OS/package manager" in items
    texts = " ".join(items)
    assert "https://" not in texts  # reference-style link definitions are not memories
    assert not any(t.startswith("Hi!") for t in items)
    assert not any("How to Contribute to Open Source" in t for t in items)  # Resources


def test_cursorrules_plain_lists() -> None:
    listed = split_instructions((FILES / "cursorrules-fastapi/.cursorrules").read_text())
    assert [i.text for i in listed][:2] == [
        "Every function signature must include type hints.",
        "Never bare except: — catch specific exceptions or re-raise.",
    ]
    assert listed[0].category == "coding_style"
    assert not any("Python Production" in i.text for i in listed)  # the file's title line
    numbered = split_instructions((FILES / "cursorrules-guidelines/.cursorrules").read_text())
    assert len(numbered) == 26
    assert numbered[2].text == "No Apologies: Never use apologies."


def test_shell_blocks_comments_and_recipes() -> None:
    text = (
        "## Testing\n\n```bash\n# Run unit tests (no network)\nmake test\n\n"
        "hereby lint   # Run eslint\n```\n\nSet up first:\n\n```sh\nuv sync\nuv run pre-commit install\n```\n"
        "\n```python\nprint('not a command')\n```\n"
    )
    items = split_instructions(text)
    assert [(i.text, i.category) for i in items] == [
        ("Run unit tests (no network): `make test`", "command"),
        ("Run eslint: `hereby lint`", "command"),
        ("Set up first: `uv sync`; `uv run pre-commit install`", "command"),
    ]


def test_front_matter_and_same_item_twice() -> None:
    text = "---\ndescription: rules\nglobs: *.py\n---\n- Always use pathlib for joining file paths.\n\n## Again\n- Always use pathlib for joining file paths.\n"
    items = split_instructions(text)
    assert [i.text for i in items] == ["Always use pathlib for joining file paths."]
    assert items[0].line == 5


# --- the command against a real store ------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project = make_project(tmp_path / "pydantic-ai", "git@github.com:pydantic/pydantic-ai.git")
    shutil.copy(OLD, project / "CLAUDE.md")
    return project


def test_import_reimport_and_a_real_change(repo: Path, user_home: Path) -> None:
    first = run("import-instructions", str(repo))["files"][0]
    assert first["project"] == "github.com/pydantic/pydantic-ai"
    assert first["counts"] == {"new": first["items"]} and first["items"] > 40
    stored = rows(user_home, "SELECT source, status, tags FROM memories")
    assert {r[:2] for r in stored} == {("import:CLAUDE.md", "active")}
    assert all(json.loads(r[2]) == ["CLAUDE.md"] for r in stored)
    snapshot = rows(user_home, "SELECT * FROM memories ORDER BY id")
    ops = rows(user_home, "SELECT count(*) FROM operations")[0][0]

    again = run("import-instructions", str(repo / "CLAUDE.md"))["files"][0]
    assert again["counts"] == {"unchanged": first["items"]}
    assert rows(user_home, "SELECT * FROM memories ORDER BY id") == snapshot
    assert rows(user_home, "SELECT count(*) FROM operations")[0][0] == ops

    shutil.copy(NEW, repo / "CLAUDE.md")  # the file as the repository changed it later
    changed = run("import-instructions", str(repo))["files"][0]
    assert changed["counts"] == {
        "new": 1, "updated": 2, "retired": 1, "unchanged": changed["items"] - 3
    }
    updated = {c["old_text"]: c for c in changed["changes"] if c["action"] == "updated"}
    python = updated["Multi-version testing: Python 3.9-3.13 support"]
    assert python["text"] == "Multi-version testing: Python 3.10-3.13 support"
    memory = rows(user_home, "SELECT text, status FROM memories WHERE id = ?", python["memory_id"])
    assert memory == [(python["text"], "active")]
    edit_op = rows(
        user_home,
        "SELECT actor, old_value FROM operations WHERE memory_id = ? AND action = 'edit'",
        python["memory_id"],
    )
    assert edit_op and edit_op[0][0] == "import:CLAUDE.md"
    assert "3.9-3.13" in edit_op[0][1]
    retired = next(c for c in changed["changes"] if c["action"] == "retired")
    assert "mcp-run-python" in retired["text"]
    assert rows(user_home, "SELECT status FROM memories WHERE id = ?", retired["memory_id"]) == [
        ("retired",)
    ]
    reason = rows(
        user_home,
        "SELECT context FROM operations WHERE memory_id = ? AND action = 'retire'",
        retired["memory_id"],
    )
    assert "removed from CLAUDE.md (Workspace Structure)" in reason[0][0]
    shown = run("show", python["memory_id"])
    assert shown["imported_from"] == {
        "path": str((repo / "CLAUDE.md").resolve()),
        "section": "Testing Strategy",
    }
    assert any("imported from" in note for note in shown["notes"])

    settled = run("import-instructions", str(repo))["files"][0]
    assert settled["counts"] == {"unchanged": changed["items"]}


def test_a_persons_edit_is_never_overwritten(repo: Path, user_home: Path) -> None:
    first = run("import-instructions", str(repo))["files"][0]
    target = next(c for c in first["changes"] if "3.9-3.13" in c["text"])
    mine = "Multi-version testing: CI runs Python 3.9 through 3.13."
    result = CliRunner().invoke(cli, ["edit", target["memory_id"], "--text", mine])
    assert result.exit_code == 0, result.output
    shutil.copy(NEW, repo / "CLAUDE.md")
    changed = run("import-instructions", str(repo))["files"][0]
    proposed = next(c for c in changed["changes"] if c["memory_id"] == target["memory_id"])
    assert proposed["action"] == "proposed"
    assert rows(user_home, "SELECT text FROM memories WHERE id = ?", target["memory_id"]) == [
        (mine,)
    ]
    inbox = rows(user_home, "SELECT memory_id, text FROM proposals WHERE memory_id = ?", target["memory_id"])
    assert inbox == [(target["memory_id"], "Multi-version testing: Python 3.10-3.13 support")]


def test_dry_run_writes_nothing(repo: Path, user_home: Path) -> None:
    planned = run("import-instructions", str(repo), "--dry-run")
    assert planned["dry_run"] is True
    assert planned["files"][0]["counts"]["new"] == planned["files"][0]["items"]
    assert rows(user_home, "SELECT count(*) FROM memories") == [(0,)]
    run("import-instructions", str(repo))
    shutil.copy(NEW, repo / "CLAUDE.md")
    before = rows(user_home, "SELECT * FROM memories ORDER BY id")
    preview = run("import-instructions", str(repo), "--dry-run")["files"][0]
    assert preview["counts"] == {
        "new": 1, "updated": 2, "retired": 1, "unchanged": preview["items"] - 3
    }
    assert rows(user_home, "SELECT * FROM memories ORDER BY id") == before


def test_user_claude_md_is_global(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    shutil.copy(FILES / "cursorrules-fastapi/.cursorrules", home / ".claude" / "CLAUDE.md")
    monkeypatch.setenv("HOME", str(home))
    report = run("import-instructions", str(home / ".claude" / "CLAUDE.md"))["files"][0]
    assert report["project"] is None and report["counts"] == {"new": 7}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.md", "No such file or directory"),
        (lambda d: d, "No instruction file in"),
        (lambda d: (d / "x.md").write_bytes(b"\xff\xfe\x00bad") and d / "x.md", "binary file"),
    ],
)
def test_bad_paths_are_refused(tmp_path: Path, user_home: Path, make, message: str) -> None:
    target = make(tmp_path)
    result = CliRunner().invoke(cli, ["import-instructions", str(target)])
    assert result.exit_code != 0 and message in result.output
