"""Review inbox: pending records, proposed changes, conflicts, disputed and overdue ones.

Listing and deciding are ``memory_layer.api.inbox``/``decide``, the functions behind
`memory-layer review`; this page only shows them and posts the person's decision.
"""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from memory_layer import api
from memory_layer.config import load_config
from memory_layer.errors import InvalidInput
from memory_layer.web.forms import plain_newlines
from memory_layer.web.store import db, embedder

bp = Blueprint("review", __name__)
ACTOR = "web"


@bp.get("/review")
def index() -> str:
    return render_template("review.html", items=api.inbox(db(), config=load_config()))


@bp.post("/review/<item_id>")
def decide(item_id: str) -> Response:
    form = request.form
    decision = form.get("decision", "")
    reason = (form.get("reason") or "").strip() or None
    revised_text = plain_newlines(form.get("revised_text") or "")
    # Checked here too so the message names this page's fields, not the CLI's flags.
    if decision == "reject" and reason is None:
        raise InvalidInput("Say why it is rejected in the Reason field; the history keeps it.")
    if decision == "revise" and not revised_text.strip():
        raise InvalidInput("A revision needs the corrected text in the Corrected text field.")
    config = load_config()
    result = api.decide(
        db(),
        item_id,
        decision,
        actor=ACTOR,
        reason=reason,
        revised_text=revised_text if decision == "revise" else None,
        choose=form.get("choose") or None,
        config=config,
        embedder=embedder(config) if decision == "revise" else None,
    )
    done = {"accept": "Accepted", "revise": "Revised", "reject": "Rejected"}[result["decision"]]
    flash(f"{done} {result.get('kind', 'item')} {item_id}.")
    return redirect(url_for("review.index"))
