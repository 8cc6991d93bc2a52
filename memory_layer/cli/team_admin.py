"""`memory-layer team review|withdraw|dispute|resolve|invite|token|search`: the
decisions and administration that go straight to the team server."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import click

from memory_layer.cli.common import current_project, echo_json, json_option, short
from memory_layer.cli.team import team


def _call(method: str, path: str, body: dict | None = None) -> object:
    from memory_layer.api import team_call

    return team_call(method, path, body)


@team.group()
def review() -> None:
    """The team inbox: accept or reject what members proposed.

    \b
    Examples:
        memory-layer team review list
        memory-layer team review accept tp1a2b3c4d
        memory-layer team review reject tp1a2b3c4d --reason "only true on macOS"
    """


@review.command("list")
@json_option
def review_list(as_json: bool) -> None:
    """List open team proposals in the projects you review.

    \b
    Example:
        memory-layer team review list --json
    """
    items = _call("GET", "/v1/inbox")["items"]  # type: ignore[index]
    if as_json:
        echo_json(items)
        return
    if not items:
        click.echo("The team inbox is empty.")
        return
    for item in items:
        kind = f"change to {item['memory_id']} (rev {item['base_revision']})" \
            if item["memory_id"] else "new"
        click.echo(f"{item['id']}  [{item['category']}] {kind}  {item['project']}")
        click.echo(f"    {short(item['text'])}")
        if item["conflicts_with"]:
            click.echo(f"    conflicts with team memory {item['conflicts_with']}")
        if item["rivals"]:
            click.echo(f"    rival proposals for the same fact: {', '.join(item['rivals'])}")
        if item["own"]:
            click.echo("    (yours: another reviewer decides)")


@review.command("accept")
@click.argument("proposal_id")
@click.option("--supersede", is_flag=True,
              help="Replace the team's current value of this fact with the proposed one.")
@click.option("--reason", help="Why (kept with the decision).")
@json_option
def review_accept(proposal_id: str, supersede: bool, reason: str | None, as_json: bool) -> None:
    """Accept a proposal: it becomes a team memory on every member's next sync.

    \b
    Example:
        memory-layer team review accept tp1a2b3c4d
    """
    result = _call("POST", f"/v1/proposals/{quote(proposal_id)}/accept",
                   {"supersede": supersede, "reason": reason})
    if as_json:
        echo_json(result)
        return
    click.echo(f"Accepted: team memory {result['memory_id']} at revision {result['revision']}.")  # type: ignore[index]


@review.command("reject")
@click.argument("proposal_id")
@click.option("--reason", required=True, help="Why (the author sees it).")
@json_option
def review_reject(proposal_id: str, reason: str, as_json: bool) -> None:
    """Reject a proposal, with a reason.

    \b
    Example:
        memory-layer team review reject tp1a2b3c4d --reason "we moved to uv"
    """
    result = _call("POST", f"/v1/proposals/{quote(proposal_id)}/reject", {"reason": reason})
    if as_json:
        echo_json(result)
        return
    click.echo(f"Rejected {proposal_id}.")


def _memory_verb(verb: str, memory_id: str, body: dict, as_json: bool, said: str) -> None:
    result = _call("POST", f"/v1/memories/{quote(memory_id)}/{verb}", body)
    if as_json:
        echo_json(result)
    else:
        click.echo(said)


@team.command()
@click.argument("memory_id")
@json_option
def withdraw(memory_id: str, as_json: bool) -> None:
    """Withdraw a team memory (reviewers): every device retires it on its next sync.

    \b
    Example:
        memory-layer team withdraw tm3f2a9c1b
    """
    _memory_verb("withdraw", memory_id, {}, as_json, f"Withdrew {memory_id} from the team.")


@team.command()
@click.argument("memory_id")
@click.option("--reason", required=True, help="What is wrong with it.")
@json_option
def dispute(memory_id: str, reason: str, as_json: bool) -> None:
    """Dispute a team memory: hidden from every member's agents until a reviewer decides.

    \b
    Example:
        memory-layer team dispute tm3f2a9c1b --reason "the flag was removed in v3"
    """
    from memory_layer.api import team_new_client_key

    body = {"reason": reason, "client_key": team_new_client_key()}
    _memory_verb("dispute", memory_id, body, as_json,
                 f"Disputed {memory_id}: withheld from agents until a reviewer decides.")


@team.command()
@click.argument("memory_id")
@json_option
def resolve(memory_id: str, as_json: bool) -> None:
    """Keep a disputed team memory (reviewers): agents see it again.

    \b
    Example:
        memory-layer team resolve tm3f2a9c1b
    """
    _memory_verb("resolve", memory_id, {}, as_json, f"Kept {memory_id}; the dispute is closed.")


@team.command()
@click.argument("name")
@click.option("--project", help="The project (normalised git remote); default: this one.")
@click.option("--role", type=click.Choice(["reader", "contributor", "reviewer", "admin"]),
              default="contributor", show_default=True)
@json_option
def invite(name: str, project: str | None, role: str, as_json: bool) -> None:
    """Add a member to a project (admins) and print their first token, once.

    \b
    Example:
        memory-layer team invite bo --role reviewer
    """
    result = _call("POST", "/v1/invites",
                   {"name": name, "project": current_project(project), "role": role})
    if as_json:
        echo_json(result)
        return
    if result["existing"]:  # type: ignore[index]
        click.echo(f"{name} already has an account: now a {role} of {result['project']}; "  # type: ignore[index]
                   "they keep using their own token.")
        return
    click.echo(f"{name} is a {role} of {result['project']}. Their token (shown once, "  # type: ignore[index]
               f"expires in {result['expires_in']}):")  # type: ignore[index]
    click.echo(result["token"])  # type: ignore[index]


@team.group()
def token() -> None:
    """Tokens for your devices, agents and CI.

    \b
    Example:
        memory-layer team token create --project github.com/acme/api --scopes read,propose --expires 30d --kind agent
    """


@token.command("create")
@click.option("--scopes", required=True, help="Comma-separated: read, propose, outcome, dispute, review, admin.")
@click.option("--expires", default="90d", show_default=True, help="e.g. 30d, 12h (at most 365d).")
@click.option("--project", help="Limit the token to one project.")
@click.option("--kind", type=click.Choice(["person", "agent"]), default="person", show_default=True,
              help="agent: for agents and CI; never reviews or administers.")
@click.option("--device", help="A device name, shown in the team's device list.")
@json_option
def token_create(scopes: str, expires: str, project: str | None, kind: str, device: str | None,
                 as_json: bool) -> None:
    """Create a token (printed once; only its hash is kept on the server).

    \b
    Example:
        memory-layer team token create --scopes read,propose,outcome --kind agent --expires 30d
    """
    result = _call("POST", "/v1/tokens", {"scopes": scopes, "expires": expires,
                                          "project": project, "kind": kind, "device": device})
    if as_json:
        echo_json(result)
        return
    click.echo(result["token"])  # type: ignore[index]


@token.command("revoke")
@click.argument("token_id", type=int)
@json_option
def token_revoke(token_id: int, as_json: bool) -> None:
    """Revoke one of your tokens by its id (printed by `team token create --json`).

    \b
    Example:
        memory-layer team token revoke 12
    """
    result = _call("DELETE", f"/v1/tokens/{token_id}")
    if as_json:
        echo_json(result)
        return
    click.echo(f"Revoked token {token_id}.")


@team.command()
@click.argument("query")
@click.option("--project", help="The project; default: this one.")
@click.option("--limit", type=click.IntRange(1, 50), default=8, show_default=True)
@json_option
def search(query: str, project: str | None, limit: int, as_json: bool) -> None:
    """Search the team server for one project (full-text and pgvector).

    Local recall already covers pulled team memories; this asks the server itself.

    \b
    Example:
        memory-layer team search "how do we run migrations"
    """
    args = urlencode({"project": current_project(project), "q": query, "limit": limit})
    results = _call("GET", "/v1/search?" + args)["results"]  # type: ignore[index]
    if as_json:
        echo_json(results)
        return
    if not results:
        click.echo("No matching team memories.")
    for item in results:
        click.echo(f"{item['id']}  [{item['category']}] {short(item['text'])}")
