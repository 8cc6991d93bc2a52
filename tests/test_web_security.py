"""Every refusal the dashboard makes: Host, Origin/Referer, CSRF, GET on writes, token,
headers, CORS, and hostile memory text rendered escaped."""

from __future__ import annotations

import re

import pytest

from memory_layer.config import load_config
from memory_layer.memories import remember
from memory_layer.storage.records import get_memory, history
from memory_layer.web import create_app
from memory_layer.web.security import allowed_hosts, is_loopback

BASE = "http://127.0.0.1:8080"
HOSTILE = '<script>alert("owned")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def app():
    return create_app(host="127.0.0.1", port=8080)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def memory(db, cfg):
    return remember(db, "Use pnpm, not npm, in the web repo " + HOSTILE, config=cfg).memory


def csrf(client, path: str = "/settings") -> str:
    page = client.get(path, base_url=BASE).get_data(as_text=True)
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    if found:
        return found.group(1)
    with client.session_transaction(base_url=BASE) as session:
        return session["csrf"]


def post(client, path: str, data: dict | None = None, *, token: str | None = "auto", **headers):
    form = dict(data or {})
    if token == "auto":
        token = csrf(client, "/settings")
    if token is not None:
        form["csrf_token"] = token
    headers.setdefault("Origin", BASE)
    headers = {k.replace("_", "-"): v for k, v in headers.items() if v is not None}
    return client.post(path, data=form, base_url=BASE, headers=headers)


def test_loopback_detection():
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("127.0.0.2")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    assert not is_loopback("example.com")


def test_allowed_hosts_carry_the_port_and_the_bound_address():
    hosts = allowed_hosts("192.168.1.5", 9000)
    assert {"localhost:9000", "127.0.0.1:9000", "[::1]:9000", "192.168.1.5:9000"} <= hosts
    assert "localhost:8080" not in hosts and "localhost" not in hosts
    assert "localhost" in allowed_hosts("127.0.0.1", 80)
    assert "[fe80::1]:8080" in allowed_hosts("fe80::1", 8080)


@pytest.mark.parametrize("host", ["evil.example:8080", "127.0.0.1:9999", "attacker.localhost:8080"])
def test_foreign_host_is_refused(client, host):
    response = client.get("/", base_url=BASE, headers={"Host": host})
    assert response.status_code == 400
    assert "not allowed" in response.get_data(as_text=True)


@pytest.mark.parametrize("host", ["localhost:8080", "127.0.0.1:8080", "[::1]:8080"])
def test_loopback_hosts_are_accepted(client, host):
    assert client.get("/", base_url=BASE, headers={"Host": host}).status_code == 200


def test_foreign_host_cannot_change_anything(client, memory, db):
    token = csrf(client)
    response = client.post(
        f"/memories/{memory.id}/retire",
        data={"csrf_token": token},
        base_url=BASE,
        headers={"Host": "rebound.example:8080", "Origin": "http://rebound.example:8080"},
    )
    assert response.status_code == 400
    assert get_memory(db, memory.id).status == "active"


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://127.0.0.1:9999"},
        {"Origin": "http://localhost.evil.example:8080"},
        {"Origin": None, "Referer": "http://evil.example/page"},
        {"Origin": None},
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_foreign_origin_or_referer_is_refused(client, memory, db, headers):
    response = post(client, f"/memories/{memory.id}/retire", **headers)
    assert response.status_code == 403
    assert get_memory(db, memory.id).status == "active"
    assert [op.action for op in history(db, memory.id)] == ["create"]


def test_same_origin_referer_without_origin_is_accepted(client, memory, db):
    response = post(client, f"/memories/{memory.id}/retire", Origin=None, Referer=BASE + "/x")
    assert response.status_code == 302
    assert get_memory(db, memory.id).status == "retired"


@pytest.mark.parametrize("token", [None, "", "forged-token"])
def test_missing_or_wrong_csrf_token_is_refused(client, memory, db, token):
    csrf(client)  # the session has a real token; the form does not carry it
    response = post(client, f"/memories/{memory.id}/retire", token=token)
    assert response.status_code == 400
    assert "security token" in response.get_data(as_text=True)
    assert get_memory(db, memory.id).status == "active"


def test_csrf_token_from_another_session_is_refused(app, memory, db):
    other = app.test_client()
    stolen = csrf(other)
    victim = app.test_client()
    csrf(victim)
    response = post(victim, f"/memories/{memory.id}/retire", token=stolen)
    assert response.status_code == 400
    assert get_memory(db, memory.id).status == "active"


def test_csrf_header_is_accepted(client, memory, db):
    token = csrf(client)
    response = client.post(
        f"/memories/{memory.id}/retire",
        base_url=BASE,
        headers={"Origin": BASE, "X-CSRF-Token": token},
    )
    assert response.status_code == 302
    assert get_memory(db, memory.id).status == "retired"


@pytest.mark.parametrize(
    "path",
    [
        "/memories/{id}/edit",
        "/memories/{id}/category",
        "/memories/{id}/retire",
        "/memories/{id}/restore",
        "/settings/reset",
        "/review/{id}",
        "/task/outcome",
        "/logout",
    ],
)
def test_get_on_a_mutating_route_is_405(client, memory, db, path):
    response = client.get(path.format(id=memory.id), base_url=BASE)
    assert response.status_code == 405
    assert get_memory(db, memory.id).status == "active"
    assert [op.action for op in history(db, memory.id)] == ["create"]


def test_get_on_purge_only_asks_for_confirmation(client, memory, db):
    response = client.get(f"/memories/{memory.id}/purge", base_url=BASE)
    assert response.status_code == 200
    assert "Delete for good" in response.get_data(as_text=True)
    assert get_memory(db, memory.id).id == memory.id


@pytest.mark.parametrize("path", ["/", "/memories", "/memories/{id}", "/settings", "/nowhere"])
def test_security_headers_everywhere(client, memory, path):
    response = client.get(path.format(id=memory.id), base_url=BASE)
    csp = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "script-src 'none'" in csp
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert "Access-Control-Allow-Origin" not in response.headers


def test_no_cors_for_a_foreign_preflight(client, memory):
    response = client.options(
        f"/memories/{memory.id}/retire",
        base_url=BASE,
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert "Access-Control-Allow-Origin" not in response.headers
    assert "Access-Control-Allow-Credentials" not in response.headers


def test_session_cookie_is_strict_and_http_only(client):
    response = client.get("/settings", base_url=BASE)
    cookie = response.headers.get("Set-Cookie", "")
    assert "memory_layer_session_8080=" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def hostile_pages(memory_id: str) -> list[str]:
    return ["/", "/memories", "/memories?q=pnpm", f"/memories/{memory_id}?q=pnpm"]


def test_hostile_memory_text_is_escaped_everywhere(client, memory, db, cfg):
    remember(
        db, "proj note", config=cfg, project='<b onmouseover="x()">proj</b>', source="<i>src</i>"
    )
    for path in hostile_pages(memory.id) + [f"/memories/{memory.id}/purge"]:
        page = client.get(path, base_url=BASE).get_data(as_text=True)
        assert "<script>alert" not in page, path
        assert "<img src=x" not in page, path
        assert "<b onmouseover" not in page and "<i>src</i>" not in page, path
    detail = client.get(f"/memories/{memory.id}", base_url=BASE).get_data(as_text=True)
    assert "&lt;script&gt;alert(&#34;owned&#34;)&lt;/script&gt;" in detail
    overview = client.get("/", base_url=BASE).get_data(as_text=True)
    assert "&lt;b onmouseover=" in overview  # the project name in the chart label


def test_hostile_text_in_the_review_inbox_is_escaped(client, db, cfg):
    remember(db, "Pending from an agent " + HOSTILE, config=cfg, status="pending", source="mcp:x")
    page = client.get("/review", base_url=BASE).get_data(as_text=True)
    assert "Pending from an agent" in page
    assert "<script>alert" not in page and "&lt;script&gt;" in page


# --- access token -------------------------------------------------------------------


@pytest.fixture
def guarded():
    return create_app(host="192.0.2.10", port=8080, token="s3cret-token").test_client()


GUARDED = "http://192.0.2.10:8080"


def test_token_required_redirects_browsers_to_the_login_form(guarded):
    response = guarded.get("/memories", base_url=GUARDED)
    assert response.status_code == 302
    assert "/login" in response.headers["Location"]
    assert guarded.get("/login", base_url=GUARDED).status_code == 200


def test_token_in_a_header_or_bearer_is_accepted(guarded):
    assert (
        guarded.get(
            "/", base_url=GUARDED, headers={"X-Memory-Layer-Token": "s3cret-token"}
        ).status_code
        == 200
    )
    assert (
        guarded.get(
            "/", base_url=GUARDED, headers={"Authorization": "Bearer s3cret-token"}
        ).status_code
        == 200
    )
    assert (
        guarded.get("/", base_url=GUARDED, headers={"X-Memory-Layer-Token": "nope"}).status_code
        == 302
    )


def test_post_without_the_token_is_401(guarded, memory, db):
    response = guarded.post(
        f"/memories/{memory.id}/retire", base_url=GUARDED, headers={"Origin": GUARDED}
    )
    assert response.status_code == 401
    assert get_memory(db, memory.id).status == "active"


def login(client, token: str, next_path: str = "/memories"):
    page = client.get("/login", base_url=GUARDED).get_data(as_text=True)
    form_token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    return client.post(
        "/login",
        data={"csrf_token": form_token, "token": token, "next": next_path},
        base_url=GUARDED,
        headers={"Origin": GUARDED},
    )


def test_login_with_a_wrong_token_is_refused(guarded):
    response = login(guarded, "guess")
    assert response.status_code == 401
    assert guarded.get("/", base_url=GUARDED).status_code == 302


def test_login_sets_a_cookie_that_grants_access(guarded, memory, db):
    response = login(guarded, "s3cret-token")
    assert response.status_code == 302 and response.headers["Location"].endswith("/memories")
    cookie = response.headers["Set-Cookie"]
    assert "s3cret-token" not in cookie and "HttpOnly" in cookie
    assert guarded.get("/memories", base_url=GUARDED).status_code == 200
    # Logged in, writes still need the CSRF token and a matching Origin.
    bare = guarded.post(
        f"/memories/{memory.id}/retire", base_url=GUARDED, headers={"Origin": GUARDED}
    )
    assert bare.status_code == 400
    assert get_memory(db, memory.id).status == "active"


def test_login_never_redirects_off_site(guarded):
    for target in ["https://evil.example/", "//evil.example/x", "javascript:alert(1)"]:
        response = login(guarded, "s3cret-token", target)
        assert response.headers["Location"] in {"/", "http://192.0.2.10:8080/"}


def test_allow_host_extends_the_allowlist():
    client = create_app(port=8080, allow_hosts=["mybox.local"]).test_client()
    assert client.get("/", base_url="http://mybox.local:8080").status_code == 200
    assert client.get("/", base_url="http://otherbox.local:8080").status_code == 400


def test_bound_address_is_an_allowed_host(guarded):
    headers = {"X-Memory-Layer-Token": "s3cret-token"}
    assert guarded.get("/", base_url=GUARDED, headers=headers).status_code == 200
    assert guarded.get("/", base_url="http://127.0.0.1:8080", headers=headers).status_code == 200
    assert guarded.get("/", base_url="http://198.51.100.1:8080", headers=headers).status_code == 400


def test_config_loads(cfg):
    assert load_config() == cfg
