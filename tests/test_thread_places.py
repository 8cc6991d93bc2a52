"""Review findings on conversation threads (issue 11): a place belongs to its project,
agents' proposals never learn what holds a place, a reply is listed after the turn it
answers, and a place is parsed once at the door."""

from __future__ import annotations

import copy
import json
import sqlite3

import pytest
from click.testing import CliRunner

from memory_layer.api import forget, remember
from memory_layer.cli import cli
from memory_layer.errors import InvalidInput
from memory_layer.requests import Place, RememberRequest
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.db import open_db
from memory_layer.storage.migrations import MIGRATIONS, migration_set
from memory_layer.storage.operations import history
from memory_layer.storage.records import get_memory
from memory_layer.transfer import import_records, read_lines
from tests.test_mcp_server import payload, run

SECRET = "Ops: the break-glass password hint is the name of the office cat"


def _lines(records) -> list[bytes]:
    return [json.dumps(r).encode() + b"\n" for r in records]


# --- A place belongs to its project (m101) --------------------------------------------


def test_the_same_place_in_two_projects_is_two_turns(db, cfg):
    a = remember(db, "Ana: hello there", config=cfg, project="A", place=Place("chat-7", 0))
    b = remember(db, "Ana: hello there", config=cfg, project="B", place=Place("chat-7", 0))
    assert b.outcome == "new" and b.created
    assert b.memory.id != a.memory.id and b.memory.project == "B"
    assert get_memory(db, b.memory.id).extra["position"] == 0
    # Other text at A's place, in B's thread, is B's own turn.
    c = remember(db, "Ben: hi Ana", config=cfg, project="B", place=Place("chat-7", 1))
    assert c.created and c.memory.project == "B"


def test_numbering_continues_the_thread_of_the_same_project_only(db, cfg):
    remember(db, "Ana: one", config=cfg, project="A", place=Place("chat-7"))
    remember(db, "Ana: two", config=cfg, project="A", place=Place("chat-7"))
    first_in_b = remember(db, "Ben: first in B", config=cfg, project="B", place=Place("chat-7"))
    global_turn = remember(db, "Cy: a global chat", config=cfg, place=Place("chat-7"))
    assert first_in_b.memory.extra["position"] == 0
    assert global_turn.memory.extra["position"] == 0


def test_a_turn_never_lends_to_the_same_place_of_another_project(db, cfg, keyword_only):
    question = "How often do you go to the pottery studio?"
    remember(db, "Ben: How often do you go to the pottery studio?", config=cfg, project="A",
             place=Place("chat", 0))
    other = remember(db, "Ana: I moved to Lisbon.", config=cfg, project="B",
                     place=Place("chat", 1)).memory
    found = recall(db, question, scope=Scope(projects=None), config=cfg, limit=10)
    assert other.id not in [item.memory.id for item in found]


def test_the_same_turn_again_says_nothing_changed_not_reinforced(user_home, tmp_path):
    (user_home).mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n")
    runner = CliRunner()
    args = ["remember", "Ana: hi", "-p", "A", "--thread", "t", "--position", "0", "--json"]
    first = runner.invoke(cli, args)
    again = runner.invoke(cli, args)
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    made, repeated = json.loads(first.stdout), json.loads(again.stdout)
    assert repeated["id"] == made["id"] and repeated["outcome"] == "duplicate"
    assert repeated["use_count"] == made["use_count"]  # nothing reinforced
    assert "Reinforced" not in again.stderr and "nothing added" in again.stderr
    in_b = runner.invoke(cli, [*args[:3], "B", *args[4:]])
    stored = json.loads(in_b.stdout)
    assert in_b.exit_code == 0 and stored["project"] == "B" and stored["outcome"] == "new"


def test_a_retired_or_pending_turn_at_the_place_is_named_with_what_to_do(db, cfg):
    turn = remember(db, "Ana: hi", config=cfg, project="A", place=Place("t", 0)).memory
    forget(db, turn.id, actor="cli", reason="test")
    with pytest.raises(InvalidInput, match=f"holds memory {turn.id} \\(retired\\).*restore"):
        remember(db, "Ana: hi", config=cfg, project="A", place=Place("t", 0))
    with pytest.raises(InvalidInput, match=f"already holds memory {turn.id} \\(retired\\)"):
        remember(db, "Ana: other words", config=cfg, project="A", place=Place("t", 0))
    assert get_memory(db, turn.id).status == "retired"


def test_import_of_another_projects_log_with_the_same_thread_ids(db):
    log = [{"text": f"Ana: turn {i}", "thread": "session-1", "project": "A"} for i in range(3)]
    assert import_records(db, read_lines(_lines(log), 100_000)).imported == 3
    same_ids = [{**line, "project": "B"} for line in log]
    report = import_records(db, read_lines(_lines(same_ids), 100_000))
    assert (report.imported, report.skipped) == (3, 0)
    rows = db.execute(
        "SELECT project, position FROM memories WHERE thread = 'session-1' ORDER BY project, "
        "position"
    ).fetchall()
    assert rows == [("A", 0), ("A", 1), ("A", 2), ("B", 0), ("B", 1), ("B", 2)]
    # B's log with its places, again: every turn is in its place already.
    placed = [{**line, "position": i} for i, line in enumerate(same_ids)]
    assert import_records(db, read_lines(_lines(placed), 100_000)).skipped == 3


def _store_at(tmp_path, last: str) -> sqlite3.Connection:
    from sqlite_utils import Database

    names = [name for name, _ in MIGRATIONS]
    conn = sqlite3.connect(tmp_path / "old.db")
    conn.isolation_level = None
    migration_set().apply(Database(conn), stop_before=names[names.index(last) + 1 :][:1])
    return conn


def test_upgrade_from_m100_keeps_the_turns_and_keys_places_by_project(tmp_path, cfg):
    names = [name for name, _ in MIGRATIONS]
    assert names.index("m101_thread_places_per_project") > names.index(
        "m100_memory_thread_position"
    )
    conn = _store_at(tmp_path, "m100_memory_thread_position")
    for i, (project, thread, position) in enumerate([("A", "chat", 0), ("A", "chat", 1),
                                                     (None, "other", 0)]):
        conn.execute(
            "INSERT INTO memories(id, text, category, project, tags, source, confidence, "
            "created_at, updated_at, thread, position) VALUES (?, ?, 'context', ?, '[]', "
            "'cli', 0.8, '2026-11-01T00:00:00+00:00', '2026-11-01T00:00:00+00:00', ?, ?)",
            [f"m{i}", f"Ana: turn {i}", project, thread, position],
        )
    conn.close()
    upgraded = open_db(tmp_path / "old.db")
    applied = [r[0] for r in upgraded.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == names
    indexes = {r[1]: r[2] for r in upgraded.execute("PRAGMA index_list(memories)")}
    assert indexes["idx_memories_thread_place"] == 1 and "idx_memories_thread_position" not in indexes
    kept = [(m.project, m.extra["thread"], m.extra["position"])
            for m in map(lambda i: get_memory(upgraded, f"m{i}"), range(3))]
    assert kept == [("A", "chat", 0), ("A", "chat", 1), (None, "other", 0)]
    in_b = remember(upgraded, "Ana: turn 0", config=cfg, project="B", place=Place("chat", 0))
    assert in_b.created and in_b.memory.project == "B"
    with pytest.raises(sqlite3.IntegrityError):  # still one turn per place of a project
        upgraded.execute(
            "INSERT INTO memories(id, text, category, project, tags, source, confidence, "
            "created_at, updated_at, thread, position) VALUES ('dup', 'x', 'context', NULL, "
            "'[]', 'cli', 0.8, '2026-11-01T00:00:00+00:00', '2026-11-01T00:00:00+00:00', "
            "'other', 0)"
        )
    plan = " ".join(
        str(r[3]) for r in upgraded.execute(
            "EXPLAIN QUERY PLAN SELECT max(position) FROM memories "
            "WHERE coalesce(project, '') = 'A' AND thread = 'chat'"
        )
    )
    assert "idx_memories_thread_place" in plan
    successor = " ".join(
        str(r[3]) for r in upgraded.execute(
            "EXPLAIN QUERY PLAN WITH wanted(project, thread, position) AS (VALUES ('A', 'chat', "
            "1)) SELECT memories.rowid FROM wanted JOIN memories ON coalesce(memories.project, "
            "'') = wanted.project AND memories.thread = wanted.thread AND memories.position = "
            "wanted.position"
        )
    )
    assert "USING INDEX idx_memories_thread_place" in successor  # recall's next-turn join


# --- Agents never learn what holds a place --------------------------------------------


def test_a_proposal_at_a_taken_place_reveals_nothing_and_is_queued(user_home, tmp_path):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n")
    from memory_layer.config import load_config

    db, cfg = open_db(), load_config()
    workdir = tmp_path / "project"
    workdir.mkdir()
    project = str(workdir.resolve())
    secret = remember(db, SECRET, config=cfg, project=project, place=Place("ops", 3)).memory
    forget(db, secret.id, actor="cli", reason="withheld")
    waiting = remember(db, "Ops: rotate the keys on Fridays", config=cfg, project=project,
                       source="mcp:other-agent", place=Place("ops", 4)).memory
    assert waiting.status == "pending"

    async def steps(s):
        asks = [
            {"text": SECRET, "thread": "ops", "position": 3},
            {"text": "Ops: a guess at what is there", "thread": "ops", "position": 3},
            {"text": "Ops: rotate the keys on Fridays", "thread": "ops", "position": 4},
            {"text": "Ops: a free place", "thread": "ops", "position": 9},
        ]
        return [await s.call_tool("propose", ask) for ask in asks]

    answers = run(workdir, steps)
    db = open_db()
    shape = None
    for result in answers:
        assert not result.is_error, result.content[0].text
        text = result.content[0].text
        assert secret.id not in text and waiting.id not in text
        assert "retired" not in text and "cat" not in text
        answer = payload(result)
        assert answer["status"] == "pending" and answer["kind"] == "new" and answer["created"]
        shape = shape or sorted(answer)
        assert sorted(answer) == shape  # the same answer whatever holds the place
        queued = get_memory(db, answer["memory_id"])
        assert queued.status == "pending" and queued.extra["thread"] == "ops"
    positions = [get_memory(db, payload(r)["memory_id"]).extra["position"] for r in answers]
    assert positions == [5, 6, 7, 9]  # a taken place queues after the thread's last turn
    note = [op.context.get("reason") for op in history(db, payload(answers[0])["memory_id"])]
    assert any("proposed for position 3 of thread 'ops'" in (n or "") for n in note)
    assert get_memory(db, secret.id).status == "retired"
    assert get_memory(db, secret.id).text == SECRET


# --- A reply is listed after the turn it answers ----------------------------------------


@pytest.mark.parametrize("share", [0.7, 0.95])
def test_a_boosted_reply_is_listed_after_its_question(db, cfg, keyword_only, share):
    question = remember(db, "Ben: How often do you go to the pottery studio?", config=cfg,
                        project="p", place=Place("t")).memory
    reply = remember(db, "Ana: Three times a week, usually in the evening.", config=cfg,
                     project="p", place=Place("t"), category="decision",
                     confidence=1.0).memory
    for i in range(30):
        remember(db, f"Filler {i}: pottery glaze notes and studio schedule item {i}",
                 config=cfg, project="p")
    tuned = copy.deepcopy(cfg)
    tuned["retrieval"]["thread_share"] = share
    query = "pottery" if share == 0.7 else "How often does Ana go to the pottery studio?"
    found = recall(db, query, scope=Scope.for_project("p"), config=tuned, limit=40)
    order = [item.memory.id for item in found]
    lent = {item.memory.id: item for item in found}[reply.id].explain["thread"]
    assert lent["follows"] == question.id
    assert order.index(reply.id) == order.index(question.id) + 1


def test_after_predecessors_keeps_chains_in_order_and_moves_nothing_else():
    from memory_layer.models import memory_from_row
    from memory_layer.retrieval.scoring import Scored
    from memory_layer.retrieval.threads import after_predecessors

    def item(memory_id: str, follows: str | None = None) -> Scored:
        memory = memory_from_row({
            "id": memory_id, "text": memory_id, "category": "general", "project": None,
            "source": "cli", "confidence": 0.8, "outcome_score": 0.0, "success_count": 0,
            "failure_count": 0, "use_count": 0, "last_used_at": None, "status": "active",
            "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00",
        })
        explain = {"thread": {"follows": follows}} if follows else {}
        return Scored(memory, 0.0, {"similarity": 0.0}, explain)

    ranked = [item("c", "b"), item("x"), item("b", "a"), item("a"), item("y", "gone")]
    assert [s.memory.id for s in after_predecessors(ranked)] == ["x", "a", "b", "c", "y"]


# --- A place is parsed once, at the door --------------------------------------------------


def test_a_blank_thread_is_refused_at_every_door(user_home, tmp_path):
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n")
    from memory_layer.cli.fast import fast

    result = CliRunner().invoke(cli, ["remember", "Ana: hi", "--thread", "   "])
    assert result.exit_code == 1 and "thread id is blank" in result.stderr
    assert fast(["remember", "Ana: hi", "--thread", "  "]).code == 1
    with pytest.raises(InvalidInput, match="thread id is blank"):
        RememberRequest.from_wire({"text": "x", "category": "general", "source": "cli",
                                   "thread": " "})
    line = json.dumps({"text": "Ana: hi", "thread": "\t"}).encode() + b"\n"
    with pytest.raises(Exception, match="thread id is blank"):
        read_lines([line], 100_000)

    async def steps(s):
        return await s.call_tool("propose", {"text": "Ana: hi there", "thread": "  "})

    answer = run(tmp_path, steps)
    assert answer.is_error and "thread id is blank" in answer.content[0].text
    assert open_db().execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_the_engine_wire_carries_the_parsed_place():
    request = RememberRequest(text="Ana: hi", place=Place(" chat-7 ", 2))
    assert request.place == Place("chat-7", 2)
    wire = request.to_wire()
    assert (wire["thread"], wire["position"]) == ("chat-7", 2) and "place" not in wire
    assert RememberRequest.from_wire(wire) == request
    plain = RememberRequest(text="Ana: hi")
    assert RememberRequest.from_wire(plain.to_wire()).place is None
