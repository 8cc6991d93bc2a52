"""Scenes filter recall; the operations log can be replayed by a new client."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from memory_layer.cli import cli
from memory_layer.errors import InvalidInput
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import get_memory
from memory_layer.trust.facts import clean_scene, write


@pytest.fixture
def scened(db, cfg):
    ids = {}
    for scene, text in [
        ("deploy", "Deploy the api with fly deploy --strategy rolling"),
        ("server_ops", "Restart the api on the box with systemctl restart api"),
        ("coding", "The api handlers live in src/api/handlers"),
        (None, "The api listens on port 8080 everywhere"),
    ]:
        ids[scene] = write(db, text, config=cfg, source="cli", scene=scene).memory.id
    return ids


def found(db, cfg, scenes):
    scope = dataclasses.replace(Scope(projects=None), scenes=scenes)
    return {r.memory.id for r in recall(db, "api", scope=scope, config=cfg, limit=10)}


def test_scene_plus_global(db, cfg, scened):
    assert found(db, cfg, ("deploy",)) == {scened["deploy"], scened[None]}
    assert found(db, cfg, ("deploy", "server_ops")) == {
        scened["deploy"],
        scened["server_ops"],
        scened[None],
    }
    # No scene declared: everything, as before scenes existed.
    assert found(db, cfg, None) == set(scened.values())


def test_scene_filter_holds_in_keyword_only_mode(db, cfg, scened, keyword_only):
    assert found(db, cfg, ("coding",)) == {scened["coding"], scened[None]}


def test_cli_scene_options(db, scened):
    runner = CliRunner()
    out = runner.invoke(cli, ["recall", "api", "--all-projects", "--scene", "server-ops", "--json"])
    assert out.exit_code == 0, out.output
    assert {r["id"] for r in json.loads(out.output)} == {scened["server_ops"], scened[None]}
    made = runner.invoke(
        cli, ["remember", "Tail logs with fly logs -a api", "-g", "--scene", "Deploy", "--json"]
    )
    assert json.loads(made.output)["scene"] == "deploy"


def test_scene_names_are_checked():
    assert clean_scene(" Server Ops ") == "server_ops"
    assert clean_scene("") is None
    with pytest.raises(InvalidInput, match="letters"):
        clean_scene("deploy; drop table")


def test_log_since_after_id_and_replay(db, cfg):
    runner = CliRunner()
    first = write(db, "Use make lint before pushing", config=cfg, source="cli").memory
    out = runner.invoke(cli, ["log", "--json"])
    assert out.exit_code == 0, out.output
    ops = json.loads(out.output)
    assert [op["action"] for op in ops] == ["create", "verify"]
    assert all(op["memory_id"] == first.id for op in ops)
    last = ops[-1]["id"]

    from memory_layer.storage.records import update_memory

    update_memory(
        db, first.id, {"text": "Use make lint test before pushing"}, actor="alice", action="edit"
    )
    later = json.loads(runner.invoke(cli, ["log", "--after-id", str(last), "--json"]).output)
    assert [op["action"] for op in later] == ["edit"]
    assert later[0]["old_value"] == {"text": "Use make lint before pushing"}
    # Replaying the log's text changes rebuilds the current text.
    text = None
    for op in ops + later:
        text = (op["new_value"] or {}).get("text", text)
    assert text == get_memory(db, first.id).text

    assert json.loads(runner.invoke(cli, ["log", "--since", "1h", "--json"]).output)
    assert json.loads(runner.invoke(cli, ["log", "--since", "2999-01-01", "--json"]).output) == []
    bad = runner.invoke(cli, ["log", "--since", "yesterday-ish"])
    assert bad.exit_code != 0 and "30m" in bad.output
    plain = runner.invoke(cli, ["log", "-m", first.id[:6]])
    assert plain.exit_code == 0 and "edit" in plain.output
