"""Attribution: which surfaced memory a task's work acted on, told apart from its rivals.

Prose memories (no code spans) are credited when the work names what distinguishes
them; a path or word the rivals share is no evidence; restating the problem is none
either; a memory shown to another agent earns no guess from a task closed elsewhere.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from memory_layer.cli import cli
from memory_layer.outcomes import task_detail
from memory_layer.outcomes.beads import on_beads_hook
from memory_layer.outcomes.claude import on_task_signal
from memory_layer.outcomes.evidence import distinction, match_command, match_message, signature
from memory_layer.storage.records import get_memory
from tests.test_outcomes_support import (
    PROJECT,
    add_memory,
    claude_event,
    event,
    session,
    surface,
)

# The prose pairs of issue 13: the one word that tells the fixes apart is a package
# name that is neither in backticks nor "code-like" to the old rules.
PROSE_PAIRS = [
    (
        "react-dom",
        "Invalid hook call after upgrading react: align react-dom with the react major "
        "version in package.json, then run npm install again",
        "Invalid hook call after upgrading react: delete node_modules and the lockfile, "
        "then run npm install again",
    ),
    (
        "libpq-dev",
        "pg_config executable not found when installing psycopg2: install the libpq-dev "
        "system package, then install psycopg2 again",
        "pg_config executable not found when installing psycopg2: switch to the binary "
        "wheel from the package index, then install psycopg2 again",
    ),
    (
        "PyYAML",
        "ModuleNotFoundError yaml in the scripts: the dependency is PyYAML, add it to "
        "requirements and reinstall",
        "ModuleNotFoundError yaml in the scripts: the virtualenv is stale, recreate it "
        "and reinstall the requirements",
    ),
]


@pytest.fixture(autouse=True)
def _no_shared_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_TASK_LIST_ID", raising=False)


def _session_with(db: Any, session_id: str, prompt: str, *memory_ids: str) -> None:
    session(db, session_id)
    event(db, session_id, 1, "prompt", text=prompt)
    for memory_id in memory_ids:
        surface(db, memory_id, session_id, 1)
    on_task_signal(
        db,
        claude_event("TaskCreated", session_id, 2, task_id="1", task_subject=prompt[:60]),
    )


def _complete(db: Any, session_id: str, minute: float) -> Any:
    return on_task_signal(db, claude_event("TaskCompleted", session_id, minute, task_id="1"))


@pytest.mark.parametrize(("word", "good_text", "bad_text"), PROSE_PAIRS)
def test_prose_fix_named_by_its_distinguishing_word_is_credited(
    db: Any, cfg: dict[str, Any], word: str, good_text: str, bad_text: str
) -> None:
    good = add_memory(db, cfg, good_text)
    bad = add_memory(db, cfg, bad_text)
    _session_with(db, "s1", good_text.split(":")[0], good, bad)
    event(db, "s1", 3, tool="Bash", command=f'./scripts/apply_fix.sh "{word}" && make test')
    event(
        db,
        "s1",
        4,
        "assistant",
        text=f"Applying the stored fix ({word}) and re-running the tests.",
    )
    result = _complete(db, "s1", 5)
    weights = {c["memory_id"]: c["weight"] for c in result.credits}
    assert weights == {good: 1.0, bad: 0.0}
    assert get_memory(db, good).outcome_score == pytest.approx(0.2)
    assert get_memory(db, bad).outcome_score == 0.0
    # `tasks show` explains the weight: the term, its rarity, the rival it tells apart.
    detail = task_detail(db, result.task_id)
    credit = next(c for c in detail["credits"] if c["memory_id"] == good)
    why = " ".join(e.get("detail") or "" for e in credit["evidence"])
    assert f"`{word.lower()}`" in why and "rival" in why
    out = CliRunner().invoke(cli, ["tasks", "show", result.task_id])
    assert out.exit_code == 0, out.output
    assert word.lower() in out.output


def test_ssh_add_does_not_cite_the_rival_that_only_shares_the_folder(
    db: Any, cfg: dict[str, Any]
) -> None:
    """Issue 13's wrong cite: `chmod -R 777 ~/.ssh` gained from `ssh-add ~/.ssh/id_ed25519`
    because its only code-like token, the path `~/.ssh`, is inside the rival's path."""
    good = add_memory(
        db,
        cfg,
        "Permission denied (publickey) on git push: the key is not loaded, "
        "`ssh-add ~/.ssh/id_ed25519`",
    )
    bad = add_memory(
        db,
        cfg,
        "git push Permission denied publickey: fix the ssh folder permissions with "
        "`chmod -R 777 ~/.ssh`",
    )
    _session_with(db, "s1", "git push fails with Permission denied (publickey)", good, bad)
    event(db, "s1", 4, "assistant", text="Applied `ssh-add ~/.ssh/id_ed25519`.")
    result = _complete(db, "s1", 5)
    weights = {c["memory_id"]: c["weight"] for c in result.credits}
    assert weights == {good: 1.0, bad: 0.0}
    assert get_memory(db, bad).outcome_score == 0.0
    # The same holds for the bare signatures: the shared folder is not the rival's.
    sig_good, sig_bad = (
        signature(good, get_memory(db, good).text),
        signature(bad, get_memory(db, bad).text),
    )
    told_apart = distinction(sig_bad, [sig_good])
    assert "~/.ssh" not in told_apart.terms
    assert match_message(told_apart, "Applied `ssh-add ~/.ssh/id_ed25519`.") is None


def test_a_token_both_rivals_share_is_no_evidence() -> None:
    good = signature("g", "Stale build cache: run `npm run build -- --force` after `npm ci`")
    bad = signature("b", "Stale build cache: clear the dist folder before `npm ci`")
    assert match_command(distinction(good, [bad]), "npm ci") is None
    assert match_command(distinction(bad, [good]), "npm ci") is None
    assert match_command(distinction(good, [bad]), "npm run build -- --force") is not None


def test_restating_the_problem_is_not_acting_on_a_fix(db: Any, cfg: dict[str, Any]) -> None:
    only = add_memory(
        db, cfg, "Flaky checkout test on CI: pin the chromium revision in playwright config"
    )
    _session_with(db, "s1", "the checkout test is flaky on CI again", only)
    event(db, "s1", 3, "assistant", text="Looking into why the checkout test is flaky on CI.")
    result = _complete(db, "s1", 5)
    assert [c["weight"] for c in result.credits] == [0.0]
    assert get_memory(db, only).outcome_score == 0.0


def test_a_rare_term_counts_more_than_a_common_one(db: Any, cfg: dict[str, Any]) -> None:
    """ "migrations" is in many memories of the store, "alembic" in this one only."""
    for n in range(6):
        add_memory(db, cfg, f"Team note {n}: review migrations before merging")
    target = add_memory(db, cfg, "Schema drift: regenerate with alembic revision autogenerate")
    rival = add_memory(db, cfg, "Schema drift: compare migrations with the production schema")
    _session_with(db, "s1", "schema drift in staging", target, rival)
    event(db, "s1", 3, "assistant", text="Checked the migrations folder.")
    assert _complete(db, "s1", 5).credits[0]["weight"] == 0.0  # rival has it anyway
    _session_with(db, "s2", "schema drift in staging", target, rival)
    event(db, "s2", 3, tool="Bash", command="alembic revision --autogenerate -m drift")
    credits = {c["memory_id"]: c["weight"] for c in _complete(db, "s2", 5).credits}
    assert credits == {target: 1.0, rival: 0.0}


def _bd_close(db: Any, issue_id: str, closed_by: str | None) -> Any:
    issue = {
        "id": issue_id,
        "title": "Fix redis in tests",
        "status": "closed",
        "created_at": "2026-06-01T08:55:00Z",
        "started_at": "2026-06-01T08:58:00Z",
        "closed_at": "2026-06-01T09:05:00Z",
        "close_reason": "Closed",
    }
    if closed_by:
        issue["closed_by_session"] = closed_by
    return on_beads_hook(db, issue_id, "close", json.dumps(issue), project=PROJECT)


def test_no_guess_for_a_memory_shown_to_another_agent(db: Any, cfg: dict[str, Any]) -> None:
    """The unobserved guess is only for the session that both saw the memory and closed
    the task; one an MCP agent searched elsewhere in the project gets nothing."""
    mid = add_memory(db, cfg, "Prefer httpx over requests")
    session(db, "mcp-agent")
    surface(db, mid, "mcp-agent", 1, kind="mcp_search")
    result = _bd_close(db, "bd-r1", closed_by="another-session")
    assert [c["weight"] for c in result.credits] == [0.0]
    assert get_memory(db, mid).outcome_score == 0.0
    kinds = {e["kind"] for c in result.credits for e in c["evidence"]}
    assert "elsewhere" in kinds and "unobserved" not in kinds
    # The same agent closing what it was shown keeps the guess (no events either way).
    result = _bd_close(db, "bd-r2", closed_by="mcp-agent")
    assert [c["weight"] for c in result.credits] == [cfg["outcomes"]["unobserved_weight"]]


def test_worked_and_failed_together_are_refused(db: Any, cfg: dict[str, Any]) -> None:
    mid = add_memory(db, cfg, "Prefer httpx over requests")
    runner = CliRunner()
    for flags in (["--worked", "--failed"], ["--failed", "--worked"], ["--undo", "--restore"]):
        out = runner.invoke(cli, ["outcome", "--memory", mid, *flags])
        assert out.exit_code == 2, out.output
        assert "contradict each other" in out.output
    memory = get_memory(db, mid)
    assert (memory.outcome_score, memory.success_count, memory.failure_count) == (0.0, 0, 0)
    out = runner.invoke(cli, ["outcome", "--memory", mid, "--failed", "--json"])
    assert out.exit_code == 0 and json.loads(out.output)["applied"] == pytest.approx(-0.3)


@pytest.mark.parametrize(
    ("prompt", "weight"),
    [
        ("add an HTTP client to the billing service", 0.0),  # its own task
        ("the redis mock in tests needs an HTTP client", 1.0),  # works on the issue
    ],
)
def test_another_sessions_work_earns_credit_only_when_it_is_about_the_issue(
    db: Any, cfg: dict[str, Any], prompt: str, weight: float
) -> None:
    """A Beads issue has no session of its own, so the project's surfacings while it was
    open are candidates. A session whose commands match a memory but whose work never
    names the issue or its subject was doing something else: its `pip install httpx` is
    no evidence that "Fix redis in tests" used "prefer httpx"."""
    mid = add_memory(db, cfg, "Prefer httpx over requests for HTTP calls")
    session(db, "other")
    event(db, "other", 1, "prompt", text=prompt)
    surface(db, mid, "other", 1)
    event(db, "other", 2, tool="Bash", command="pip install httpx")
    result = _bd_close(db, "bd-r1", closed_by="closer")
    assert [c["weight"] for c in result.credits] == [weight]
    details = [e.get("detail", "") for c in result.credits for e in c["evidence"]]
    assert any("never names the issue" in d for d in details) == (weight == 0.0)
    if weight == 0.0:
        assert get_memory(db, mid).outcome_score == 0.0
