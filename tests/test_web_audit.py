"""Regressions from an audit of a running dashboard: edits that hid or rewrote memories,
lost updates, 500s on a corrupt store or odd query strings, and dishonest messages."""

from __future__ import annotations

import html as html_lib
import re
import sqlite3

import pytest

from memory_layer.memories import edit, forget, remember
from memory_layer.paths import db_path
from memory_layer.storage.records import get_memory, history, update_memory
from memory_layer.trust.visibility import withheld_reason
from memory_layer.web import create_app
from tests.test_web_pages import BASE, PROJECT, page, post, post_edit


@pytest.fixture
def client():
    return create_app().test_client()


def make(db, cfg, text: str, **kwargs) -> str:
    return remember(db, text, config=cfg, dedupe=False, **kwargs).memory.id


def version_of(client, memory_id: str) -> str:
    html = page(client, f"/memories/{memory_id}")
    return re.search(r'name="version" value="([0-9a-f]+)"', html).group(1)


def flashed(client, response) -> str:
    return client.get(response.headers["Location"], base_url=BASE).get_data(as_text=True)


def edits(db, memory_id: str) -> list:
    return [op for op in history(db, memory_id) if op.action == "edit"]


# --- 1. a dashboard correction stays visible to agents ----------------------------------


def test_web_edit_is_vouched_for_like_a_cli_edit(client, db, cfg):
    memory_id = make(db, cfg, "Deploys run from the main branch")
    response = post_edit(client, memory_id, {"text": "Deploys run from the release branch"})
    memory = get_memory(db, memory_id)
    assert memory.text == "Deploys run from the release branch"
    assert withheld_reason(memory, cfg) is None
    assert memory.extra["approved_by"] == "user:web"
    assert [op.action for op in history(db, memory_id)][-2:] == ["edit", "verify"]
    assert "Still withheld" not in flashed(client, response)
    assert "Agents receive this memory." in page(client, f"/memories/{memory_id}")


def test_web_edit_of_a_pending_record_does_not_approve_it(client, db, cfg):
    # Vouching keeps the status: editing an agent's proposal is not accepting it.
    memory_id = make(db, cfg, "Use tabs in Makefiles", source="mcp:cursor", status="pending")
    response = post_edit(client, memory_id, {"text": "Makefile recipes need tabs"})
    assert get_memory(db, memory_id).status == "pending"
    assert "Still withheld from agents" in flashed(client, response)


def test_a_confidence_only_save_vouches_for_no_text(client, db, cfg):
    # Review: the text below was changed behind the review (direct SQL) and nobody has
    # read it; saving a new confidence must not stamp it as verified.
    memory_id = make(db, cfg, "Deploys run from the main branch")
    db.execute("UPDATE memories SET text = ? WHERE id = ?", ["Deploys skip CI", memory_id])
    post_edit(client, memory_id, {"text": "Deploys skip CI", "confidence": "0.4"})
    memory = get_memory(db, memory_id)
    assert memory.confidence == 0.4
    assert withheld_reason(memory, cfg) is not None


# --- 2. a save changes only what the person changed -------------------------------------


def test_crlf_from_the_browser_does_not_rewrite_the_text(client, db, cfg):
    memory_id = make(db, cfg, "line one\nline two")
    before = get_memory(db, memory_id)
    post_edit(client, memory_id, {"text": "line one\r\nline two", "confidence": "0.5"})
    after = get_memory(db, memory_id)
    assert after.text == "line one\nline two" and after.confidence == 0.5
    assert after.embedding_model == before.embedding_model
    assert set(edits(db, memory_id)[-1].new_value) == {"confidence"}


def test_a_typed_multiline_text_is_stored_with_lf(client, db, cfg):
    memory_id = make(db, cfg, "one line")
    post_edit(client, memory_id, {"text": "first\r\nsecond\rthird"})
    assert get_memory(db, memory_id).text == "first\nsecond\nthird"


def test_a_tag_holding_a_comma_survives_an_unrelated_save(client, db, cfg):
    memory_id = make(db, cfg, "Ports are configured in env files")
    edit(db, memory_id, config=cfg, tags=["a,b", "c"])
    html = page(client, f"/memories/{memory_id}")
    shown = html_lib.unescape(re.search(r'name="tags" value="([^"]*)"', html).group(1))
    post_edit(client, memory_id, {"tags": shown, "confidence": "0.4"})
    memory = get_memory(db, memory_id)
    assert memory.tags == ("a,b", "c") and memory.confidence == 0.4


def test_a_save_against_a_changed_record_is_refused(client, db, cfg):
    memory_id = make(db, cfg, "Cache TTL is 60 seconds")
    opened = version_of(client, memory_id)
    edit(db, memory_id, config=cfg, text="Cache TTL is 300 seconds")  # the CLI, meanwhile
    response = post(
        client,
        f"/memories/{memory_id}/edit",
        {"text": "Cache TTL is 60 seconds", "confidence": "0.3", "version": opened},
        409,
    )
    assert "changed since you opened it" in response.get_data(as_text=True)
    assert "Reload" in response.get_data(as_text=True)
    memory = get_memory(db, memory_id)
    assert memory.text == "Cache TTL is 300 seconds" and memory.confidence != 0.3


def test_outcome_changes_do_not_block_an_open_form(client, db, cfg):
    # Credits bump updated_at but not the fields the form writes.
    memory_id = make(db, cfg, "Retry flaky network tests once")
    opened = version_of(client, memory_id)
    update_memory(db, memory_id, {"outcome_score": 0.2, "use_count": 1}, actor="test")
    post(client, f"/memories/{memory_id}/edit", {"confidence": "0.6", "version": opened})
    assert get_memory(db, memory_id).confidence == 0.6


def test_an_edit_without_the_form_version_is_refused(client, db, cfg):
    memory_id = make(db, cfg, "Lint with ruff")
    body = post(client, f"/memories/{memory_id}/edit", {"confidence": "0.2"}, 400)
    assert "Reload the memory's page" in html_lib.unescape(body.get_data(as_text=True))
    assert get_memory(db, memory_id).confidence != 0.2


# --- 3. a corrupt store is a 503 with the library's message -----------------------------


def _corrupt_memories_table(db) -> None:
    """Overwrite the memories table's root page; the header and schema stay intact."""
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
    db.close()
    with open(db_path(), "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xa5" * page_size)


@pytest.mark.parametrize("path", ["/", "/memories", "/memories?q=widgets", "/review"])
def test_a_corrupt_store_gives_503_with_how_to_fix(client, db, cfg, path):
    for n in range(40):
        make(db, cfg, f"memory {n} about widgets " + "filler " * 40)
    _corrupt_memories_table(db)
    body = html_lib.unescape(page(client, path, 503))
    assert "is corrupt or not a memory-layer database" in body
    assert "restore a backup" in body


@pytest.mark.parametrize(
    "error",
    [
        sqlite3.IntegrityError("UNIQUE constraint failed: memories.id"),
        sqlite3.OperationalError("no such column: memories.nope"),  # a query bug, not the store
    ],
)
def test_a_query_bug_stays_a_server_error(error):
    app = create_app()
    app.config["PROPAGATE_EXCEPTIONS"] = False

    @app.get("/boom")
    def boom() -> str:
        raise error

    assert app.test_client().get("/boom", base_url=BASE).status_code == 500


# --- 4, 5, 6. query strings ------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/memories?page=99999999999999999999",
        "/memories?q=widgets&page=99999999999999999999",
        "/tasks?page=99999999999999999999",
        "/memories?page=0",
        "/memories?page=-3",
        "/tasks?page=0",
    ],
)
def test_bad_page_numbers_are_400(client, path):
    assert "page must be a whole number from 1 to" in page(client, path, 400)


@pytest.fixture
def thirty(db, cfg):
    for n in range(30):
        make(db, cfg, f"memory number {n} about widget {n * 7}", project=PROJECT)


@pytest.mark.parametrize("extra", ["endpoint=x", "_anchor=zz", "_external=1", "_scheme=ftp"])
def test_unknown_parameters_never_reach_the_pager(client, thirty, extra):
    # Refused outright (issue 14: a misspelt filter must not be silently ignored), so
    # they cannot reach url_for either; the known ones still page.
    refused = html_lib.unescape(page(client, f"/memories?page=2&{extra}&project={PROJECT}", 400))
    assert f"Unknown parameter '{extra.split('=')[0]}'" in refused
    html = page(client, f"/memories?page=2&project={PROJECT}")
    links = re.findall(r'rel="(?:prev|next)" href="([^"]+)"', html)
    assert links
    for link in links:
        link = html_lib.unescape(link)
        assert link.startswith("/memories?") and "#" not in link
        assert "project=github.com" in link


@pytest.mark.parametrize("value", ["5", "-1.5", "nan", "inf", "-inf", "abc"])
@pytest.mark.parametrize("name", ["min_outcome", "max_outcome"])
def test_outcome_filter_out_of_range_is_400(client, name, value):
    assert "must be a number from -1 to 1" in page(client, f"/memories?{name}={value}", 400)
    assert "must be a number from -1 to 1" in page(client, f"/memories?q=x&{name}={value}", 400)


# --- 7. honest messages -----------------------------------------------------------------


def test_retiring_a_retired_memory_says_nothing_changed(client, db, cfg):
    memory_id = make(db, cfg, "Old advice")
    forget(db, memory_id, actor="cli", reason="outdated")
    body = post(client, f"/memories/{memory_id}/retire", {"reason": "again"}, 400)
    assert "already retired; nothing changed" in body.get_data(as_text=True)
    assert [op.action for op in history(db, memory_id)].count("retire") == 1


def test_a_tag_edit_that_changes_nothing_says_so(client, db, cfg):
    memory_id = make(db, cfg, "Tagged memory", tags=["ci"])
    response = post_edit(client, memory_id, {"tags": "ci, ci ,"})
    assert "Nothing changed." in flashed(client, response)
    assert edits(db, memory_id) == []


@pytest.mark.parametrize(
    ("decision", "field"), [("reject", "Reason field"), ("revise", "Corrected text field")]
)
def test_review_errors_name_the_form_field(client, db, cfg, decision, field):
    memory_id = make(db, cfg, "Proposed fact", source="mcp:cursor", status="pending")
    body = post(
        client, f"/review/{memory_id}", {"decision": decision, "revised_text": " "}, 400
    ).get_data(as_text=True)
    assert field in body and "--" not in body.split('id="error-message">')[1].split("<")[0]
    assert get_memory(db, memory_id).status == "pending"


# --- the detail page explains the number the list shows ---------------------------------


def test_detail_explains_the_filtered_lists_score(client, db, cfg):
    make(db, cfg, "database database database tests in the api", project=PROJECT)
    make(db, cfg, "database tests for the web app and its database", project="github.com/acme/web")
    target = make(db, cfg, "tests hit a database", project="github.com/acme/web")
    html = page(client, "/memories?q=database+tests&project=github.com/acme/web")
    row = re.search(
        r'<td class="num">([0-9.]+)</td><td class="num match">[0-9.]+</td>\s*'
        r'<td class="text"><a class="memory-link" href="([^"]+)"',
        html[html.index(f'data-id="{target}"') :],
    )
    listed, link = row.group(1), html_lib.unescape(row.group(2))
    assert "project=github.com" in link
    detail = page(client, link)
    assert re.search(r'id="explain-score">([0-9.]+)<', detail).group(1) == listed
    assert 'id="explain-scope"' in detail


def test_outcome_histogram_counts_only_judged_memories(client, db, cfg):
    """Audit: every never-judged memory (score 0.0) landed in the "+0.0 to +0.2" bar."""
    from memory_layer.outcomes import memory_feedback
    from memory_layer.storage.records import judged_outcome_scores

    judged = make(db, cfg, "Run the migrations before the tests")
    for n in range(3):
        make(db, cfg, f"unjudged note {n}")
    memory_feedback(db, judged, True, actor="me", source="cli")
    assert judged_outcome_scores(db) == [pytest.approx(0.2)]
    assert "judged by a task (1; the others have none yet)" in page(client, "/")
