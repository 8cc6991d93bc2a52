"""`memory-layer team ...` and `memory-layer share`: team memory on a team server
(PostgreSQL + pgvector), with the local store staying the fast default."""

from __future__ import annotations

import ipaddress
from typing import Any

import click

from memory_layer.cli import cli
from memory_layer.cli.common import echo_json, json_option

DEFAULT_PORT = 8787
REQUESTS_PER_MINUTE = 600  # the team server's default (memory_layer.team_http)
DB_ENV = "MEMORY_LAYER_TEAM_DB"


@cli.group()
def team() -> None:
    """Share reviewed memory with a team through a team server.

    \b
    On the server (PostgreSQL 16+ with pgvector):
        memory-layer team server init --db postgresql://... --org acme --admin ana
        memory-layer team serve --db postgresql://...
    On each device:
        memory-layer team login https://team.example --token mlt_...
        memory-layer share 3f2a9c1b            # propose a local memory to the team
        memory-layer team review list          # reviewers: the team inbox
        memory-layer team sync                 # push what waits, pull approved memories
        memory-layer team status
    """


@team.group()
def server() -> None:
    """Set up the team server's database.

    \b
    Example:
        memory-layer team server init --db postgresql://memory@localhost/memory_layer
    """


@server.command("init")
@click.option("--db", "db_url", envvar=DB_ENV, required=True, help=f"PostgreSQL URL (or ${DB_ENV}).")
@click.option("--org", default="team", show_default=True, help="The organisation's name.")
@click.option("--admin", default="admin", show_default=True, help="The first admin's name.")
@click.option("--solo", is_flag=True,
              help="A one-person team: allow approving your own proposals.")
@json_option
def server_init(db_url: str, org: str, admin: str, solo: bool, as_json: bool) -> None:
    """Apply the team database's migrations (CREATE EXTENSION vector included).

    On a new database this also creates the organisation, its first admin and that
    admin's token, printed once. Running it again applies new migrations only.

    \b
    Example:
        memory-layer team server init --db postgresql://memory@localhost/ml --org acme --admin ana
    """
    from memory_layer.api import team_init_server

    result = team_init_server(db_url, org=org, admin=admin, solo=solo)
    if as_json:
        echo_json(result)
        return
    click.echo(f"Migrations applied now: {', '.join(result['applied']) or 'none (current)'}.")
    if result["token"]:
        click.echo(f"Organisation {org!r} with admin {admin!r}. The admin's token (shown once):")
        click.echo(result["token"])


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@team.command()
@click.option("--db", "db_url", envvar=DB_ENV, required=True, help=f"PostgreSQL URL (or ${DB_ENV}).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), help="TLS certificate.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), help="TLS private key.")
@click.option("--behind-tls-proxy", is_flag=True,
              help="Bind a public address without TLS here: a proxy in front terminates TLS.")
@click.option("--rate-limit", type=click.IntRange(1, 100_000), default=REQUESTS_PER_MINUTE,
              show_default=True, help="Requests per minute per token, per server copy.")
def serve(db_url: str, host: str, port: int, tls_cert: str | None, tls_key: str | None,
          behind_tls_proxy: bool, rate_limit: int) -> None:
    """Serve the team API and its remote MCP endpoint (/mcp, streamable HTTP).

    Stateless: run several copies on one database behind a load balancer.

    Binds loopback unless told otherwise; a public address needs TLS here
    (--tls-cert/--tls-key) or --behind-tls-proxy, since bearer tokens travel in every
    request.

    \b
    Examples:
        memory-layer team serve --db postgresql://memory@localhost/ml
        memory-layer team serve --db ... --host 0.0.0.0 --tls-cert c.pem --tls-key k.pem
    """
    import uvicorn

    from memory_layer.team_http import asgi

    if bool(tls_cert) != bool(tls_key):
        raise click.UsageError("Give both --tls-cert and --tls-key, or neither.")
    if not _loopback(host) and not tls_cert and not behind_tls_proxy:
        raise click.UsageError(
            f"{host} is not a loopback address, and tokens would cross the network in clear "
            "text. Add --tls-cert/--tls-key, or --behind-tls-proxy if a proxy terminates TLS."
        )
    if not _loopback(host) and behind_tls_proxy:
        click.echo(f"WARNING: serving plain HTTP on {host}:{port}; only a TLS-terminating "
                   "proxy may reach this port.", err=True)
    app = asgi(db_url, host=host, per_minute=rate_limit)
    scheme = "https" if tls_cert else "http"
    click.echo(f"Team server on {scheme}://{host}:{port} (remote MCP: /mcp)", err=True)
    # Access lines name method and path only; tokens travel in a header, never logged.
    uvicorn.run(app, host=host, port=port, ssl_certfile=tls_cert, ssl_keyfile=tls_key,
                log_level="warning", access_log=False)


@team.command()
@click.argument("url")
@click.option("--token", required=True, help="Your token (mlt_...), from an invite.")
@json_option
def login(url: str, token: str, as_json: bool) -> None:
    """Log this device in to a team server (the token is kept in team.json, mode 0600).

    \b
    Example:
        memory-layer team login https://team.example --token mlt_...
    """
    from memory_layer.api import team_login

    who = team_login(url, token)
    if as_json:
        echo_json(who)
        return
    roles = ", ".join(f"{p['project']} ({p['role']})" for p in who["projects"]) or "none yet"
    click.echo(f"Logged in as {who['user']}. Projects: {roles}.")


def others_refused_note(result: dict[str, Any]) -> None:
    """Say, on stderr, that older queued items went with this push and were refused."""
    others = result.get("others_refused") or []
    if others:
        click.echo(f"{len(others)} earlier queued change(s) were refused by the team server; "
                   "`memory-layer team status` lists them.", err=True)


def _sync_line(result: dict[str, Any]) -> str:
    pushed = result["pushed"]
    line = f"Sent {pushed['sent']}, pulled {result.get('pulled', 0)}"
    if pushed["refused"]:
        line += f", {len(pushed['refused'])} refused by the server"
    if result.get("offline"):
        line += f"; the team server is unreachable, {pushed['waiting']} waiting to be sent"
    return line + "."


@team.command()
@click.option("--quiet", is_flag=True, help="Print nothing unless something failed.")
@json_option
def sync(quiet: bool, as_json: bool) -> None:
    """Send what waits in the outbox, then pull approved team memories and withdrawals.

    \b
    Example:
        memory-layer team sync
    """
    from memory_layer.api import team_sync

    result = team_sync()
    if as_json:
        echo_json(result)
    elif not quiet or result.get("offline") or result["pushed"]["refused"]:
        click.echo(_sync_line(result))
        for item in result["pushed"]["refused"]:
            click.echo(f"  {item['memory_id']}: {item['error']}")
    if result.get("offline"):
        raise SystemExit(1)


@team.command()
@json_option
def status(as_json: bool) -> None:
    """Show the server, each project's cursor, the outbox, the last error and the lag.

    \b
    Example:
        memory-layer team status
    """
    from memory_layer.api import team_status

    data = team_status()
    if as_json:
        echo_json(data)
        return
    if not data["logged_in"]:
        click.echo("Not logged in to a team server (`memory-layer team login URL --token ...`).")
        return
    click.echo(f"Server: {data['server']}\nTeam memories here: {data['team_memories']}")
    click.echo(f"Last sync: {data['last_sync_at'] or 'never'}")
    for project, seq in sorted(data["cursors"].items()):
        behind = data["lag"].get(project, 0)
        click.echo(f"  {project}: pulled up to #{seq}" + (f", {behind} behind" if behind else ""))
    click.echo(f"Outbox: {data['outbox']} waiting")
    for item in data["waiting"]:
        click.echo(f"  {item['kind']} {item['memory_id']} (tries: {item['attempts']})")
    if data["last_error"]:
        click.echo(f"Last error: {data['last_error']}")
    for item in data["refused"]:
        click.echo(f"Refused: {item['memory_id']}: {item['answer']['refused']}")


@cli.command()
@click.argument("memory_id")
@click.option("--reason", help="Why the team should hold this (shown to reviewers).")
@json_option
def share(memory_id: str, reason: str | None, as_json: bool) -> None:
    """Propose a local project memory to your team; a reviewer there accepts it.

    Queued locally first: offline, it waits and goes with the next `team sync`.

    \b
    Example:
        memory-layer share 3f2a9c1b --reason "bit us twice in CI"
    """
    from memory_layer.api import team_share

    result = team_share(memory_id, reason=reason)
    if as_json:
        echo_json(result)
        return
    if result["refused"]:
        raise click.ClickException(f"The team server refused it: {result['refused'][0]['error']}")
    if result["offline"]:
        click.echo(f"Queued {result['memory_id']}: the team server is unreachable; "
                   "`memory-layer team sync` sends it later.")
    else:
        click.echo(f"Shared {result['memory_id']}: waiting for a reviewer on the team.")
    others_refused_note(result)


@team.command()
@click.argument("memory_id")
@click.argument("text")
@click.option("--reason", help="Why (shown to reviewers).")
@json_option
def propose(memory_id: str, text: str, reason: str | None, as_json: bool) -> None:
    """Propose a new text for a team memory (against the revision this device holds).

    \b
    Example:
        memory-layer team propose tm3f2a9c1b "Run the tests with: make test-all"
    """
    from memory_layer.api import team_propose_change

    result = team_propose_change(memory_id, text, reason=reason)
    if as_json:
        echo_json(result)
        return
    if result["refused"]:
        raise click.ClickException(f"The team server refused it: {result['refused'][0]['error']}")
    click.echo(f"Proposed a change to {result['memory_id']}"
               + (" (queued: server unreachable)." if result["offline"] else "."))
    others_refused_note(result)
