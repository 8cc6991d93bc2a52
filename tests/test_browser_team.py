"""The dashboard's Team page in headless Chromium, against a real dashboard server and
a real team server on PostgreSQL: a reviewer accepts a proposal from the page, and a
pulled team memory's page names its origin, and editing it there proposes the change
to the team (the copy changes only once accepted and pulled)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.team_support import TeamServer, cli, pg_server, pg_url  # noqa: F401
from tests.test_browser_dashboard import CHROMIUM_ARGS, chromium_path
from tests.test_team_server import PROJECT, device, js, login, remember
from tests.test_web_serve import free_port, stop, wait_for_port


def test_a_reviewer_accepts_on_the_team_page_and_the_memory_names_its_origin(
    tmp_path: Path, pg_url: str  # noqa: F811
) -> None:
    from playwright.sync_api import sync_playwright

    server_home = device(tmp_path, "server")
    admin = js(cli(server_home, "team", "server", "init", "--db", pg_url, "--json"))["token"]
    srv = TeamServer(server_home, pg_url).start()
    dashboard = None
    try:
        ana = login(tmp_path, srv, "ana", admin)
        bo_token = js(cli(ana, "team", "invite", "bo", "--project", PROJECT, "--role",
                          "reviewer", "--json"))["token"]
        bo = login(tmp_path, srv, "bo", bo_token)
        cli(ana, "share", remember(ana, "Rotate the staging TLS cert with: make certs-staging"))
        port = free_port()
        env = {"MEMORY_LAYER_HOME": str(bo), "PATH": "/usr/bin:/bin", "HOME": str(bo.parent)}
        dashboard = subprocess.Popen(
            [sys.executable, "-m", "memory_layer", "serve", "--port", str(port)], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(dashboard, port)
        base = f"http://127.0.0.1:{port}"
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(),
                                                 args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(base + "/team")
            assert "make certs-staging" in page.inner_text("main")
            page.click("button[value=accept]")
            page.wait_for_selector("text=Accepted: team memory")
            assert "Nothing waits for a team reviewer" in page.inner_text("main")
            cli(bo, "team", "sync")
            team_id = js(cli(bo, "list", "--json", "--project", PROJECT))[0]["id"]
            page.goto(f"{base}/memories/{team_id}")
            origin = page.inner_text("#team-origin")
            assert srv.url in origin and "revision 1" in origin and "proposes" in origin
            # Editing it on the page proposes the change to the team; the copy stays.
            page.fill("#edit-form textarea[name=text]",
                      "Rotate the staging TLS cert with: make certs-staging FORCE=1")
            page.fill("#edit-form input[name=reason]", "the cert cache is sticky")
            page.click("#edit-form button[type=submit]")
            page.wait_for_selector("text=Proposed to the team as a change against revision 1")
            assert page.inner_text("#memory-text") == (
                "Rotate the staging TLS cert with: make certs-staging")
            change = js(cli(ana, "team", "review", "list", "--json"))
            assert [(c["memory_id"], c["base_revision"], c["reason"]) for c in change] == [
                (team_id, 1, "the cert cache is sticky")]
            cli(ana, "team", "review", "accept", change[0]["id"])
            cli(bo, "team", "sync")
            page.reload()
            assert page.inner_text("#memory-text").endswith("FORCE=1")
            assert "revision 2" in page.inner_text("#team-origin")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 1280
            browser.close()
    finally:
        if dashboard is not None:
            stop(dashboard)
        srv.kill()
