"""`memory-layer team join`: a member of the organisation asks to join a project, its
admins approve (with the role they grant) or deny, and the device pulls the project
once in. Real PostgreSQL, the real `team serve` process and real CLI processes."""

from __future__ import annotations

from pathlib import Path

from tests.team_support import TeamServer, cli, pg_server, pg_url  # noqa: F401
from tests.test_team_server import PROJECT, js, local_rows, login, remember, team  # noqa: F401

SECRET = "github.com/acme/secret"
SECRET_NEW = "github.com/acme/billing"


def accepted_memory(srv: TeamServer, author: Path, reviewer: Path, text: str) -> None:
    cli(author, "share", remember(author, text))
    item = next(i for i in js(cli(reviewer, "team", "review", "list", "--json"))
                if i["text"] == text)
    cli(reviewer, "team", "review", "accept", item["id"])


def test_a_member_asks_an_admin_approves_and_the_device_pulls_the_project(
    tmp_path: Path, team  # noqa: F811
) -> None:
    srv, ana, tokens, _admin = team
    eve_token = js(cli(ana, "team", "invite", "eve", "--project", SECRET, "--role",
                       "contributor", "--json"))["token"]
    eve = login(tmp_path, srv, "eve", eve_token)
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    accepted_memory(srv, cy, bo, "Rebuild the shop's search index with: make reindex")

    asked = js(cli(eve, "team", "join", PROJECT, "--reason", "I am moving to the shop team",
                   "--json"))
    assert asked["status"] == "open" and asked["made"] and asked["role"] == "contributor"
    again = cli(eve, "team", "join", PROJECT)
    assert "Still waiting" in again.stdout and asked["id"] in again.stdout
    # Not in before an admin says so: nothing of the shop reaches eve's device.
    cli(eve, "team", "sync")
    assert local_rows(eve) == []
    # A contributor of the shop cannot decide; nobody decides a request they cannot see.
    assert js(cli(cy, "team", "join-requests", "list", "--json"))["waiting"] == []
    no = cli(cy, "team", "join-requests", "approve", asked["id"], check=False)
    assert no.returncode == 1 and "cannot admin" in no.stderr
    own = cli(eve, "team", "join-requests", "approve", asked["id"], check=False)
    assert own.returncode == 1 and "No join request" in own.stderr
    # An agent token never joins anything.
    agent = js(cli(eve, "team", "token", "create", "--scopes", "read,propose", "--kind",
                   "agent", "--json"))["token"]
    code, body = srv.call("POST", "/v1/joins", agent, {"project": PROJECT})
    assert code == 403 and "agent" in body["error"].lower()
    code, body = srv.call("POST", "/v1/joins", eve_token, {"project": PROJECT, "role": "admin"})
    assert code == 400 and "admin" in body["error"]

    waiting = js(cli(ana, "team", "join-requests", "list", "--json"))["waiting"]
    assert [(w["user"], w["project"], w["role"], w["reason"]) for w in waiting] == [
        ("eve", PROJECT, "contributor", "I am moving to the shop team")]
    approved = cli(ana, "team", "join-requests", "approve", asked["id"], "--role", "reader")
    assert "eve is now a reader of github.com/acme/shop" in approved.stdout
    cli(eve, "team", "sync")
    assert [row[1] for row in local_rows(eve)] == ["Rebuild the shop's search index with: make reindex"]
    # The role granted holds: a reader cannot propose to the shop.
    mine = remember(eve, "Readers cannot share this")
    assert "cannot propose" in cli(eve, "share", mine, check=False).stderr
    # Asking for more is a new request; a denial comes back with its reason.
    promote = js(cli(eve, "team", "join", PROJECT, "--role", "contributor", "--json"))
    assert promote["status"] == "open" and promote["current_role"] == "reader"
    cli(ana, "team", "join-requests", "deny", promote["id"], "--reason", "after the freeze")
    listing = cli(eve, "team", "join-requests", "list")
    assert "denied (after the freeze)" in listing.stdout and "approved as reader" in listing.stdout
    decided = cli(ana, "team", "join-requests", "approve", promote["id"], check=False)
    assert decided.returncode == 1 and "already decided (denied)" in decided.stderr
    # Joining a project you are already in pulls it on this device (a second laptop).
    second = js(cli(eve, "team", "token", "create", "--scopes", "read,dispute", "--json"))
    laptop = login(tmp_path, srv, "eve-laptop", second["token"])
    here = cli(laptop, "team", "join", PROJECT)
    assert "Already a reader of github.com/acme/shop" in here.stdout
    assert len(local_rows(laptop)) == 1


def test_unknown_projects_org_admins_and_narrow_tokens(tmp_path: Path, team) -> None:  # noqa: F811
    srv, ana, tokens, _admin = team
    di = login(tmp_path, srv, "di", tokens["di"])  # a reader: token scopes read, dispute
    cli(ana, "team", "join", SECRET_NEW)  # the org admin opens a second project
    unknown = cli(di, "team", "join", "github.com/acme/nope", check=False)
    assert unknown.returncode == 1 and "No project 'github.com/acme/nope'" in unknown.stderr
    # An org admin joins at once, even a project the server does not hold yet.
    joined = js(cli(ana, "team", "join", "github.com/acme/new", "--json"))
    assert joined["status"] == "member" and joined["role"] == "admin" and joined["changed"]
    assert joined["sync"]["offline"] is False  # and this device pulled at once
    # Granted more than the token allows: the answer says which actions it cannot take.
    asked = js(cli(di, "team", "join", "github.com/acme/new", "--json"))
    cli(ana, "team", "join-requests", "approve", asked["id"], "--role", "contributor")
    member = cli(di, "team", "join", "github.com/acme/new")
    assert "Already a contributor" in member.stdout and "cannot outcome, propose" in member.stdout
    me = srv.call("GET", "/v1/me", tokens["di"])[1]
    assert {"project": "github.com/acme/new", "role": "contributor"} in me["projects"]
    # An invite answers an open request: it leaves the admins' list as approved.
    waiting = js(cli(di, "team", "join", SECRET_NEW, "--json"))
    cli(ana, "team", "invite", "di", "--project", SECRET_NEW, "--role", "reader")
    assert js(cli(ana, "team", "join-requests", "list", "--json"))["waiting"] == []
    mine = {r["id"]: r for r in js(cli(di, "team", "join-requests", "list", "--json"))["mine"]}
    assert mine[waiting["id"]]["status"] == "approved"
    assert mine[waiting["id"]]["granted_role"] == "reader"
