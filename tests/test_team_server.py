"""Team memory end to end: a real PostgreSQL with pgvector, the real `team serve`
process, and real CLI and hook processes for several devices and people, each with its
own MEMORY_LAYER_HOME."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.team_support import TeamServer, cli, pg_server, pg_url  # noqa: F401
from tests.test_hooks_support import KEYWORD_ONLY, Claude, make_project, write_config

PROJECT = "github.com/acme/shop"


def device(tmp_path: Path, name: str) -> Path:
    home = tmp_path / name / "ml-home"
    home.mkdir(parents=True)
    write_config(home, KEYWORD_ONLY)
    return home


def js(proc: subprocess.CompletedProcess[str]) -> object:
    return json.loads(proc.stdout)


@pytest.fixture
def team(tmp_path: Path, pg_url: str):  # noqa: F811
    """A team server with admin ana, reviewer bo and contributor cy in PROJECT."""
    server_home = device(tmp_path, "server")
    init = js(cli(server_home, "team", "server", "init", "--db", pg_url, "--org", "acme",
                  "--admin", "ana", "--json"))
    assert init["applied"] == ["t001_identity", "t002_shared_memories_and_log",
                               "t003_join_requests"]
    srv = TeamServer(server_home, pg_url).start()
    ana = device(tmp_path, "ana")
    cli(ana, "team", "login", srv.url, "--token", init["token"])
    tokens = {}
    for name, role in (("bo", "reviewer"), ("cy", "contributor"), ("di", "reader")):
        tokens[name] = js(cli(ana, "team", "invite", name, "--project", PROJECT, "--role", role,
                              "--json"))["token"]
    yield srv, ana, tokens, init["token"]
    srv.kill()


def login(tmp_path: Path, srv: TeamServer, name: str, token: str) -> Path:
    home = device(tmp_path, name)
    cli(home, "team", "login", srv.url, "--token", token)
    return home


def remember(home: Path, text: str, *extra: str) -> str:
    out = js(cli(home, "remember", text, "--project", PROJECT, "--category", "command",
                 "--json", *extra))
    return out["id"]


def local_rows(home: Path) -> list[tuple]:
    conn = sqlite3.connect(str(home / "memories.db"))
    try:
        return conn.execute(
            "SELECT id, text, status, team_revision FROM memories WHERE team_server IS NOT NULL "
            "ORDER BY id").fetchall()
    finally:
        conn.close()


def test_share_review_pull_and_inject_on_every_device_then_withdraw(tmp_path: Path, team) -> None:
    srv, _ana, tokens, _admin = team
    cy1 = login(tmp_path, srv, "cy-laptop", tokens["cy"])
    # cy's second device gets its own token, made from the first one.
    second = js(cli(cy1, "team", "token", "create", "--scopes", "read,propose,outcome,dispute",
                    "--device", "desktop", "--json"))["token"]
    cy2 = login(tmp_path, srv, "cy-desktop", second)
    bo = login(tmp_path, srv, "bo", tokens["bo"])

    local = remember(cy1, "Run the shop's tests with: make test-all WORKERS=4")
    shared = js(cli(cy1, "share", local, "--reason", "CI uses this", "--json"))
    assert shared["sent"] == 1 and not shared["offline"]
    # Not on anyone's device before a reviewer accepts it.
    cli(cy2, "team", "sync")
    assert local_rows(cy2) == []

    inbox = js(cli(bo, "team", "review", "list", "--json"))
    assert [i["text"] for i in inbox] == ["Run the shop's tests with: make test-all WORKERS=4"]
    accepted = js(cli(bo, "team", "review", "accept", inbox[0]["id"], "--json"))
    team_id = accepted["memory_id"]

    for home in (cy1, cy2, bo):
        cli(home, "team", "sync")
        assert local_rows(home) == [(team_id, inbox[0]["text"], "active", 1)]
    # Injected on the second device by the real prompt hook, from the local store.
    claude = Claude(cy2, make_project(tmp_path / "shop"))
    context = claude.context("UserPromptSubmit", prompt="how do I run the shop tests?")
    assert "make test-all WORKERS=4" in context
    # Read-only here: a local forget is refused with the commands that change it.
    refused = cli(cy2, "forget", team_id, check=False)
    assert refused.returncode != 0 and "team propose" in refused.stderr

    js(cli(bo, "team", "withdraw", team_id, "--json"))
    for home in (cy1, cy2):
        cli(home, "team", "sync")
        assert local_rows(home) == [(team_id, inbox[0]["text"], "retired", 2)]
    assert "make test-all" not in claude.context("UserPromptSubmit",
                                                 prompt="how do I run the shop tests?")
    status = js(cli(cy2, "team", "status", "--json"))
    assert status["outbox"] == 0 and status["cursors"][PROJECT] >= 2 and not status["last_error"]


def test_nobody_approves_their_own_and_roles_and_scopes_hold(tmp_path: Path, team) -> None:
    srv, ana, tokens, _admin = team
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    di = login(tmp_path, srv, "di", tokens["di"])
    own = remember(bo, "Deploys go through the release train, never by hand")
    cli(bo, "share", own)
    item = js(cli(bo, "team", "review", "list", "--json"))[0]
    refused = cli(bo, "team", "review", "accept", item["id"], check=False)
    assert refused.returncode == 1 and "own proposal" in refused.stderr
    # A contributor cannot review; a reader cannot propose.
    contributor = cli(cy, "team", "review", "accept", item["id"], check=False)
    assert contributor.returncode == 1 and "cannot review" in contributor.stderr
    denied = srv.call("POST", f"/v1/proposals/{item['id']}/accept", tokens["cy"], {})
    assert denied[0] == 403 and "contributor" in denied[1]["error"]
    mine = remember(di, "Readers cannot share")
    assert "cannot propose" in cli(di, "share", mine, check=False).stderr
    # An agent token can never hold review, even when made by a reviewer...
    no = cli(bo, "team", "token", "create", "--scopes", "read,review", "--kind", "agent",
             check=False)
    assert no.returncode == 1 and "Agent and CI tokens" in no.stderr
    agent = js(cli(bo, "team", "token", "create", "--scopes", "read", "--kind", "agent",
                   "--json"))["token"]
    # ...and a read-only agent token cannot propose or approve.
    code, body = srv.call("POST", "/v1/proposals", agent, {
        "client_key": "k" * 12, "project": PROJECT, "text": "agent text", "category": "gotcha"})
    assert code == 403 and "'propose' scope" in body["error"]
    assert srv.call("POST", f"/v1/proposals/{item['id']}/accept", agent, {})[0] == 403
    # ana (admin) may decide it.
    cli(ana, "team", "review", "accept", item["id"])
    # Unknown and malformed tokens are refused without detail.
    assert srv.call("GET", "/v1/me", "mlt_not-a-real-token")[0] == 401
    assert srv.call("GET", "/v1/me", "")[0] == 401


def test_a_member_of_one_project_cannot_read_another(tmp_path: Path, team) -> None:
    srv, ana, tokens, _admin = team
    other = js(cli(ana, "team", "invite", "eve", "--project", "github.com/acme/secret",
                   "--role", "reviewer", "--json"))["token"]
    eve = login(tmp_path, srv, "eve", other)
    secret = js(cli(eve, "remember", "The vault path is /srv/vault", "--project",
                    "github.com/acme/secret", "--json"))["id"]
    cli(eve, "share", secret)
    item = js(cli(eve, "team", "review", "list", "--json"))[0]
    js(cli(ana, "team", "review", "accept", item["id"], "--json"))
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    cli(cy, "team", "sync")
    assert local_rows(cy) == []
    assert "not a member" in cli(cy, "team", "search", "vault", "--project",
                                 "github.com/acme/secret", check=False).stderr
    memory_id = js(cli(eve, "team", "sync", "--json")) and local_rows(eve)[0][0]
    code, body = srv.call("POST", f"/v1/memories/{memory_id}/dispute", tokens["cy"],
                          {"reason": "probing", "client_key": "probe-123456"})
    assert code == 404 and "vault" not in json.dumps(body)


def test_stale_changes_and_rival_values_become_decisions_not_overwrites(
    tmp_path: Path, team
) -> None:
    srv, ana, tokens, _admin = team
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    first = remember(cy, "Python 3.11", "--subject", "ci-image", "--key", "python")
    cli(cy, "share", first)
    cli(bo, "team", "review", "accept", js(cli(bo, "team", "review", "list", "--json"))[0]["id"])
    cli(cy, "team", "sync")
    cli(bo, "team", "sync")
    team_id = local_rows(cy)[0][0]
    # Two changes made against revision 1; the first accepted makes the second stale.
    cli(cy, "team", "propose", team_id, "Python 3.12")
    code, body = srv.call("POST", "/v1/proposals", tokens["bo"], {
        "client_key": "change-two-1234", "project": PROJECT, "text": "Python 3.13",
        "category": "command", "memory_id": team_id, "base_revision": 1})
    assert code == 201
    items = {i["text"]: i for i in js(cli(bo, "team", "review", "list", "--json"))}
    js(cli(bo, "team", "review", "accept", items["Python 3.12"]["id"], "--json"))
    # The rival change made against revision 1 was marked stale by that accept.
    stale = cli(ana, "team", "review", "accept", items["Python 3.13"]["id"], check=False)
    assert stale.returncode == 1 and "already decided (stale)" in stale.stderr
    # A device with an old copy proposes against revision 1 after the fact: refused at
    # accept, and recorded as stale so it leaves the inbox instead of failing again.
    code, late = srv.call("POST", "/v1/proposals", tokens["bo"], {
        "client_key": "change-late-1234", "project": PROJECT, "text": "Python 3.9",
        "category": "command", "memory_id": team_id, "base_revision": 1})
    assert code == 201
    refused = cli(ana, "team", "review", "accept", late["id"], check=False)
    assert refused.returncode == 1 and "revision" in refused.stderr
    again = cli(ana, "team", "review", "accept", late["id"], check=False)
    assert "already decided (stale)" in again.stderr
    # A rival value for the same fact from another person: a conflict, not an overwrite.
    # bo holds the team's value locally: a rival value written there is a local
    # conflict, and sharing it says to propose a change instead.
    local_rival = remember(bo, "Python 3.10", "--subject", "ci-image", "--key", "python")
    assert "team propose" in cli(bo, "share", local_rival, check=False).stderr
    # ana has never pulled: her rival value goes up as a share, and meets the team's.
    rival = remember(ana, "Python 3.10", "--subject", "ci-image", "--key", "python")
    cli(ana, "share", rival)
    item = next(i for i in js(cli(bo, "team", "review", "list", "--json"))
                if i["text"] == "Python 3.10")
    assert item["conflicts_with"] == team_id
    conflict = cli(bo, "team", "review", "accept", item["id"], check=False)
    assert conflict.returncode == 1 and "supersede" in conflict.stderr
    cli(bo, "team", "review", "accept", item["id"], "--supersede")
    cli(cy, "team", "sync")
    assert local_rows(cy)[0][1:] == ("Python 3.10", "active", 3)


def test_offline_writes_queue_and_go_with_the_next_sync(
    tmp_path: Path, team, pg_url: str  # noqa: F811
) -> None:
    srv, _ana, tokens, _admin = team
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    ids = [remember(cy, f"Gotcha number {n}: the cache key includes the locale") for n in
           range(3)]
    srv.kill()
    for memory_id in ids:
        queued = js(cli(cy, "share", memory_id, "--json"))
        assert queued["offline"] and queued["waiting"] >= 1
    assert js(cli(cy, "team", "status", "--json"))["outbox"] == 3
    assert cli(cy, "team", "sync", check=False).returncode == 1
    srv2 = TeamServer(srv.home, pg_url)
    srv2.port, srv2.url = srv.port, srv.url
    srv2.start()
    try:
        cli(cy, "team", "sync")
        inbox = js(cli(bo, "team", "review", "list", "--json"))
        assert sorted(i["text"] for i in inbox) == sorted(
            f"Gotcha number {n}: the cache key includes the locale" for n in range(3))
        assert js(cli(cy, "team", "status", "--json"))["outbox"] == 0
    finally:
        srv2.kill()
    # Killed mid-push and mid-pull: tests/test_team_kill.py.


def cli_args(home: Path) -> list[str]:
    import sys

    return [sys.executable, "-m", "memory_layer"]


def cli_env(home: Path) -> dict[str, str]:
    import os

    return {**os.environ, "MEMORY_LAYER_HOME": str(home)}


def wait_for(check, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError("timed out waiting")


def test_session_start_pulls_in_the_background_and_a_dispute_hides_it_from_agents(
    tmp_path: Path, team
) -> None:
    srv, _ana, tokens, _admin = team
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    di = login(tmp_path, srv, "di", tokens["di"])
    cli(cy, "share", remember(cy, "Seed the dev database with: make seed-dev"))
    cli(bo, "team", "review", "accept", js(cli(bo, "team", "review", "list", "--json"))[0]["id"])
    # di's Claude Code session starts: the hook answers at once, the pull runs detached.
    claude = Claude(di, make_project(tmp_path / "shop"))
    claude.hook("SessionStart", source="startup")
    wait_for(lambda: len(local_rows(di)) == 1)
    team_id = local_rows(di)[0][0]
    assert "make seed-dev" in claude.context("UserPromptSubmit",
                                             prompt="how do I seed the dev database?")
    # A reader disputes it: hidden from every member's agents after their next pull.
    cli(di, "team", "dispute", team_id, "--reason", "the seed target was renamed")
    for home in (cy, di):
        cli(home, "team", "sync")
        assert local_rows(home)[0][2] == "disputed"
    assert "make seed-dev" not in claude.context("UserPromptSubmit",
                                                 prompt="how do I seed the dev database?")
    # A reviewer keeps it: shown again.
    cli(bo, "team", "resolve", team_id)
    cli(di, "team", "sync")
    assert local_rows(di)[0][2] == "active"


def test_one_member_cannot_sink_a_shared_memory_and_proven_needs_two_people(
    tmp_path: Path, team
) -> None:
    srv, _ana, tokens, _admin = team
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    cli(cy, "share", remember(cy, "Clear the asset cache with: bin/rails assets:clobber"))
    cli(bo, "team", "review", "accept", js(cli(bo, "team", "review", "list", "--json"))[0]["id"])
    for home in (bo, cy):
        cli(home, "team", "sync")
    team_id = local_rows(cy)[0][0]
    for _ in range(3):
        cli(cy, "outcome", "--memory", team_id, "--failed")
    cli(cy, "team", "sync")
    cli(cy, "team", "sync")  # the second pull brings the score op of the first push
    shown = js(cli(cy, "show", team_id, "--json"))
    assert shown["outcome_score"] == pytest.approx(-0.4)  # capped: not at the -0.5 floor
    code, body = srv.call("POST", "/v1/outcomes", tokens["bo"], {
        "client_key": "bo-worked-1", "memory_id": team_id, "worked": True})
    assert code == 200 and body["proven"] is False  # one person's success is not proof
    cli(bo, "outcome", "--memory", team_id, "--worked")
    cli(bo, "team", "sync")
    code, body = srv.call("POST", "/v1/outcomes", tokens["cy"], {
        "client_key": "cy-worked-1", "memory_id": team_id, "worked": True})
    assert body["recorded"] is True
    again = srv.call("POST", "/v1/outcomes", tokens["cy"], {
        "client_key": "cy-worked-1", "memory_id": team_id, "worked": True})[1]
    assert again["recorded"] is False  # the same event twice counts once
    _code, third = srv.call("POST", "/v1/outcomes", _admin, {
        "client_key": "ana-worked-1", "memory_id": team_id, "worked": True})
    assert third["proven"] is True  # successes from two people (bo and ana)


def test_concurrent_proposals_for_one_fact_become_candidates_side_by_side(
    tmp_path: Path, team
) -> None:
    import threading

    srv, _ana, tokens, admin = team
    answers: list[tuple] = []

    def propose(token: str, value: str) -> None:
        answers.append(srv.call("POST", "/v1/proposals", token, {
            "client_key": f"fact-{value}-123", "project": PROJECT, "text": value,
            "category": "environment", "subject": "staging-db", "fact_key": "port"}))

    threads = [threading.Thread(target=propose, args=(tokens[n], v))
               for n, v in (("cy", "5433"), ("bo", "5434"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(code for code, _ in answers) == [201, 201]
    code, inbox = srv.call("GET", "/v1/inbox", admin)
    items = {i["text"]: i for i in inbox["items"]}
    assert items["5433"]["rivals"] == [items["5434"]["id"]]
    assert items["5434"]["rivals"] == [items["5433"]["id"]]
    first = srv.call("POST", f"/v1/proposals/{items['5433']['id']}/accept", admin, {})
    assert first[0] == 200
    # The second is now a rival of what the team holds: an explicit choice, not a race.
    second = srv.call("POST", f"/v1/proposals/{items['5434']['id']}/accept", admin, {})
    assert second[0] == 409 and "supersede" in second[1]["error"]
