"""Issue 14 point 8: the dashboard's token, login and query-string bounds, over real HTTP
to a real `memory-layer serve` process."""

from __future__ import annotations

import html
import re
import socket
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from tests.test_web_serve import environment, fetch, free_port, serve, stop, wait_for_port

TOKEN = "a-long-random-token-0123456789"


@pytest.mark.parametrize("token", ["a", "fifteen-chars-x"])
def test_exposed_bind_refuses_a_short_token_and_states_the_minimum(
    tmp_path: Path, token: str
) -> None:
    port = free_port()
    result = subprocess.run(
        [sys.executable, "-m", "memory_layer", "serve", "--host", "0.0.0.0"]
        + ["--port", str(port), "--token", token],
        env=environment(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stdout
    assert f"the access token is {len(token)} characters" in result.stderr
    assert "at least 16" in result.stderr
    assert "Traceback" not in result.stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()


def _login(port: int, cookie: str, csrf: str, token: str) -> tuple[int, dict[str, str], str]:
    body = urllib.parse.urlencode({"token": token, "csrf_token": csrf, "next": "/"}).encode()
    return fetch(
        f"http://127.0.0.1:{port}/login",
        {"Origin": f"http://127.0.0.1:{port}", "Cookie": cookie},
        data=body,
    )


def test_login_is_rate_limited_even_for_the_right_token(tmp_path: Path) -> None:
    port = free_port()
    process = serve("--port", str(port), "--token", TOKEN, env=environment(tmp_path / "home"))
    try:
        wait_for_port(process, port)
        _, headers, page = fetch(f"http://127.0.0.1:{port}/login")
        cookie = headers["Set-Cookie"].split(";", 1)[0]
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
        statuses = [_login(port, cookie, csrf, f"guess-{n}")[0] for n in range(5)]
        assert statuses == [401] * 5
        status, headers, page = _login(port, cookie, csrf, "guess-6")
        assert status == 429 and int(headers["Retry-After"]) > 0
        assert "Too many wrong tokens" in page
        # During the lockout the right token is refused too: no oracle for a guesser.
        assert _login(port, cookie, csrf, TOKEN)[0] == 429
    finally:
        stop(process)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("outcome_min=nan", "Did you mean 'min_outcome'?"),
        ("min_outcome=nan", "min_outcome must be a number from -1 to 1"),
        ("max_outcome=inf", "max_outcome must be a number from -1 to 1"),
        ("min_outcome=-1e309", "min_outcome must be a number from -1 to 1"),
        ("page=nan", "page must be a whole number"),
        ("status=bogus", "Unknown status 'bogus'"),
        ("q=x&status=bogus", "Unknown status 'bogus'"),
        ("category=bogus", "Unknown category 'bogus'"),
    ],
)
def test_bad_list_parameters_are_a_400_that_says_what_to_fix(
    tmp_path: Path, query: str, expected: str
) -> None:
    port = free_port()
    process = serve("--port", str(port), env=environment(tmp_path / "home"))
    try:
        wait_for_port(process, port)
        status, _, body = fetch(f"http://127.0.0.1:{port}/memories?{query}")
        assert status == 400, body[:300]
        assert expected in html.unescape(body)
        assert fetch(f"http://127.0.0.1:{port}/memories?min_outcome=-0.5&page=1")[0] == 200
    finally:
        stop(process)
