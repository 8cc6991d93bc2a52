"""The dashboard's layout, text and fonts in Debian's headless Chromium, against the real
server, with memories from public CLAUDE.md/AGENTS.md files (tests/fixtures/public/).

Every page fits a 1280 px desktop and a 390 px phone with a 400-character unbroken
memory in the store; Chinese text renders with a CJK font of the declared stack (Debian's
fonts-wqy-microhei, which ./scripts/test installs); recent activity reads as words;
settings say what each key does; the search marks where the weaker matches begin.
Screenshots go to test-output/screenshots/layout-*.png (docs/screenshots/ holds the
reviewed copies the README shows).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.test_browser_dashboard import (
    CHROMIUM_ARGS,
    SHOTS,
    chromium_path,
    cli,
    serve_dashboard,
)
from tests.test_web_serve import environment, stop

PUBLIC = Path(__file__).parent / "fixtures" / "public" / "memories.jsonl"
WIDTHS = (1280, 390)
CJK_QUERY = "使用中文"
# Finds the comment rule, and the "speak Chinese" rule only through "中文": a weaker match.
WEAK_QUERY = "中文注释"
# The faces of style.css's --cjk stack that Debian packages (fonts-noto-cjk,
# fonts-wqy-microhei); the others are macOS's and Windows'.
DEBIAN_CJK_FACES = ("Noto Sans CJK SC", "WenQuanYi Micro Hei")


def by_category(env: dict[str, str]) -> dict[str, str]:
    listed = json.loads(cli(env, "list", "--json", "-n", "50"))
    return {m["category"] + ("-long" if len(m["text"]) > 300 else ""): m["id"] for m in listed}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    env = environment(tmp_path_factory.mktemp("layout") / "home")
    cli(env, "import", str(PUBLIC))
    ids = by_category(env)
    # A person's day: a text edit (stamped again by the trust layer), a recategorised
    # memory, a retirement with a reason.
    cli(env, "edit", ids["command"], "--text",
        "After you finish work: uv run ruff check --fix ., uv run ruff format ., uv run pytest.")
    cli(env, "edit", ids["coding_style"], "--category", "convention")
    long_id = ids["context-long"]
    listed = json.loads(cli(env, "list", "--json", "-n", "50"))
    emoji_rule = next(m["id"] for m in listed if "表情符号" in m["text"])
    cli(env, "forget", emoji_rule, "--reason", "superseded by the team style guide")
    process, base = serve_dashboard(env)
    yield {"base": base, "long": long_id, "env": env, "ids": ids}
    stop(process)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        yield instance
        instance.close()


def open_page(browser: Any, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15000)
    return page


def pages(server: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        ("overview", "/"),
        ("memories", "/memories"),
        ("search", "/memories?q=" + quote(CJK_QUERY)),
        ("long-memory", f"/memories/{server['long']}"),
        ("settings", "/settings"),
        ("review", "/review"),
        ("tasks", "/tasks"),
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_fits_the_window_with_a_long_unbroken_memory(
    browser: Any, server: dict[str, Any], width: int
) -> None:
    page = open_page(browser, width)
    for name, path in pages(server):
        page.goto(server["base"] + path)
        layout = page.evaluate(
            """() => ({
                page: document.documentElement.scrollWidth,
                header: document.querySelector('header').getBoundingClientRect().width,
                cut: [...document.querySelectorAll('main *')].filter(el => {
                    const box = el.getBoundingClientRect();
                    const scroller = el.closest('table');
                    return box.right > window.innerWidth + 1 && !(scroller
                        && getComputedStyle(scroller).overflowX === 'auto');
                }).length,
            })"""
        )
        assert layout["page"] <= width, (name, layout)
        # The header spans the page (it stopped partway when the page grew wider).
        assert layout["header"] == width, (name, layout)
        # Nothing sticks out past the window, except inside a table that scrolls.
        assert layout["cut"] == 0, (name, layout)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"layout-{name}-{width}.png"), full_page=True)
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_long_memory_wraps_and_a_cut_text_keeps_a_title(
    browser: Any, server: dict[str, Any], width: int
) -> None:
    page = open_page(browser, width)
    page.goto(server["base"] + f"/memories/{server['long']}")
    text = page.locator("pre.memory-text")
    sizes = text.evaluate("el => [el.scrollWidth, el.clientWidth, el.innerText.length]")
    assert sizes[0] <= sizes[1] and sizes[2] > 400  # all of it, wrapped inside its box
    page.goto(server["base"] + "/memories")
    link = page.locator(f"tr[data-id='{server['long']}'] a.memory-link")
    assert link.inner_text().endswith("…")
    assert link.get_attribute("title").startswith("Sources:https://github.com/")
    page.context.close()


def rendering_fonts(page: Any, selector: str) -> dict[str, int]:
    """The platform fonts Chromium drew the element's text with (DevTools protocol)."""
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    root = session.send("DOM.getDocument")["root"]["nodeId"]
    node = session.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return {font["familyName"]: font["glyphCount"] for font in fonts}


def test_chinese_memories_render_with_a_cjk_font(browser: Any, server: dict[str, Any]) -> None:
    installed = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True
    ).stdout
    assert any(face in installed for face in DEBIAN_CJK_FACES), (
        "No CJK font: install Debian's fonts-wqy-microhei (./scripts/test does)."
    )
    page = open_page(browser, 1280)
    page.goto(server["base"] + "/memories?q=" + quote(CJK_QUERY))
    stack = page.evaluate("getComputedStyle(document.body).fontFamily")
    for face in DEBIAN_CJK_FACES:
        assert face in stack
    page.evaluate(
        "document.querySelector('tr.memory-row a.memory-link').id = 'first-cjk'"
    )
    fonts = rendering_fonts(page, "#first-cjk")
    cjk = {name: n for name, n in fonts.items() if name in DEBIAN_CJK_FACES}
    # Every Chinese character came from a CJK face: none fell back to a box.
    text = page.locator("#first-cjk").inner_text()
    han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    assert han > 10 and sum(cjk.values()) >= han, fonts
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "layout-cjk-1280.png"), full_page=True)
    page.context.close()


def test_recent_activity_reads_as_words(browser: Any, server: dict[str, Any]) -> None:
    page = open_page(browser, 1280)
    page.goto(server["base"] + "/")
    rows = page.locator("#activity tbody tr").all_inner_texts()
    text = "\n".join(rows)
    assert "checksum:" not in text and "→ '" not in text and "verify" not in text
    assert "You (CLI)\tretired it (withheld everywhere, restorable) — “superseded by the team" \
        in text
    assert "moved it from coding_style to convention" in text
    edited = next(row for row in rows if "changed the text to" in row)
    assert "+ 1 automatic approval stamp" in edited
    assert sum("Import\tsaved it as" in row for row in rows) == 8
    page.context.close()


def test_settings_say_what_each_key_does(browser: Any, server: dict[str, Any]) -> None:
    page = open_page(browser, 1280)
    page.goto(server["base"] + "/settings")
    engine = page.locator("#engine-status").inner_text()
    assert engine.startswith("Not running.") and "running:" not in engine
    rows = page.locator("section.settings tbody tr")
    assert rows.count() > 100
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td")
        help_text = cells.nth(0).locator(".setting-help").inner_text()
        assert len(help_text) > 15
        assert cells.nth(2).inner_text()  # the default, "(empty)" for an empty one
        assert cells.nth(3).inner_text()
    similarity = page.locator("tr", has=page.locator("label[for='f-weights.similarity']"))
    assert "Share of similarity in the ranking blend" in similarity.inner_text()
    page.context.close()


def test_search_marks_where_the_weaker_matches_begin(
    browser: Any, server: dict[str, Any]
) -> None:
    recalled = json.loads(cli(server["env"], "recall", WEAK_QUERY, "--all-projects", "--json"))
    weak = [r["id"] for r in recalled if r["explain"].get("below_relative_floor") is not None]
    assert recalled and weak and weak != [r["id"] for r in recalled]
    page = open_page(browser, 1280)
    page.goto(server["base"] + "/memories?q=" + quote(WEAK_QUERY))
    order = page.evaluate(
        """() => [...document.querySelectorAll('table.memories tbody tr')].map(
            tr => tr.classList.contains('group-break') ? 'BREAK' : tr.dataset.id)"""
    )
    strong = [r["id"] for r in recalled if r["id"] not in weak]
    assert order == [*strong, "BREAK", *weak]
    assert "Weaker matches" in page.locator("#weaker-matches").inner_text()
    text = cli(server["env"], "recall", WEAK_QUERY, "--all-projects")
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("-- weaker matches"))
    assert weak[0] in lines[at + 2] and all(s not in "\n".join(lines[at:]) for s in strong)
    page.context.close()
