"""`memory-layer edit` of a team memory proposes the change to the team (outbox, base
revision); the local copy is unchanged until a reviewer accepts and a pull brings it.
Real PostgreSQL, the real `team serve` process and real CLI processes."""

from __future__ import annotations

from pathlib import Path

from tests.team_support import TeamServer, cli, pg_server, pg_url  # noqa: F401
from tests.test_team_server import js, local_rows, login, remember, team  # noqa: F401

TEXT = "Run the shop's linters with: make lint"


def test_editing_a_team_memory_queues_a_change_proposal_not_a_local_edit(
    tmp_path: Path, team, pg_url: str  # noqa: F811
) -> None:
    srv, _ana, tokens, _admin = team
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    cli(cy, "share", remember(cy, TEXT))
    cli(bo, "team", "review", "accept", js(cli(bo, "team", "review", "list", "--json"))[0]["id"])
    cli(cy, "team", "sync")
    team_id = local_rows(cy)[0][0]

    said = cli(cy, "edit", team_id, "--text", "Run the shop's linters with: make lint-all",
               "--reason", "lint was split")
    assert "proposed to the team against revision 1" in said.stdout
    assert "stays as it is until the change is accepted and pulled" in said.stdout
    assert local_rows(cy) == [(team_id, TEXT, "active", 1)]
    inbox = js(cli(bo, "team", "review", "list", "--json"))
    assert [(i["memory_id"], i["base_revision"], i["text"], i["reason"]) for i in inbox] == [
        (team_id, 1, "Run the shop's linters with: make lint-all", "lint was split")]
    # Tags and confidence have no team counterpart: refused, not silently dropped.
    tags = cli(cy, "edit", team_id, "--tag", "ci", check=False)
    assert tags.returncode == 1 and "only its text and category" in tags.stderr
    same = cli(cy, "edit", team_id, "--text", TEXT, check=False)
    assert same.returncode == 1 and "nothing to propose" in same.stderr

    # Offline: the edit waits in the outbox and goes with the next sync.
    srv.kill()
    queued = js(cli(cy, "edit", team_id, "--category", "gotcha", "--json"))
    assert queued["offline"] and queued["base_revision"] == 1
    assert "queued" in cli(cy, "edit", team_id, "--text", "make lint FIX=1").stdout
    assert js(cli(cy, "team", "status", "--json"))["outbox"] == 2
    assert local_rows(cy) == [(team_id, TEXT, "active", 1)]
    back = TeamServer(srv.home, pg_url)
    back.port, back.url = srv.port, srv.url
    back.start()
    try:
        cli(cy, "team", "sync")
        assert js(cli(cy, "team", "status", "--json"))["outbox"] == 0
        inbox = {i["text"]: i for i in js(cli(bo, "team", "review", "list", "--json"))}
        assert inbox[TEXT]["category"] == "gotcha" and "make lint FIX=1" in inbox
        # Accepted by a reviewer and pulled: now, and only now, the local copy changes.
        cli(bo, "team", "review", "accept",
            inbox["Run the shop's linters with: make lint-all"]["id"])
        cli(cy, "team", "sync")
        assert local_rows(cy) == [(team_id, "Run the shop's linters with: make lint-all",
                                   "active", 2)]
        # The two made against revision 1 are stale now: accepting one is refused.
        stale = cli(bo, "team", "review", "accept", inbox["make lint FIX=1"]["id"], check=False)
        assert stale.returncode == 1 and "stale" in stale.stderr
    finally:
        back.kill()
