"""Conversation order (issue 11): memories that are turns of a thread, the reply's
inherited relevance in recall, the migration, import/export and the doors."""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_layer.api import remember
from memory_layer.cli import cli
from memory_layer.errors import ImportFailed, InvalidInput
from memory_layer.models import utcnow
from memory_layer.requests import Place
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.db import open_db
from memory_layer.storage.migrations import MIGRATIONS, migration_set
from memory_layer.storage.records import get_memory
from memory_layer.transfer import export_records, import_records, read_lines

CHAT = [
    "Ana: I started a pottery class last month.",
    "Ben: Nice! How often do you go to the pottery studio?",
    "Ana: Three times a week, usually in the evening.",
    "Ben: I should try that sometime.",
]
QUESTION = "How often does Ana go to the pottery studio?"
KEYWORD_ONLY = "embedding:\n  enabled: false\n"


def _chat(db, cfg, thread: str = "chat-1", project: str = "p") -> list[str]:
    return [
        remember(db, text, config=cfg, project=project, place=Place(thread)).memory.id
        for text in CHAT
    ]


def _by_id(results):
    return {item.memory.id: item for item in results}


def test_turns_take_the_next_position_and_repeat_words_freely(db, cfg):
    ids = _chat(db, cfg)
    assert [get_memory(db, i).extra["position"] for i in ids] == [0, 1, 2, 3]
    assert {get_memory(db, i).extra["thread"] for i in ids} == {"chat-1"}
    # "ok" twice is two turns, never a reinforced memory.
    first = remember(db, "Ben: ok", config=cfg, project="p", place=Place("chat-1"))
    second = remember(db, "Ben: ok", config=cfg, project="p", place=Place("chat-1"))
    assert first.created and second.created and first.memory.id != second.memory.id
    assert second.memory.extra["position"] == 5
    # The same text at the same place again (a retried write) changes nothing.
    again = remember(db, CHAT[2], config=cfg, project="p", place=Place("chat-1", 2))
    assert not again.created and again.memory.id == ids[2]


@pytest.mark.parametrize(
    ("thread", "position", "message"),
    [
        (None, 3, "A position needs a thread"),
        ("chat-1", -1, "from 0 to"),
        ("chat-1", "2", "whole number"),
        ("chat-1", True, "whole number"),
        ("x" * 201, None, "at most 200"),
        ("   ", None, "thread id is blank"),
        ("", 2, "thread id is blank"),
        ("chat\n1", None, "control characters"),
    ],
)
def test_bad_places_are_refused_with_how_to_fix(db, cfg, thread, position, message):
    with pytest.raises(InvalidInput, match=message):
        remember(db, "Ana: hi", config=cfg, place=Place.parse(thread, position))
    assert db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_another_text_at_a_taken_place_is_refused(db, cfg):
    ids = _chat(db, cfg)
    with pytest.raises(InvalidInput, match=f"already holds memory {ids[1]}"):
        remember(db, "Ben: something else", config=cfg, project="p", place=Place("chat-1", 1))


def test_the_reply_inherits_a_share_of_its_question_turns_similarity(db, cfg, keyword_only):
    ids = _chat(db, cfg)
    remember(db, "The pottery kiln needs 1200 degrees", config=cfg, project="p")
    found = _by_id(recall(db, QUESTION, scope=Scope.for_project("p"), config=cfg, limit=10))
    question, reply = found[ids[1]], found[ids[2]]
    lent = reply.explain["thread"]
    assert lent["follows"] == ids[1] and lent["share"] == 0.8
    assert reply.scores["similarity"] == pytest.approx(0.8 * question.scores["similarity"])
    assert lent["own_similarity"] < reply.scores["similarity"]
    # Bounded: the reply never outranks the turn it answers, and nothing inherits along
    # a chain (turn 3 follows the reply, not the question).
    order = list(found)
    assert order.index(ids[1]) < order.index(ids[2])
    assert ids[3] not in found or "thread" not in found[ids[3]].explain

    off = copy.deepcopy(cfg)
    off["retrieval"]["thread_share"] = 0.0
    plain = _by_id(recall(db, QUESTION, scope=Scope.for_project("p"), config=off, limit=10))
    assert ids[2] not in plain or plain[ids[2]].scores["similarity"] == lent["own_similarity"]
    assert all("thread" not in item.explain for item in plain.values())


def test_only_turns_that_can_place_a_reply_have_it_fetched(db, cfg, keyword_only, monkeypatch):
    """With the limit filled by strong matches, a weak turn's reply could not reach the
    results: it is not looked up (the hot path stays the same size)."""
    from memory_layer.retrieval import threads

    asked: list[tuple[str, str, int]] = []
    real = threads.successor_rowids

    def spy(conn, places):
        asked.extend(places)
        return real(conn, places)

    monkeypatch.setattr(threads, "successor_rowids", spy)
    ids = _chat(db, cfg)
    for n in range(3):
        remember(db, f"Log {n}: how often Ana goes to the pottery studio", config=cfg, project="p")
    for n in range(20):  # a store large enough for BM25's IDF to mean something
        remember(db, f"Garden note {n}: water the tomatoes at dawn", config=cfg, project="p")
    scope = Scope.for_project("p")
    query = QUESTION
    # Without exploration the reach is one relevance band below the limit-th similarity.
    calm = copy.deepcopy(cfg)
    calm["outcomes"]["explore"] = 0.0
    top = recall(db, query, scope=scope, config=calm, limit=3)
    assert ids[2] not in {item.memory.id for item in top}
    assert ("p", "chat-1", 1) not in asked
    # Exploration may put an untried reply first from further down: that far is fetched.
    recall(db, query, scope=scope, config=cfg, limit=3)
    assert ("p", "chat-1", 1) in asked
    asked.clear()
    wide = _by_id(recall(db, query, scope=scope, config=calm, limit=10))
    assert ("p", "chat-1", 1) in asked and "thread" in wide[ids[2]].explain


def test_memories_without_a_thread_rank_exactly_as_before(db, cfg):
    for text in CHAT:
        remember(db, text, config=cfg, project="p")
    off = copy.deepcopy(cfg)
    off["retrieval"]["thread_share"] = 0.0
    scope = Scope.for_project("p")
    now = utcnow()  # the same recency for both
    with_rule = recall(db, QUESTION, scope=scope, config=cfg, limit=10, now=now)
    without = recall(db, QUESTION, scope=scope, config=off, limit=10, now=now)
    assert [(i.memory.id, i.score) for i in with_rule] == [(i.memory.id, i.score) for i in without]
    assert all("thread" not in item.explain for item in with_rule)


def test_a_withheld_or_out_of_scope_turn_lends_and_gets_nothing(db, cfg, keyword_only):
    from memory_layer.api import forget

    ids = _chat(db, cfg)
    forget(db, ids[1], actor="cli", reason="test")
    found = _by_id(recall(db, QUESTION, scope=Scope.for_project("p"), config=cfg, limit=10))
    assert ids[1] not in found
    assert ids[2] not in found or "thread" not in found[ids[2]].explain
    # A successor in another project is never fetched into this project's results.
    remember(
        db,
        "Ben: How often do you go to the pottery studio now?",
        config=cfg,
        project="p",
        place=Place("mixed"),
    )
    other = remember(db, "Ana: Every Sunday.", config=cfg, project="q", place=Place("mixed"))
    found = _by_id(recall(db, QUESTION, scope=Scope.for_project("p"), config=cfg, limit=10))
    assert other.memory.id not in found


def test_upgrade_from_the_first_schema_adds_empty_places(tmp_path, cfg):
    from sqlite_utils import Database

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.isolation_level = None
    names = [name for name, _ in MIGRATIONS]
    assert "m100_memory_thread_position" in names
    migration_set().apply(Database(conn), stop_before=names[1:2])
    conn.execute(
        "INSERT INTO memories(id, text, category, project, tags, source, confidence, "
        "created_at, updated_at) VALUES ('old1', 'Legacy turn about pottery studios', "
        "'context', 'p', '[]', 'cli', 0.8, '2025-01-01T00:00:00+00:00', "
        "'2025-01-01T00:00:00+00:00')"
    )
    conn.close()
    upgraded = open_db(path)
    applied = [r[0] for r in upgraded.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == names
    memory = get_memory(upgraded, "old1")
    assert memory.extra["thread"] is None and memory.extra["position"] is None
    indexes = {r[1]: r[2] for r in upgraded.execute("PRAGMA index_list(memories)")}
    assert indexes["idx_memories_thread_place"] == 1  # unique, per project (m101)
    assert "idx_memories_thread_position" not in indexes
    hits = recall(upgraded, "pottery studio", scope=Scope.for_project("p"), config=cfg)
    assert [h.memory.id for h in hits] == ["old1"] and "thread" not in hits[0].explain
    turn = remember(upgraded, "Ana: pottery on Sundays", config=cfg, project="p", place=Place("t"))
    assert turn.memory.extra["position"] == 0


def _lines(records) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in records]


def test_export_and_import_keep_the_places(db, cfg, user_home, tmp_path, monkeypatch):
    ids = _chat(db, cfg)
    exported = list(export_records(db))
    assert [(r["thread"], r["position"]) for r in exported] == [("chat-1", i) for i in range(4)]
    monkeypatch.setenv("MEMORY_LAYER_HOME", str(tmp_path / "other"))
    other = open_db()
    report = import_records(other, read_lines(_lines(exported), 100_000))
    assert report.imported == 4
    for memory_id, position in zip(ids, range(4), strict=True):
        copied = get_memory(other, memory_id)
        assert (copied.extra["thread"], copied.extra["position"]) == ("chat-1", position)
    # The same log again: every turn is in its place already.
    assert import_records(other, read_lines(_lines(exported), 100_000)).skipped == 4


def test_a_chat_log_imports_in_order_and_bad_places_import_nothing(db):
    log = [{"text": text, "thread": "log-9", "project": "p"} for text in CHAT + ["Ben: ok"]]
    log.append({"text": "Ben: ok", "thread": "log-9", "project": "p"})
    report = import_records(db, read_lines(_lines(log), 100_000))
    assert report.imported == 6  # the repeated "Ben: ok" is a turn of its own
    rows = db.execute(
        "SELECT position, text FROM memories WHERE thread = 'log-9' ORDER BY position"
    ).fetchall()
    assert [r[0] for r in rows] == list(range(6)) and rows[2][1] == CHAT[2]
    taken = [{"text": "Ana: later", "thread": "log-9", "position": 1, "project": "p"}]
    with pytest.raises(ImportFailed, match='Line 1: position 1 of thread "log-9" already'):
        import_records(db, read_lines(_lines(taken), 100_000))
    twice = [
        {"text": "Ana: a", "thread": "log-10", "position": 0},
        {"text": "Ana: b", "thread": "log-10"},
        {"text": "Ana: c", "thread": "log-10", "position": 1},
    ]
    with pytest.raises(ImportFailed, match="Line 3: position 1 .* is taken by line 2"):
        import_records(db, read_lines(_lines(twice), 100_000))
    with pytest.raises(ImportFailed, match="Line 1: A position needs a thread"):
        read_lines(_lines([{"text": "x", "position": 2}]), 100_000)
    assert db.execute("SELECT count(*) FROM memories WHERE thread = 'log-10'").fetchone()[0] == 0


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMORY_LAYER_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "memory_layer", *args], capture_output=True, text=True, env=env
    )


def test_cli_round_trip_remember_with_places_then_recall_explains(user_home):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(KEYWORD_ONLY)
    ids = []
    for position, text in enumerate(CHAT):
        done = _cli(
            user_home,
            "remember",
            text,
            "-p",
            "p",
            "--thread",
            "chat-1",
            "--position",
            str(position),
            "--json",
        )
        assert done.returncode == 0, done.stderr
        record = json.loads(done.stdout)
        assert (record["thread"], record["position"]) == ("chat-1", position)
        ids.append(record["id"])
    shown = _cli(user_home, "recall", QUESTION, "-p", "p", "--explain")
    assert shown.returncode == 0, shown.stderr
    assert ids[2] in shown.stdout
    assert "reply in its thread: 0.80 (retrieval.thread_share) of the similarity" in shown.stdout
    assert f"the turn before it, {ids[1]}" in shown.stdout
    bad = _cli(user_home, "remember", "Ana: hi", "--position", "3")
    assert bad.returncode == 1 and "A position needs a thread" in bad.stderr
    clash = _cli(
        user_home, "remember", "Ana: other", "-p", "p", "--thread", "chat-1", "--position", "1"
    )
    assert clash.returncode == 1 and f"already holds memory {ids[1]}" in clash.stderr


def test_cli_import_reads_threads_from_stdin():
    log = "".join(json.dumps({"text": text, "thread": "t", "project": "p"}) + "\n" for text in CHAT)
    result = CliRunner().invoke(cli, ["import", "-", "--json"], input=log)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"imported": 4, "skipped": 0}


def test_mcp_propose_takes_a_place_and_refuses_it_on_a_change(user_home, tmp_path):
    from tests.test_mcp_server import payload, run

    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text(KEYWORD_ONLY)
    workdir = tmp_path / "project"
    workdir.mkdir()

    async def steps(s):
        made = payload(
            await s.call_tool(
                "propose", {"text": CHAT[2], "project": "p", "thread": "chat-1", "position": 2}
            )
        )
        change = await s.call_tool(
            "propose", {"text": "Ana: twice", "memory_id": made["memory_id"], "thread": "x"}
        )
        return made, change

    made, change = run(workdir, steps)
    assert made["status"] == "pending" and made["created"]
    memory = get_memory(open_db(), made["memory_id"])
    assert (memory.extra["thread"], memory.extra["position"]) == ("chat-1", 2)
    assert change.is_error and "leave out thread" in change.content[0].text


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_fetching_only_lending_turns_ranks_as_fetching_every_reply(
    db, cfg, keyword_only, monkeypatch, limit
):
    """Only turns that can lend their reply a place among the ``limit`` best have it
    fetched; exploration can put an untried memory first from up to EXPLORE_REACH (0.2)
    below a band's best, not only a relevance band (0.1) below (review finding)."""
    from memory_layer.retrieval import threads

    chat = [
        "Ana: I started a pottery class last month.",
        "Ben: How often does Ana go to the pottery studio?",
        "Three times a week, usually in the evening.",
        "Ben: I should try that sometime.",
    ]
    ids = [remember(db, t, config=cfg, project="p", place=Place("chat-1")).memory.id for t in chat]
    lead = remember(
        db,
        "Log of the club: how often Ana goes to the pottery studio these days",
        config=cfg,
        project="p",
    ).memory.id
    for n in range(20):
        remember(db, f"Garden note {n}: water the tomatoes at dawn", config=cfg, project="p")
    # The leader and the question turn were tried once each (1 of 2): the untried reply
    # is the rival exploration may put first.
    db.execute(
        "UPDATE memories SET success_count=1, failure_count=1 WHERE id IN (?,?)", (lead, ids[1])
    )
    db.commit()

    def top() -> list[str]:
        found = recall(db, CHAT_QUESTION, scope=Scope.for_project("p"), config=cfg, limit=limit)
        return [item.memory.id for item in found]

    cut = top()
    every = threads.add_successors
    monkeypatch.setattr(
        threads, "add_successors", lambda conn, mem, lenders: every(conn, mem, list(mem))
    )
    assert cut == top()


CHAT_QUESTION = "How often does Ana go to the pottery studio?"
