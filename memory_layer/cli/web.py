"""serve: the dashboard (web/, installed as memory_layer.web)."""

from __future__ import annotations

import errno
import socket

import click

from memory_layer.cli import cli

TOKEN_ENV = "MEMORY_LAYER_WEB_TOKEN"


def _next_port(port: int) -> int:
    return port + 1 if port < 65535 else 8081


def _check_port(host: str, port: int) -> None:
    """Bind once the way the server will (SO_REUSEADDR), to say clearly what is wrong."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise click.ClickException(
                    f"Port {port} on {host} is already in use (another dashboard or program). "
                    f"Start on another port, e.g. `memory-layer serve --port {_next_port(port)}`."
                ) from None
            raise click.ClickException(
                f"Cannot listen on {host}:{port}: {exc.strerror or exc}."
            ) from None


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", type=click.IntRange(1, 65535), default=8080, show_default=True)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    help=f"Access token every request must present (or ${TOKEN_ENV}). "
    "Required when --host is not a loopback address, and then at least 16 characters.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="Another Host name browsers may use to reach the server (e.g. the machine's "
    "name when binding 0.0.0.0); repeat for more.",
)
def serve(host: str, port: int, token: str | None, allow_hosts: tuple[str, ...]) -> None:
    """Run the dashboard on http://127.0.0.1:8080/ until Ctrl+C.

    It binds loopback only by default. Binding any other address needs an access
    token; the browser then asks for it once (a login form sets a cookie), and
    scripts send it in the X-Memory-Layer-Token header.

    \b
    Examples:
        memory-layer serve
        memory-layer serve --port 8765
        MEMORY_LAYER_WEB_TOKEN=$(openssl rand -hex 16) memory-layer serve --host 0.0.0.0 \\
            --allow-host mybox.local
    """
    from werkzeug.serving import make_server

    from memory_layer.paths import db_path
    from memory_layer.web import create_app
    from memory_layer.web.security import host_label, token_problem

    token = (token or "").strip() or None
    problem = token_problem(host, token)
    if problem:
        raise click.ClickException(
            f"Refusing to bind {host}: {problem}. Set a long random access token with "
            f"--token or ${TOKEN_ENV}, or bind 127.0.0.1 (the default)."
        )
    _check_port(host, port)
    app = create_app(host=host, port=port, token=token, allow_hosts=allow_hosts)
    try:
        server = make_server(host, port, app, threaded=True)
    except SystemExit:  # werkzeug prints its own reason and exits when binding fails
        raise click.ClickException(f"Cannot listen on {host}:{port} (see above).") from None
    shown = "127.0.0.1" if host in {"0.0.0.0", "::"} else host_label(host)
    click.echo(f"memory-layer dashboard on http://{shown}:{port}/ (Ctrl+C stops it)")
    if token:
        click.echo("Access token required: open the page and enter it once.")
    click.echo(f"Store: {db_path()}", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
    finally:
        server.server_close()
