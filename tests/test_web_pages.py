"""Every dashboard page through the Flask test client, against a real SQLite store."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from click.testing import CliRunner

from memory_layer.cli import cli
from memory_layer.config import get_value, load_config
from memory_layer.embed import get_embedder
from memory_layer.errors import NotFound
from memory_layer.memories import remember
from memory_layer.models import iso, utcnow
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import get_memory, history
from memory_layer.web import create_app

BASE = "http://127.0.0.1:8080"
PROJECT = "github.com/acme/api"


@pytest.fixture
def client():
    return create_app().test_client()


@pytest.fixture
def seeded(db, cfg):
    texts = [
        ("Run the tests with `uv run pytest -x`", "command", PROJECT, "cli"),
        (
            "ECONNREFUSED 5432 in tests: start the database with docker compose up -d db",
            "troubleshooting",
            PROJECT,
            "hook",
        ),
        ("We chose SQLite over Postgres for the local store", "decision", None, "cli"),
        ("pytest fixtures live in tests/conftest.py", "convention", PROJECT, "mcp:cursor"),
        (
            "Never run database migrations by hand in production",
            "gotcha",
            "github.com/acme/web",
            "cli",
        ),
    ]
    ids = {}
    for text, category, project, source in texts:
        ids[category] = remember(
            db, text, config=cfg, category=category, project=project, source=source
        ).memory.id
    return ids


def page(client, path: str, status: int = 200) -> str:
    response = client.get(path, base_url=BASE)
    assert response.status_code == status, response.get_data(as_text=True)[:2000]
    return response.get_data(as_text=True)


def post(client, path: str, data: dict | None = None, status: int = 302):
    html = page(client, "/settings")
    token = re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)
    response = client.post(
        path, data={**(data or {}), "csrf_token": token}, base_url=BASE, headers={"Origin": BASE}
    )
    assert response.status_code == status, response.get_data(as_text=True)[:2000]
    return response


def post_edit(client, memory_id: str, data: dict, status: int = 302):
    """Save the edit form as a browser does: with the version the page was rendered from."""
    html = page(client, f"/memories/{memory_id}")
    version = re.search(r'name="version" value="([0-9a-f]+)"', html).group(1)
    return post(client, f"/memories/{memory_id}/edit", {**data, "version": version}, status)


def listed_ids(html: str) -> list[str]:
    return re.findall(r'class="memory-row" data-id="([0-9a-f]+)"', html)


# --- overview -----------------------------------------------------------------------


def test_overview_counts_charts_and_activity(client, seeded, db):
    from memory_layer.memories import forget

    forget(db, seeded["gotcha"], actor="cli", reason="moved to a runbook")
    html = page(client, "/")
    assert "5 memories · 4 active" in html
    assert html.count('<svg class="chart') >= 4
    for section in ("by-category", "by-status", "by-project", "outcome-distribution"):
        assert f'id="{section}"' in html
    assert "troubleshooting" in html and "retired" in html and PROJECT in html
    activity = html[html.index('id="activity"') :]
    assert "retired it" in activity and "moved to a runbook" in activity
    assert "Never run database migrations by hand" in activity  # the memory, not just its id
    # Newest first: the retirement is listed before the creations.
    assert activity.index("retired it") < activity.index("saved it as")
    # In words, with the approval stamps folded into the writes that caused them.
    assert "checksum:" not in activity


def test_overview_learning_charts(client, seeded):
    html = page(client, "/")
    learning = html[html.index('id="learning"') : html.index('id="activity"')]
    assert 'class="chart chart-lines"' in learning
    assert "successes" in learning and "proven share" in learning


def test_overview_on_an_empty_store(client):
    html = page(client, "/")
    assert "0 memories" in html and "No activity yet" in html


# --- memories list and search ---------------------------------------------------------


def test_list_filters(client, seeded):
    assert len(listed_ids(page(client, "/memories"))) == 5
    assert listed_ids(page(client, "/memories?category=decision")) == [seeded["decision"]]
    assert listed_ids(page(client, "/memories?project=global")) == [seeded["decision"]]
    assert set(listed_ids(page(client, f"/memories?project={PROJECT}"))) == {
        seeded["command"],
        seeded["troubleshooting"],
        seeded["convention"],
    }
    assert listed_ids(page(client, "/memories?source=hook")) == [seeded["troubleshooting"]]


def test_list_status_and_outcome_range(client, seeded, db):
    from memory_layer.storage.records import update_memory

    update_memory(db, seeded["command"], {"outcome_score": 0.6}, actor="test")
    update_memory(db, seeded["gotcha"], {"outcome_score": -0.5}, actor="test")
    update_memory(db, seeded["decision"], {"status": "retired"}, actor="test")
    assert listed_ids(page(client, "/memories?min_outcome=0.5")) == [seeded["command"]]
    assert listed_ids(page(client, "/memories?max_outcome=-0.1")) == [seeded["gotcha"]]
    assert listed_ids(page(client, "/memories?status=retired")) == [seeded["decision"]]
    assert listed_ids(page(client, "/memories?sort=outcome"))[0] == seeded["command"]
    assert "must be a number" in page(client, "/memories?min_outcome=lots", 400)
    assert "Unknown sort" in page(client, "/memories?sort=sideways", 400)
    assert "Unknown category" in page(client, "/memories?category=nonsense", 400)


def test_pagination(client, db, cfg):
    for n in range(30):
        remember(db, f"memory number {n} about widget {n * 7}", config=cfg, dedupe=False)
    first = page(client, "/memories")
    second = page(client, "/memories?page=2")
    assert len(listed_ids(first)) == 25 and len(listed_ids(second)) == 5
    assert not set(listed_ids(first)) & set(listed_ids(second))
    assert 'rel="next"' in first and 'rel="next"' not in second and 'rel="prev"' in second
    assert "30 memories" in first
    assert "whole number" in page(client, "/memories?page=x", 400)


def test_search_ranks_exactly_like_recall(client, seeded, db, cfg):
    runner = CliRunner()
    cli_out = runner.invoke(
        cli,
        ["recall", "database tests", "--all-projects", "--include-sinking", "--json", "-n", "25"],
    )
    assert cli_out.exit_code == 0, cli_out.output
    expected = [item["id"] for item in json.loads(cli_out.output)]
    assert len(expected) >= 2
    html = page(client, "/memories?q=database+tests")
    assert listed_ids(html) == expected
    scores = re.findall(
        r'<td class="num">([0-9.]+)</td><td class="num match">[0-9.]+</td>\s*'
        r'<td class="text"><a class="memory-link"',
        html,
    )
    direct = recall(
        db,
        "database tests",
        scope=Scope(projects=None),
        config=cfg,
        limit=25,
        embedder=get_embedder(cfg),
    )
    assert scores == [f"{item.score:.3f}" for item in direct]


def test_search_filters_keep_the_ranking(client, seeded):
    everything = listed_ids(page(client, "/memories?q=tests"))
    only_hook = listed_ids(page(client, "/memories?q=tests&source=hook"))
    assert only_hook == [i for i in everything if i == seeded["troubleshooting"]]
    in_project = listed_ids(page(client, f"/memories?q=tests&project={PROJECT}"))
    assert in_project == [i for i in everything if i != seeded["decision"]]
    assert listed_ids(page(client, "/memories?q=tests&category=command")) == [seeded["command"]]


def test_search_sorted_by_another_key(client, seeded, db):
    from memory_layer.storage.records import update_memory

    update_memory(db, seeded["convention"], {"use_count": 9}, actor="test")
    ids = listed_ids(page(client, "/memories?q=tests&sort=uses"))
    assert ids[0] == seeded["convention"]


def test_search_without_matches(client, seeded):
    assert 'id="no-results"' in page(client, "/memories?q=kubernetes+helm+chart")


def test_search_of_retired_memories_needs_the_status_filter(client, seeded, db):
    from memory_layer.memories import forget

    forget(db, seeded["decision"], actor="cli")
    assert seeded["decision"] not in listed_ids(page(client, "/memories?q=SQLite&status=active"))
    assert listed_ids(page(client, "/memories?q=SQLite&status=retired")) == [seeded["decision"]]
    assert seeded["decision"] in listed_ids(page(client, "/memories?q=SQLite"))


# --- memory detail --------------------------------------------------------------------


def test_detail_shows_text_metadata_and_history(client, seeded):
    memory_id = seeded["troubleshooting"]
    html = page(client, f"/memories/{memory_id}")
    assert "docker compose up -d db" in html and PROJECT in html and "hook" in html
    assert 'id="history"' in html and "created" in html
    assert "Agents receive this memory." in html
    assert page(client, f"/memories/{memory_id[:6]}").count(memory_id) >= 1


def test_detail_explains_the_score_term_by_term(client, seeded, db, cfg):
    memory_id = seeded["troubleshooting"]
    html = page(client, f"/memories/{memory_id}?q=ECONNREFUSED+5432")
    explain = html[html.index('id="explain"') : html.index('id="actions"')]
    for term in ("similarity", "outcome", "recency", "frequency", "confidence", "boost"):
        assert f"<td>{term}" in explain or f"× {term}" in explain
    found = recall(
        db, "ECONNREFUSED 5432", scope=Scope(projects=None), config=cfg, embedder=get_embedder(cfg)
    )
    scored = next(s for s in found if s.memory.id == memory_id)
    shown = re.search(r'id="explain-score">([0-9.]+)<', explain).group(1)
    assert shown == f"{scored.score:.3f}"
    assert f"{scored.explain['weighted']['similarity']:.3f}" in explain


def test_detail_explain_for_a_query_that_does_not_match(client, seeded):
    html = page(client, f"/memories/{seeded['decision']}?q=kubernetes")
    assert 'id="explain-none"' in html


def test_detail_usage_history(client, seeded, db):
    memory_id = seeded["command"]
    db.execute(
        "INSERT INTO usage(memory_id, session_id, project, kind, at, query, rank, score) "
        "VALUES (?, 'session-abc123', ?, 'injected', ?, 'how to run tests', 1, 0.71)",
        [memory_id, PROJECT, iso(utcnow())],
    )
    html = page(client, f"/memories/{memory_id}")
    usage = html[html.index('id="usage"') : html.index('id="history"')]
    assert "session-abc1" in usage and "injected" in usage and "how to run tests" in usage


def test_detail_unknown_memory_is_404(client):
    assert "No memory with id" in page(client, "/memories/ffffffffffff", 404)


# --- actions --------------------------------------------------------------------------


def test_edit_keeps_history(client, seeded, db):
    memory_id = seeded["command"]
    post_edit(
        client,
        memory_id,
        {"text": "Run the tests with `make test`", "tags": "ci, tests", "confidence": "0.9"},
    )
    memory = get_memory(db, memory_id)
    assert memory.text == "Run the tests with `make test`"
    assert memory.tags == ("ci", "tests") and memory.confidence == 0.9
    edit = [op for op in history(db, memory_id) if op.action == "edit"]
    assert edit and edit[-1].actor == "web"
    assert edit[-1].old_value["text"] == "Run the tests with `uv run pytest -x`"
    html = page(client, f"/memories/{memory_id}")
    assert "uv run pytest -x" in html[html.index('id="history"') :]


def test_edit_with_nothing_changed_says_so(client, seeded, db):
    memory = get_memory(db, seeded["command"])
    response = post_edit(
        client,
        memory.id,
        {"text": memory.text, "tags": "", "confidence": str(memory.confidence)},
    )
    assert [op.action for op in history(db, memory.id)] == ["create"]
    assert "Nothing changed" in client.get(response.headers["Location"], base_url=BASE).get_data(
        as_text=True
    )


def test_edit_rejects_bad_input(client, seeded, db):
    memory_id = seeded["command"]
    assert "Memory text is empty" in post_edit(client, memory_id, {"text": "   "}, 400).get_data(
        as_text=True
    )
    assert "Confidence must be" in post_edit(client, memory_id, {"confidence": "7"}, 400).get_data(
        as_text=True
    )
    assert get_memory(db, memory_id).text == "Run the tests with `uv run pytest -x`"


def test_recategorise(client, seeded, db):
    memory_id = seeded["convention"]
    post(client, f"/memories/{memory_id}/category", {"category": "pattern"})
    assert get_memory(db, memory_id).category == "pattern"
    body = post(client, f"/memories/{memory_id}/category", {"category": "nonsense"}, 400).get_data(
        as_text=True
    )
    assert "Unknown category" in body


def test_retire_and_restore(client, seeded, db):
    memory_id = seeded["gotcha"]
    post(client, f"/memories/{memory_id}/retire", {"reason": "outdated"})
    assert get_memory(db, memory_id).status == "retired"
    html = page(client, f"/memories/{memory_id}")
    assert 'id="restore-form"' in html and "Withheld from agents" in html
    post(client, f"/memories/{memory_id}/restore", {"reason": "still true"})
    assert get_memory(db, memory_id).status == "active"
    actions = [(op.action, op.context.get("reason")) for op in history(db, memory_id)]
    assert actions[-2:] == [("retire", "outdated"), ("restore", "still true")]
    assert "already active" in post(client, f"/memories/{memory_id}/restore", {}, 400).get_data(
        as_text=True
    )


def test_purge_needs_the_confirmation_step(client, seeded, db):
    memory_id = seeded["decision"]
    post(client, f"/memories/{memory_id}/purge", {}, 400)
    assert get_memory(db, memory_id).id == memory_id
    post(client, f"/memories/{memory_id}/purge", {"confirm": "wrong"}, 400)
    confirm_page = page(client, f"/memories/{memory_id}/purge")
    assert f'name="confirm" value="{memory_id}"' in confirm_page
    post(client, f"/memories/{memory_id}/purge", {"confirm": memory_id, "reason": "wrong"})
    with pytest.raises(NotFound):
        get_memory(db, memory_id)
    assert history(db, memory_id)[-1].action == "purge"
    page(client, f"/memories/{memory_id}", 404)


# --- settings -------------------------------------------------------------------------


def test_settings_show_every_key(client):
    html = page(client, "/settings")
    for key in (
        "weights.similarity",
        "boosts.gotcha",
        "recency.half_life_days",
        "retrieval.min_similarity",
        "embedding.enabled",
    ):
        assert f'name="{key}"' in html
    assert 'id="embedding-status"' in html and 'id="engine-status"' in html


def test_settings_save_like_config_set(client):
    post(
        client,
        "/settings",
        {"section": "weights", "weights.similarity": "0.4", "weights.outcome": "0.25"},
    )
    assert get_value("weights.similarity") == 0.4
    html = page(client, "/settings")
    assert 'value="0.4"' in html and "reset weights.similarity" in html
    post(client, "/settings/reset", {"key": "weights.similarity"})
    assert get_value("weights.similarity") == 0.35


def test_settings_validation_writes_nothing(client):
    from memory_layer.paths import config_path

    response = post(
        client,
        "/settings",
        {"section": "recency", "recency.half_life_days": "0"},
        400,
    )
    assert "half_life_days must be above 0" in response.get_data(as_text=True)
    response = post(
        client,
        "/settings",
        {"section": "boosts", "boosts.gotcha": "2", "boosts.decision": "lots"},
        400,
    )
    assert "must be a number" in response.get_data(as_text=True)
    assert not config_path().exists() or "gotcha" not in config_path().read_text()
    assert load_config()["boosts"]["gotcha"] == 1.4
    assert "Unknown settings section" in post(
        client, "/settings", {"section": "nope"}, 400
    ).get_data(as_text=True)
    assert "Unknown config key" in post(
        client, "/settings/reset", {"key": "weights.nope"}, 400
    ).get_data(as_text=True)


def test_settings_booleans(client):
    post(client, "/settings", {"section": "embedding", "embedding.enabled": "false"})
    assert get_value("embedding.enabled") is False


# --- review inbox ---------------------------------------------------------------------


def test_review_inbox_lists_and_decides(client, db, cfg):
    pending = remember(
        db,
        "Deploys go through the release branch",
        config=cfg,
        status="pending",
        source="mcp:cursor",
    ).memory
    html = page(client, "/review")
    assert f'id="item-{pending.id}"' in html and "proposed by mcp:cursor" in html
    post(client, f"/review/{pending.id}", {"decision": "accept", "reason": "right"})
    assert get_memory(db, pending.id).status == "active"
    assert 'id="inbox-empty"' in page(client, "/review")


def test_review_reject_needs_a_reason(client, db, cfg):
    pending = remember(db, "Use tabs", config=cfg, status="pending", source="mcp:x").memory
    body = post(client, f"/review/{pending.id}", {"decision": "reject"}, 400).get_data(as_text=True)
    assert "Say why" in body
    post(client, f"/review/{pending.id}", {"decision": "reject", "reason": "we use spaces"})
    assert get_memory(db, pending.id).status == "rejected"


def test_review_revise(client, db, cfg):
    pending = remember(db, "Use tabs", config=cfg, status="pending", source="mcp:x").memory
    post(
        client,
        f"/review/{pending.id}",
        {"decision": "revise", "revised_text": "Use four spaces", "reason": "fixed"},
    )
    memory = get_memory(db, pending.id)
    assert (memory.text, memory.status) == ("Use four spaces", "active")


# --- tasks ----------------------------------------------------------------------------


@pytest.fixture
def task(db, cfg):
    """A Claude Code task whose session was shown a memory and acted on it."""
    from memory_layer.hooks.events import parse_event
    from memory_layer.hooks.tasks import from_hook_event
    from memory_layer.outcomes.claude import on_task_signal

    memory_id = remember(
        db,
        "ECONNREFUSED 5432: start the db with `docker compose up -d db`",
        config=cfg,
        project=PROJECT,
        category="troubleshooting",
    ).memory.id
    start = utcnow() - timedelta(minutes=10)

    def at(minutes: float) -> str:
        return iso(start + timedelta(minutes=minutes))

    db.execute(
        "INSERT INTO sessions(session_id, project, cwd, started_at) VALUES ('s1', ?, '/repo', ?)",
        [PROJECT, at(0)],
    )
    db.execute(
        "INSERT INTO usage(memory_id, session_id, project, kind, at, query, rank, score) VALUES (?, 's1', ?, 'injected', ?, 'q', 1, 0.5)",
        [memory_id, PROJECT, at(1)],
    )

    def hook(name: str, minute: float) -> None:
        payload = {"session_id": "s1", "cwd": "/repo", "task_id": "1"}
        payload["task_subject"] = "Fix the <b>db</b> tests"
        event = parse_event(name, json.dumps(payload), {})
        on_task_signal(db, from_hook_event(event, PROJECT, at(minute)))

    hook("TaskCreated", 2)
    db.execute(
        "INSERT INTO session_events(session_id, project, at, kind, tool, command, ok) VALUES ('s1', ?, ?, 'tool', 'Bash', 'docker compose up -d db', 1)",
        [PROJECT, at(3)],
    )
    hook("TaskCompleted", 5)
    return memory_id


def test_tasks_list_and_detail(client, task, db):
    html = page(client, "/tasks")
    assert "Fix the &lt;b&gt;db&lt;/b&gt; tests" in html and "success" in html
    task_id = re.search(r'href="/task\?id=([^"]+)"', html).group(1)
    detail = page(client, f"/task?id={task_id}")
    assert "docker compose up -d db" in detail and 'id="credits"' in detail
    assert "+0.200" in detail
    memory_page = page(client, f"/memories/{task}")
    assert (
        'id="outcome-history"' in memory_page
        and "Fix the &lt;b&gt;db&lt;/b&gt; tests" in memory_page
    )


def test_correct_an_outcome_undoes_and_redoes(client, task, db):
    from urllib.parse import unquote

    from memory_layer.outcomes import list_tasks

    task_id = list_tasks(db)[0]["id"]
    assert get_memory(db, task).outcome_score == pytest.approx(0.2)
    response = post(client, "/task/outcome", {"task_id": task_id, "outcome": "failure"})
    assert unquote(response.headers["Location"]).endswith(task_id)
    memory = get_memory(db, task)
    assert memory.outcome_score == pytest.approx(-0.3)
    assert (memory.success_count, memory.failure_count) == (0, 1)
    post(client, "/task/outcome", {"task_id": task_id, "outcome": "success"})
    assert get_memory(db, task).outcome_score == pytest.approx(0.2)
    assert "Choose the outcome" in post(
        client, "/task/outcome", {"task_id": task_id, "outcome": "meh"}, 400
    ).get_data(as_text=True)
    page(client, "/task?id=no-such-task", 404)


def test_tasks_empty(client):
    assert 'id="tasks-empty"' in page(client, "/tasks")


def test_unknown_page_is_a_404_page(client):
    assert "Error 404" in page(client, "/no/such/page", 404)


def test_review_conflict_pick_a_value(client, db, cfg):
    from memory_layer.trust.facts import write

    first = write(
        db,
        "The staging db port is 5432",
        config=cfg,
        source="cli",
        subject="staging db",
        key="port",
    ).memory
    second = write(
        db,
        "The staging db port is 6543",
        config=cfg,
        source="user",
        subject="staging db",
        key="port",
    ).memory
    html = page(client, "/review")
    conflict = re.search(r'<article class="inbox-item kind-conflict" id="item-([^"]+)"', html)
    assert conflict, html
    assert 'name="choose" value="' + first.id + '"' in html and second.id in html
    post(
        client,
        f"/review/{conflict.group(1)}",
        {"decision": "accept", "choose": second.id, "reason": "checked"},
    )
    assert get_memory(db, second.id).status == "active"
    assert get_memory(db, first.id).status != "active"
    assert "kind-conflict" not in page(client, "/review")


def test_sinking_memories_are_marked_and_still_searchable(client, seeded, db):
    from memory_layer.storage.records import update_memory

    sinking = seeded["troubleshooting"]
    update_memory(db, sinking, {"outcome_score": -0.9, "failure_count": 3}, actor="test")
    row = re.search(rf'data-id="{sinking}">.*?</tr>', page(client, "/memories"), re.S).group(0)
    assert "mark-sinking" in row
    assert sinking in listed_ids(page(client, "/memories?q=ECONNREFUSED"))
    detail = page(client, f"/memories/{sinking}")
    assert 'class="badge mark-sinking"' in detail


def test_review_a_proposed_change(client, seeded, db, cfg):
    from memory_layer.trust.review import propose_change

    target = seeded["command"]
    proposal = propose_change(
        db,
        target,
        "Run the tests with `uv run pytest -x -q`",
        source="mcp:codex",
        config=cfg,
        reason="quieter output",
        changes={"category": "convention"},
    )
    html = page(client, "/review")
    item = html[html.index(f'id="item-{proposal["id"]}"') :]
    assert "change proposed by mcp:codex: quieter output" in item
    assert "uv run pytest -x -q" in item and "category → convention" in item
    post(client, f"/review/{proposal['id']}", {"decision": "accept", "reason": "ok"})
    memory = get_memory(db, target)
    assert (memory.text, memory.category) == (
        "Run the tests with `uv run pytest -x -q`",
        "convention",
    )
