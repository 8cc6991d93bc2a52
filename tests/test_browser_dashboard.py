"""The dashboard in a real headless Chromium (Debian's), driven by Playwright, against
`python -m memory_layer serve` started as a subprocess on a free port.

Chromium is required, not optional: CI installs it (`apt-get install -y chromium`).
Never run `playwright install`; its browser download does not work here.
Screenshots of every page land in test-output/screenshots/ (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_web_serve import environment, free_port, stop, wait_for_port

ROOT = Path(__file__).resolve().parent.parent
SHOTS = Path(os.environ.get("TEST_OUTPUT_DIR", ROOT / "test-output")) / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PROJECT = "github.com/acme/api"
HOSTILE = "Build with make <script>window.__pwned = 1; alert('xss')</script> then deploy"
SEED = [
    (
        "ECONNREFUSED 5432 in tests: start the database with docker compose up -d db",
        "troubleshooting",
    ),
    ("Run the tests with uv run pytest -x", "command"),
    ("We chose SQLite over Postgres for the local store", "decision"),
    ("Retry flaky network tests once with pytest-rerunfailures", "workaround"),
    (HOSTILE, "gotcha"),
]


# A Claude Code task whose session was shown the db memory and acted on it, written
# through the outcomes library exactly as the hooks do (in a subprocess on the same store).
SEED_TASK = """
import json, sys
from datetime import timedelta
from memory_layer.hooks.events import parse_event
from memory_layer.models import iso, utcnow
from memory_layer.outcomes.claude import on_task_signal
from memory_layer.hooks.tasks import from_hook_event
from memory_layer.storage.db import open_db

memory_id, project = sys.argv[1], sys.argv[2]
db = open_db()
start = utcnow() - timedelta(minutes=10)
at = lambda minutes: iso(start + timedelta(minutes=minutes))
db.execute("INSERT INTO sessions(session_id, project, cwd, started_at) VALUES ('s1', ?, '/repo', ?)", [project, at(0)])
db.execute("INSERT INTO usage(memory_id, session_id, project, kind, at, query, rank, score) "
           "VALUES (?, 's1', ?, 'injected', ?, 'tests fail', 1, 0.5)", [memory_id, project, at(1)])
def hook(name, minute):
    payload = {"session_id": "s1", "cwd": "/repo", "task_id": "1",
        "task_subject": "Fix the failing db tests"}
    on_task_signal(db, from_hook_event(parse_event(name, json.dumps(payload), {}), project, at(minute)))
hook("TaskCreated", 2)
db.execute("INSERT INTO session_events(session_id, project, at, kind, tool, command, ok) "
           "VALUES ('s1', ?, ?, 'tool', 'Bash', 'docker compose up -d db', 1)", [project, at(3)])
hook("TaskCompleted", 5)
"""


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            "Chromium is missing: install Debian's package (`apt-get install -y chromium`). "
            "The browser tests need /usr/bin/chromium; `playwright install` does not work here."
        )
    return path


def cli(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "memory_layer", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    env = environment(tmp_path_factory.mktemp("browser") / "home")
    ids = {}
    for text, category in SEED:
        ids[category] = cli(env, "remember", text, "-c", category, "-p", PROJECT)
    seeded = subprocess.run(
        [sys.executable, "-c", SEED_TASK, ids["troubleshooting"], PROJECT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert seeded.returncode == 0, seeded.stderr
    process, base = serve_dashboard(env)
    yield {"base": base, "ids": ids, "env": env}
    stop(process)


def serve_dashboard(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """`memory-layer serve` on a free port, once it accepts connections."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "memory_layer", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_port(process, port)
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any, server: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15000)
    problems: list[str] = []
    tab.on(
        "dialog", lambda dialog: (problems.append(f"dialog: {dialog.message}"), dialog.dismiss())
    )

    # A failed stylesheet or image, a CSP violation or a script error is a problem; an
    # error status of the page itself (a refused form) is checked by the test instead.
    def on_console(msg: Any) -> None:
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            problems.append(f"console {msg.type}: {msg.text}")

    def on_response(response: Any) -> None:
        if response.status >= 400 and response.request.resource_type != "document":
            problems.append(f"{response.status} for {response.url}")

    tab.on("console", on_console)
    tab.on("response", on_response)
    tab.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    tab.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    yield tab
    context.close()
    # No script ran (the hostile memory), and nothing broke the CSP or the page.
    assert problems == []


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    target = SHOTS / f"{name}.png"
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 1000


def test_overview_charts_render(page: Any, server: dict[str, Any]) -> None:
    page.goto(server["base"] + "/")
    assert page.locator("h1").inner_text() == "Overview"
    charts = page.locator("svg.chart")
    assert charts.count() >= 5  # category, status, project, outcome histogram, learning
    bars = page.locator("#by-category svg.chart rect.bar")
    assert bars.count() == len(SEED)
    box = bars.first.bounding_box()
    assert box is not None and box["width"] > 10 and box["height"] > 5
    assert page.locator("#outcome-distribution svg.chart-histogram rect.bar").count() == 10
    assert page.locator("#learning svg.chart-lines polyline").count() >= 2
    actions = page.locator("#activity tbody tr td:nth-child(3)").all_inner_texts()
    assert sum(a.startswith("saved it as") for a in actions) == len(SEED)
    shot(page, "overview")


def test_search_and_open_a_memory(page: Any, server: dict[str, Any]) -> None:
    page.goto(server["base"] + "/memories")
    assert page.locator("tr.memory-row").count() == len(SEED)
    shot(page, "memories")
    page.fill("input[name=q]", "database ECONNREFUSED")
    page.click("#search-form button[type=submit]")
    page.wait_for_url("**/memories?q=*")
    rows = page.locator("tr.memory-row")
    assert rows.count() >= 1
    assert rows.first.get_attribute("data-id") == server["ids"]["troubleshooting"]
    assert "recall" in page.locator("#result-summary").inner_text()
    shot(page, "search")
    rows.first.locator("a.memory-link").click()
    page.wait_for_url(f"**/memories/{server['ids']['troubleshooting']}*")
    assert "docker compose up -d db" in page.locator("#memory-text").inner_text()
    assert page.locator("#explain-score").inner_text()  # the score, term by term
    assert "created" in page.locator("#history").inner_text()
    shot(page, "detail")


def test_edit_a_memory(page: Any, server: dict[str, Any]) -> None:
    memory_id = server["ids"]["command"]
    page.goto(f"{server['base']}/memories/{memory_id}")
    page.fill("#edit-form textarea[name=text]", "Run the tests with make test")
    page.click("#edit-form button[type=submit]")
    page.wait_for_selector(".flash")
    assert "Saved" in page.locator(".flash").inner_text()
    assert page.locator("#memory-text").inner_text() == "Run the tests with make test"
    history = page.locator("#history").inner_text()
    assert "edit" in history and "uv run pytest -x" in history
    page.select_option("#category-form select[name=category]", "convention")
    page.click("#category-form button[type=submit]")
    page.wait_for_selector(".flash")
    assert page.locator("#memory-category").inner_text() == "convention"
    shot(page, "edited")
    shown = cli(server["env"], "show", memory_id, "--json")
    assert '"text": "Run the tests with make test"' in shown


def test_retire_and_restore(page: Any, server: dict[str, Any]) -> None:
    memory_id = server["ids"]["workaround"]
    page.goto(f"{server['base']}/memories/{memory_id}")
    page.fill("#retire-form input[name=reason]", "flaky tests are fixed now")
    page.click("#retire-form button[type=submit]")
    page.wait_for_selector("#restore-form")
    assert page.locator("#memory-status").inner_text() == "retired"
    assert "Withheld from agents" in page.locator("#standing").inner_text()
    shot(page, "retired")
    page.click("#restore-form button[type=submit]")
    page.wait_for_selector("#retire-form")
    assert page.locator("#memory-status").inner_text() == "active"
    history = page.locator("#history").inner_text()
    assert "retire" in history and "restore" in history and "flaky tests are fixed now" in history


def test_hostile_memory_is_shown_as_text(page: Any, server: dict[str, Any]) -> None:
    page.goto(f"{server['base']}/memories/{server['ids']['gotcha']}")
    assert "<script>" in page.locator("#memory-text").inner_text()
    assert page.evaluate("() => window.__pwned === undefined")
    page.goto(server["base"] + "/memories?q=deploy")
    assert page.locator("tr.memory-row").count() == 1
    assert page.evaluate("() => window.__pwned === undefined")


def test_purge_with_confirmation(page: Any, server: dict[str, Any]) -> None:
    # Its own memory, so the other tests see the same store in any order.
    memory_id = cli(server["env"], "remember", "A note written by mistake", "-g")
    page.goto(f"{server['base']}/memories/{memory_id}")
    page.click("#purge-link")
    page.wait_for_selector("#purge-form")
    shot(page, "purge-confirm")
    page.click("#purge-form button[type=submit]")
    page.wait_for_url("**/memories")
    assert "Purged" in page.locator(".flash").inner_text()
    assert page.locator(f'tr[data-id="{memory_id}"]').count() == 0


def test_correct_a_task_outcome(page: Any, server: dict[str, Any]) -> None:
    page.goto(server["base"] + "/tasks")
    shot(page, "tasks")
    row = page.locator("tr.task-row", has_text="Fix the failing db tests")
    assert "success" in row.inner_text()
    row.locator("a").click()
    page.wait_for_selector("#credits")
    assert page.locator("#task-outcome").inner_text() == "success"
    assert "+0.200" in page.locator("#credits").inner_text()
    page.click("#outcome-form button[value=failure]")
    page.wait_for_selector(".flash")
    assert page.locator("#task-outcome").inner_text() == "failure"
    credits = page.locator("#credits").inner_text()
    assert "-0.300" in credits and "corrected" in credits  # the old credit, reversed
    shot(page, "task")
    page.locator("#credits a").first.click()
    page.wait_for_selector("#outcome-history")
    assert "Fix the failing db tests" in page.locator("#outcome-history").inner_text()
    assert page.locator("#memory-text").inner_text().startswith("ECONNREFUSED")


@pytest.mark.parametrize("path,name", [("/settings", "settings"), ("/review", "review")])
def test_other_pages_render(page: Any, server: dict[str, Any], path: str, name: str) -> None:
    response = page.goto(server["base"] + path)
    assert response is not None and response.status == 200
    assert page.locator("h1").count() == 1
    shot(page, name)


def test_settings_change_in_the_browser(page: Any, server: dict[str, Any]) -> None:
    page.goto(server["base"] + "/settings")
    page.fill("input[name='recency.half_life_days']", "0")
    page.click("#recency button[type=submit]")
    assert "half_life_days must be above 0" in page.locator("#settings-error").inner_text()
    page.fill("input[name='recency.half_life_days']", "14")
    page.click("#recency button[type=submit]")
    page.wait_for_selector(".flash")
    assert cli(server["env"], "config", "get", "recency.half_life_days") == "14.0"
