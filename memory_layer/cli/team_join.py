"""`memory-layer team join` and `team join-requests`: joining a project of your
organisation, and its admins' answers."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import click

from memory_layer.cli.common import current_project, echo_json, json_option
from memory_layer.cli.team import team

_ASKABLE = click.Choice(["reader", "contributor", "reviewer"])
_GRANTABLE = click.Choice(["reader", "contributor", "reviewer", "admin"])


def _call(method: str, path: str, body: dict | None = None) -> Any:
    from memory_layer.api import team_call

    return team_call(method, path, body)


def _token_note(answer: dict[str, Any], role: str) -> str:
    from memory_layer.api import team_role_actions

    missing = sorted(set(team_role_actions(role)) - set(answer.get("token_allows") or []))
    if not missing:
        return ""
    return (f" This device's token cannot {', '.join(missing)} (its scopes are narrower than "
            "the role); ask an admin for a token with them.")


@team.command()
@click.argument("project", required=False)
@click.option("--role", type=_ASKABLE, help="The role to ask for (default: contributor; "
              "a member asking for a higher one asks to be promoted).")
@click.option("--reason", help="Why (the project's admins see it).")
@json_option
def join(project: str | None, role: str | None, reason: str | None, as_json: bool) -> None:
    """Join a project of your organisation (default: this repository's).

    A member already: this device pulls the project now. Otherwise the project's
    admins get a join request (`team join-requests`); once approved, your next
    `team sync` (or the next session start) pulls its memories. Asking again shows
    where your request stands; an org admin joins at once.

    \b
    Examples:
        memory-layer team join
        memory-layer team join github.com/acme/shop --role reviewer --reason "I own CI"
    """
    from memory_layer.api import team_join

    answer = team_join(current_project(project), role=role, reason=reason)
    if as_json:
        echo_json(answer)
        return
    if answer["status"] == "member":
        pulled = answer["sync"].get("pulled", 0)
        verb = "Joined" if answer["changed"] else "Already"
        click.echo(f"{verb} a {answer['role']} of {answer['project']}; pulled {pulled} "
                   "team log entries to this device." + _token_note(answer, answer["role"]))
        if answer["sync"].get("offline"):
            click.echo(f"The pull failed: {answer['sync'].get('error')}", err=True)
        return
    fresh = "Asked" if answer["made"] else "Still waiting: asked"
    click.echo(f"{fresh} to join {answer['project']} as {answer['role']} (request "
               f"{answer['id']}). An admin of the project approves it with `memory-layer "
               f"team join-requests approve {answer['id']}`; your next `team sync` then "
               "pulls its memories." + _token_note(answer, answer["role"]))


@team.group("join-requests")
def join_requests() -> None:
    """Requests to join your projects (admins), and your own requests.

    \b
    Examples:
        memory-layer team join-requests list
        memory-layer team join-requests approve jr1a2b3c4d --role reader
        memory-layer team join-requests deny jr1a2b3c4d --reason "contractors read only"
    """


@join_requests.command("list")
@json_option
def requests_list(as_json: bool) -> None:
    """List join requests waiting for you (as a project admin) and your own.

    \b
    Example:
        memory-layer team join-requests list --json
    """
    data = _call("GET", "/v1/joins")
    if as_json:
        echo_json(data)
        return
    if data["waiting"]:
        click.echo("Waiting for your decision:")
    elif data["can_decide"]:
        click.echo("No join requests wait for your decision.")
    for item in data["waiting"]:
        now = f", now {item['current_role']}" if item["current_role"] else ""
        click.echo(f"  {item['id']}  {item['user']} asks to be a {item['role']} of "
                   f"{item['project']}{now}" + (f": {item['reason']}" if item["reason"] else ""))
    if data["mine"]:
        click.echo("Your requests:")
    for item in data["mine"]:
        answer = {"open": "waiting", "approved": f"approved as {item['granted_role']}",
                  "denied": "denied"}[item["status"]]
        why = f" ({item['decision_reason']})" if item["decision_reason"] else ""
        click.echo(f"  {item['id']}  {item['project']} as {item['role']}: {answer}{why}")


@join_requests.command("approve")
@click.argument("request_id")
@click.option("--role", type=_GRANTABLE, help="Grant this role instead of the one asked for.")
@click.option("--reason", help="Kept with the decision.")
@json_option
def requests_approve(request_id: str, role: str | None, reason: str | None,
                     as_json: bool) -> None:
    """Approve a join request: the person becomes a member with the role granted.

    \b
    Example:
        memory-layer team join-requests approve jr1a2b3c4d --role reader
    """
    result = _call("POST", f"/v1/joins/{quote(request_id, safe='')}/approve",
                   {"role": role, "reason": reason})
    if as_json:
        echo_json(result)
        return
    click.echo(f"{result['user']} is now a {result['role']} of {result['project']}; their "
               "next sync pulls its memories.")


@join_requests.command("deny")
@click.argument("request_id")
@click.option("--reason", required=True, help="Why (the person sees it).")
@json_option
def requests_deny(request_id: str, reason: str, as_json: bool) -> None:
    """Deny a join request, with a reason.

    \b
    Example:
        memory-layer team join-requests deny jr1a2b3c4d --reason "ask your lead first"
    """
    result = _call("POST", f"/v1/joins/{quote(request_id, safe='')}/deny", {"reason": reason})
    if as_json:
        echo_json(result)
        return
    click.echo(f"Denied {result['user']}'s request to join {result['project']}.")
