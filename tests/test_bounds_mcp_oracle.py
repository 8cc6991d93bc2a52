"""Issue 14 point 5: no MCP tool is an oracle for a withheld record. Through a real MCP
client session: every tool answers a withheld record exactly as it answers an id that
matches nothing, and never with one of its fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import ClientSession

from memory_layer import api
from memory_layer.config import load_config
from memory_layer.project import project_for
from memory_layer.storage.db import open_db
from memory_layer.trust.facts import write
from tests.test_mcp_server import run

SECRET_TEXT = "The vault password is in /etc/vault/ops-pass.txt on bastion-2"
UNKNOWN = "feedfacefeedface"


def _store(user_home: Path, tmp_path: Path) -> tuple[dict[str, str], Path]:
    user_home.mkdir(parents=True, exist_ok=True)
    (user_home / "config.yaml").write_text("embedding:\n  enabled: false\n")
    workdir = tmp_path / "project"
    workdir.mkdir()
    cfg = load_config()
    db = open_db()
    project = project_for(workdir)
    retired = write(
        db, SECRET_TEXT, config=cfg, source="cli", project=project, subject="vault", key="pw"
    ).memory
    api.forget(db, retired.id, actor="cli", reason="rotated")
    sinking = write(
        db, "bastion-2 runs debian 9", config=cfg, source="cli", project=project,
        subject="bastion-2", key="os",
    ).memory
    db.execute("UPDATE memories SET outcome_score = -0.9 WHERE id = ?", [sinking.id])
    pending = write(db, "Ops keys live in ~/ops/keys.gpg", config=cfg, source="mcp:other").memory
    db.close()
    return {"retired": retired.id, "sinking": sinking.id, "pending": pending.id}, workdir


def _text(result: Any, memory_id: str) -> str:
    assert result.is_error, result.content
    # The SDK prefixes "Error executing tool NAME: "; what follows is ours.
    return result.content[0].text.split(": ", 1)[1].replace(memory_id, "ID")


def test_every_tool_refuses_a_withheld_record_like_an_unknown_id(
    user_home: Path, tmp_path: Path
) -> None:
    ids, workdir = _store(user_home, tmp_path)

    async def steps(s: ClientSession) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for name, memory_id in {**ids, "unknown": UNKNOWN}.items():
            calls = {
                "read": ("read", {"memory_id": memory_id}),
                "propose_right_guess": ("propose", {"memory_id": memory_id, "text": SECRET_TEXT}),
                "propose_wrong_guess": ("propose", {"memory_id": memory_id, "text": "a guess x1"}),
                "dispute": ("dispute", {"memory_id": memory_id, "reason": "looks wrong"}),
                "report": ("report_outcome", {"memory_id": memory_id, "worked": False}),
            }
            out[name] = {
                call: _text(await s.call_tool(tool, args), memory_id)
                for call, (tool, args) in calls.items()
            }
        return out

    out = run(workdir, steps)
    for name in ("retired", "sinking", "pending"):
        assert out[name] == out["unknown"], name
    answers = set(out["unknown"].values())
    assert len(answers) == 1  # one wording, whatever the tool and the guess
    (answer,) = answers
    assert "No memory with id 'ID' is available to agents" in answer
    for word in ("vault", "pw", "retired", "already says", "sinking", "pending"):
        assert word not in answer
    db = open_db()
    # Nothing was queued or changed by the refused calls.
    assert db.execute("SELECT count(*) FROM proposals").fetchone()[0] == 0
    statuses = dict(db.execute("SELECT id, status FROM memories").fetchall())
    assert statuses == {ids["retired"]: "retired", ids["sinking"]: "active", ids["pending"]: "pending"}


def test_check_and_propose_do_not_confirm_withheld_texts_or_facts(
    user_home: Path, tmp_path: Path
) -> None:
    ids, workdir = _store(user_home, tmp_path)

    async def steps(s: ClientSession) -> dict[str, Any]:
        async def call(tool: str, args: dict[str, Any]) -> Any:
            result = await s.call_tool(tool, args)
            assert not result.is_error, result.content
            return json.loads(result.content[0].text)

        return {
            "check_pending": await call("check", {"text": "Ops keys live in ~/ops/keys.gpg"}),
            "check_fact": await call(
                "check", {"text": "bastion-2 runs rhel 9", "subject": "bastion-2", "key": "os"}
            ),
            "propose_pending": await call("propose", {"text": "Ops keys live in ~/ops/keys.gpg"}),
            "propose_fresh": await call("propose", {"text": "Ops tokens rotate on Mondays 9:00"}),
        }

    out = run(workdir, steps)
    for key in ("check_pending", "check_fact"):
        dumped = json.dumps(out[key])
        assert ids["pending"] not in dumped and ids["sinking"] not in dumped
        assert "debian" not in dumped and "duplicate" not in dumped and "conflict" not in dumped
    same, fresh = out["propose_pending"], out["propose_fresh"]
    # The repeat of a pending text is answered with the very fields of a fresh proposal.
    assert same.keys() == fresh.keys()
    assert {k: v for k, v in same.items() if k not in {"memory_id", "item_id"}} == {
        k: v for k, v in fresh.items() if k not in {"memory_id", "item_id"}
    }
    assert same["kind"] == "new" and same["status"] == "pending"
