"""Team memory on the dashboard: this device's sync state and, for reviewers, the
team inbox. The same calls as `memory-layer team status` and `team review`."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from memory_layer import api
from memory_layer.errors import Forbidden, InvalidInput, TeamUnavailable

bp = Blueprint("team", __name__)


def _inbox() -> tuple[list[dict[str, Any]], str | None]:
    """The team inbox, or why it cannot be shown (a page, not an error: the rest of
    the dashboard works offline and for members who do not review)."""
    try:
        return list(api.team_call("GET", "/v1/inbox")["items"]), None
    except Forbidden as exc:
        return [], f"Your team token cannot review: {exc}"
    except TeamUnavailable as exc:
        return [], str(exc)


@bp.get("/team")
def index() -> str:
    status = api.team_status()
    items, problem = _inbox() if status["logged_in"] else ([], None)
    return render_template("team.html", status=status, items=items, problem=problem)


@bp.post("/team/<proposal_id>")
def decide(proposal_id: str) -> Response:
    decision = request.form.get("decision", "")
    reason = (request.form.get("reason") or "").strip() or None
    if decision not in {"accept", "reject"}:
        raise InvalidInput("Choose Accept or Reject.")
    if decision == "reject" and reason is None:
        raise InvalidInput("Say why it is rejected in the Reason field; its author sees it.")
    body = {"reason": reason, "supersede": request.form.get("supersede") == "on"}
    result = api.team_call("POST", f"/v1/proposals/{quote(proposal_id, safe='')}/{decision}",
                           body)
    if decision == "accept":
        flash(f"Accepted: team memory {result['memory_id']} (revision {result['revision']}); "
              "members receive it on their next sync.")
    else:
        flash(f"Rejected proposal {proposal_id}.")
    return redirect(url_for("team.index"))
