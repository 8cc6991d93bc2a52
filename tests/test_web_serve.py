"""`memory-layer serve` as a user runs it: a real server process on a free port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

KEYWORD_ONLY = "embedding:\n  enabled: false\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def environment(home: Path, **extra: str) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(KEYWORD_ONLY)
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_LAYER_WEB_TOKEN"}
    env.update(MEMORY_LAYER_HOME=str(home), PYTHONUNBUFFERED="1", **extra)
    return env


def serve(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memory_layer", "serve", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_port(process: subprocess.Popen[str], port: int, deadline: float = 30.0) -> None:
    """Readiness wait (not a timing assertion): poll until the server accepts."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"server exited early: {process.communicate()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"server did not listen on {port}")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def fetch(url: str, headers: dict[str, str] | None = None, data: bytes | None = None):
    request = urllib.request.Request(url, headers=headers or {}, data=data)

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # noqa: ANN002, ANN003
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


@pytest.fixture
def running(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    process = serve("--port", str(port), env=environment(tmp_path / "home"))
    wait_for_port(process, port)
    yield port
    stop(process)


def test_serves_pages_with_security_headers(running: int) -> None:
    status, headers, body = fetch(f"http://127.0.0.1:{running}/")
    assert status == 200 and "Overview" in body
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Frame-Options"] == "DENY"
    assert fetch(f"http://localhost:{running}/memories")[0] == 200


def test_real_server_refuses_a_rebound_host_and_a_forged_post(running: int) -> None:
    status, _, body = fetch(f"http://127.0.0.1:{running}/", {"Host": f"evil.example:{running}"})
    assert status == 400 and "not allowed" in body
    status, _, _ = fetch(
        f"http://127.0.0.1:{running}/settings/reset",
        {"Origin": "http://evil.example"},
        data=b"key=weights.similarity",
    )
    assert status == 403


def test_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "memory_layer", "serve", "--host", "0.0.0.0", "--port", str(port)],
        env=environment(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "Refusing to bind 0.0.0.0" in result.stderr
    assert "--token" in result.stderr and "MEMORY_LAYER_WEB_TOKEN" in result.stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()


def test_busy_port_says_so_and_suggests_another(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "memory_layer", "serve", "--port", str(port)],
            env=environment(tmp_path / "home"),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    assert f"Port {port} on 127.0.0.1 is already in use" in result.stderr
    assert f"--port {port + 1}" in result.stderr


def test_token_from_the_environment_guards_every_request(tmp_path: Path) -> None:
    port = free_port()
    env = environment(tmp_path / "home", MEMORY_LAYER_WEB_TOKEN="tok-123")
    process = serve("--port", str(port), env=env)
    try:
        wait_for_port(process, port)
        status, headers, _ = fetch(f"http://127.0.0.1:{port}/memories")
        assert status == 302 and "/login" in headers["Location"]
        assert (
            fetch(f"http://127.0.0.1:{port}/memories", {"X-Memory-Layer-Token": "tok-123"})[0]
            == 200
        )
        assert fetch(f"http://127.0.0.1:{port}/login")[0] == 200
    finally:
        stop(process)


def test_help_lists_the_options() -> None:
    from click.testing import CliRunner

    from memory_layer.cli import cli

    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--host", "--port", "--token", "--allow-host", "Examples"):
        assert option in result.output
