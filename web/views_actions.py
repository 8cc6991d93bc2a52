"""Changing a memory from the detail page: edit, re-categorise, retire, restore, purge.

Every action is a POST (a GET answers 405) and calls the same library function as
the matching CLI command, with actor "web", so the operations log shows who did it.
"""

from __future__ import annotations

import hmac
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from memory_layer import api
from memory_layer.api import clean_tags, edit, forget, get_memory, restore
from memory_layer.config import load_config
from memory_layer.errors import InvalidInput
from memory_layer.models import RETIRED, Memory
from memory_layer.web.forms import plain_newlines
from memory_layer.web.standing import form_version, standing, tags_field
from memory_layer.web.store import db, embedder

bp = Blueprint("actions", __name__)
ACTOR = "web"
# The trust policy's name for the owner (trust.trusted_sources has "user"); the part
# after the colon keeps "web" in approved_by and the history.
OWNER_SOURCE = "user:web"


def _reason() -> str | None:
    return (request.form.get("reason") or "").strip() or None


def _back(memory_id: str) -> Response:
    return redirect(url_for("memories.detail", memory_id=memory_id))


def _check_version(memory: Memory, version: str | None) -> None:
    if not version:
        raise InvalidInput(
            "The edit form did not say which version of the memory it shows. "
            "Reload the memory's page and save again."
        )
    if not hmac.compare_digest(version, form_version(memory)):
        abort(
            409,
            description=f"Memory {memory.id} changed since you opened it; nothing was saved. "
            "Reload to see the new version, then make your change again.",
        )


def _confidence(raw: str, current: float) -> float | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise InvalidInput(
            f"Confidence must be a number from 0 to 1, got {raw!r}. Fix the Confidence field."
        ) from None
    return None if value == current else value


def _edit_changes(current: Memory, form: Any) -> dict[str, Any]:
    """The fields the person actually changed, as ``edit`` keyword arguments."""
    changes: dict[str, Any] = {}
    text = form.get("text")
    if text is not None:
        text = plain_newlines(text)
        if text.strip() != plain_newlines(current.text).strip():
            changes["text"] = text
    tags = form.get("tags")
    # Compare with what the form showed: splitting it again would break up a stored
    # tag that holds a comma on every save.
    if tags is not None and tags.strip() != tags_field(current):
        tag_list = clean_tags(tags)
        if tuple(tag_list) != current.tags:
            changes["tags"] = tag_list
    conf = _confidence(form.get("confidence") or "", current.confidence)
    if conf is not None:
        changes["confidence"] = conf
    return changes


@bp.post("/memories/<memory_id>/edit")
def edit_memory(memory_id: str) -> Response:
    config = load_config()
    form = request.form
    current = get_memory(db(), memory_id)
    _check_version(current, form.get("version"))
    if api.is_team_memory(current):
        return _propose_to_team(current, form)
    changes = _edit_changes(current, form)
    if not changes:
        flash("Nothing changed.")
        return _back(current.id)
    memory = edit(
        db(),
        current.id,
        config=config,
        actor=ACTOR,
        embedder=embedder(config) if "text" in changes else None,
        # The dashboard is the owner's own door: a new text is vouched for under the
        # trust policy's "user" kind, as `memory-layer edit` vouches for the CLI's.
        vouch_as=OWNER_SOURCE,
        # Again under the write lock: another door may have saved while the model loaded.
        expect=lambda latest: _check_version(latest, form.get("version")),
        **changes,
    )
    flash("Saved. The history keeps the previous values." + _withheld_note(memory, config))
    return _back(memory.id)


def _propose_to_team(current: Memory, form: Any) -> Response:
    """A team memory's text is the team's: the edit form proposes the change to the
    team (as `memory-layer edit` does) and leaves this device's copy as it is."""
    text = plain_newlines(form.get("text") or "")
    if text.strip() == plain_newlines(current.text).strip():
        flash("Nothing changed.")
        return _back(current.id)
    result = api.team_propose_edit(current.id, text=text, reason=_reason())
    _flash_proposal(current, result)
    return _back(current.id)


def _flash_proposal(current: Memory, result: dict[str, Any]) -> None:
    if result["refused"]:
        raise InvalidInput(f"The team server refused the change: {result['refused'][0]['error']}")
    where = ("Queued: the team server is unreachable; the next sync sends it."
             if result["offline"] else "Sent.")
    others = len(result.get("others_refused") or [])
    earlier = (f" {others} earlier queued change(s) went with it and were refused by the "
               "team server (see the Team page)." if others else "")
    flash(f"Proposed to the team as a change against revision {result['base_revision']}. "
          f"{where} A team reviewer accepts or rejects it; this copy stays as it is until "
          f"the change is accepted and pulled.{earlier}")


def _withheld_note(memory: Memory, config: dict[str, Any]) -> str:
    held = standing(memory, config)["withheld"]
    return f" Still withheld from agents: {held}." if held else ""


@bp.post("/memories/<memory_id>/category")
def recategorise(memory_id: str) -> Response:
    current = get_memory(db(), memory_id)
    if api.is_team_memory(current):
        result = api.team_propose_edit(current.id, category=request.form.get("category", ""))
        _flash_proposal(current, result)
        return _back(current.id)
    memory = edit(
        db(),
        memory_id,
        config=load_config(),
        actor=ACTOR,
        category=request.form.get("category", ""),
    )
    flash(f"Category is now {memory.category}.")
    return _back(memory.id)


@bp.post("/memories/<memory_id>/retire")
def retire(memory_id: str) -> Response:
    current = get_memory(db(), memory_id)
    # Like restoring an active memory: say it was a no-op instead of claiming a change.
    if current.status == RETIRED:
        raise InvalidInput(f"Memory {current.id} is already retired; nothing changed.")
    memory = forget(db(), current.id, actor=ACTOR, reason=_reason())
    flash("Retired: agents no longer see this memory. Restore brings it back.")
    return _back(memory.id)


@bp.post("/memories/<memory_id>/restore")
def restore_memory(memory_id: str) -> Response:
    memory = restore(db(), memory_id, actor=ACTOR, reason=_reason())
    # A record that was never verified comes back unverified: say so, do not promise.
    note = _withheld_note(memory, load_config())
    flash("Restored." + (note or " Agents see this memory again."))
    return _back(memory.id)


@bp.get("/memories/<memory_id>/purge")
def purge_confirm(memory_id: str) -> str:
    return render_template("purge.html", memory=get_memory(db(), memory_id))


@bp.post("/memories/<memory_id>/purge")
def purge(memory_id: str) -> Response:
    memory = get_memory(db(), memory_id)
    if request.form.get("confirm") != memory.id:
        raise InvalidInput("Purging needs the confirmation step: use the Purge page's button.")
    api.purge(db(), memory.id, actor=ACTOR, reason=_reason())
    flash(f"Purged {memory.id} for good.")
    return redirect(url_for("memories.index"))
