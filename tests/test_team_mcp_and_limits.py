"""The team server's remote MCP endpoint through a real MCP client session, and the
server's own guards: loopback by default, body size, per-token rate limit, tokens
never logged."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.team_support import TeamServer, cli, pg_server, pg_url  # noqa: F401
from tests.test_team_server import PROJECT, device, js, login, remember, team  # noqa: F401


async def _mcp(url: str, token: str | None, steps):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        async with streamable_http_client(url + "/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await steps(session)


def test_an_agent_over_remote_mcp_searches_proposes_and_cannot_approve(
    tmp_path: Path, team  # noqa: F811
) -> None:
    srv, ana, tokens, _admin = team
    bo = login(tmp_path, srv, "bo", tokens["bo"])
    cy = login(tmp_path, srv, "cy", tokens["cy"])
    cli(cy, "share", remember(cy, "Regenerate the API client with: make openapi-client"))
    cli(bo, "team", "review", "accept", js(cli(bo, "team", "review", "list", "--json"))[0]["id"])
    agent = js(cli(cy, "team", "token", "create", "--scopes", "read,propose", "--kind", "agent",
                   "--json"))["token"]

    async def steps(s):
        names = sorted(t.name for t in (await s.list_tools()).tools)
        found = await s.call_tool("search", {"query": "regenerate api client",
                                             "project": PROJECT})
        proposed = await s.call_tool("propose", {
            "project": PROJECT, "text": "The openapi client needs Java 17", "category": "gotcha"})
        memory_id = json.loads(found.content[0].text)[0]["id"]
        outcome = await s.call_tool("report_outcome", {"memory_id": memory_id, "worked": True})
        return names, found, proposed, outcome

    names, found, proposed, outcome = asyncio.run(_mcp(srv.url, agent, steps))
    assert names == ["dispute", "propose", "report_outcome", "search"]  # nothing approves
    assert "make openapi-client" in json.loads(found.content[0].text)[0]["text"]
    assert json.loads(proposed.content[0].text)["status"] == "open"
    # The token has no outcome scope: refused, with the reason.
    assert outcome.is_error and "no 'outcome' scope" in outcome.content[0].text
    # The agent's proposal waits for a person; it is not on any device yet.
    inbox = js(cli(bo, "team", "review", "list", "--json"))
    assert [i["text"] for i in inbox] == ["The openapi client needs Java 17"]
    cli(cy, "team", "sync")
    rows = js(cli(cy, "list", "--json", "--project", PROJECT))
    assert not any("Java 17" in r["text"] for r in rows)

    async def anonymous(s):
        return await s.call_tool("search", {"query": "client", "project": PROJECT})

    result = asyncio.run(_mcp(srv.url, None, anonymous))
    assert result.is_error and "bearer token is required" in result.content[0].text


def test_public_bind_needs_tls_and_bodies_and_rates_are_bounded(
    tmp_path: Path, pg_url: str  # noqa: F811
) -> None:
    home = device(tmp_path, "server")
    token = js(cli(home, "team", "server", "init", "--db", pg_url, "--json"))["token"]
    public = cli(home, "team", "serve", "--db", pg_url, "--host", "0.0.0.0", check=False)
    assert public.returncode == 2 and "--tls-cert" in public.stderr
    srv = TeamServer(home, pg_url, "--rate-limit", "5").start()
    try:
        big = {"client_key": "k" * 12, "project": PROJECT, "text": "x" * 300_000,
               "category": "gotcha"}
        assert srv.call("POST", "/v1/proposals", token, big)[0] == 413
        codes = [srv.call("GET", "/v1/me", token)[0] for _ in range(8)]
        assert codes[:4] == [200] * 4 and codes[-1] == 429
    finally:
        srv.kill()
        log = srv.log.read_text(errors="replace")
    assert token not in log and token[:12] not in log


@pytest.mark.parametrize("scopes", ["read,review", "admin"])
def test_agent_tokens_never_review_or_administer(scopes: str) -> None:
    from memory_layer.errors import InvalidInput
    from memory_layer.team.access import AGENT, parse_scopes

    with pytest.raises(InvalidInput, match="Agent and CI tokens"):
        parse_scopes(scopes, AGENT)


def test_tokens_never_escalate_and_an_invite_never_hands_out_someone_elses_login(
    tmp_path: Path, team  # noqa: F811
) -> None:
    srv, ana, tokens, admin = team
    # A project admin inviting the org admin's name gets no token for that account.
    boss = js(cli(ana, "team", "invite", "pat", "--project", PROJECT, "--role", "admin",
                  "--json"))["token"]
    code, body = srv.call("POST", "/v1/invites", boss,
                          {"name": "ana", "project": PROJECT, "role": "reader"})
    assert code == 403 and "organisation admin" in body["error"]
    code, body = srv.call("POST", "/v1/invites", boss,
                          {"name": "cy", "project": PROJECT, "role": "reviewer"})
    assert code == 201 and body["token"] is None and body["existing"] is True
    # A project-limited token mints only project-limited tokens; an agent only agents.
    limited = srv.call("POST", "/v1/tokens", tokens["bo"], {
        "scopes": "read,propose", "project": PROJECT, "expires": "1h"})[1]
    child = srv.call("POST", "/v1/tokens", limited["token"],
                     {"scopes": "read", "expires": "365d"})[1]
    code, me = srv.call("GET", "/v1/me", child["token"])
    assert code == 200 and [p["project"] for p in me["projects"]] == [PROJECT]
    agent = srv.call("POST", "/v1/tokens", tokens["bo"], {
        "scopes": "read,propose", "kind": "agent", "expires": "1h"})[1]["token"]
    code, body = srv.call("POST", "/v1/tokens", agent, {"scopes": "read", "kind": "person"})
    assert code == 403 and "agent tokens" in body["error"]
    # Revoked means refused from then on.
    assert srv.call("DELETE", f"/v1/tokens/{limited['id']}", tokens["bo"])[0] == 200
    assert srv.call("GET", "/v1/me", limited["token"])[0] == 401
    # Out-of-range numbers are a clear 400, not a "retry later".
    code, body = srv.call("POST", "/v1/pull", tokens["bo"], {"cursors": {PROJECT: 2**70}})
    assert code == 400 and "whole number" in body["error"]


def test_a_token_is_marked_used_at_most_once_a_minute(tmp_path: Path, team, pg_url: str) -> None:  # noqa: F811
    import psycopg

    srv, ana, tokens, _admin = team
    device_token = js(cli(ana, "team", "token", "create", "--scopes", "read", "--device",
                          "ci-runner", "--json"))

    def marks() -> tuple:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            return conn.execute(
                "SELECT t.last_used_at, d.last_seen_at FROM tokens t JOIN devices d "
                "ON d.id = t.device_id WHERE t.id = %s", [device_token["id"]]).fetchone()

    assert marks() == (None, None)
    assert srv.call("GET", "/v1/me", device_token["token"])[0] == 200
    first = marks()
    assert first[0] is not None and first[1] is not None
    for _ in range(5):
        assert srv.call("GET", "/v1/me", device_token["token"])[0] == 200
    assert marks() == first  # read, not rewritten, within the minute
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE tokens SET last_used_at = now() - interval '2 minutes' "
                     "WHERE id = %s", [device_token["id"]])
    assert srv.call("GET", "/v1/me", device_token["token"])[0] == 200
    later = marks()
    assert later[0] > first[0] and later[1] > first[1]
    # A revoked token is refused at once, whatever the mark.
    cli(ana, "team", "token", "revoke", str(device_token["id"]))
    assert srv.call("GET", "/v1/me", device_token["token"])[0] == 401
