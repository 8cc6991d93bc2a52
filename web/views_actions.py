"""Changing a memory from the detail page: edit, re-categorise, retire, restore, purge.

Every action is a POST (a GET answers 405) and calls the same library function as
the matching CLI command, with actor "web", so the operations log shows who did it.
"""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from memory_layer.config import load_config
from memory_layer.errors import InvalidInput
from memory_layer.memories import edit, forget, restore
from memory_layer.storage.records import delete_memory, get_memory
from memory_layer.web.app import db, embedder

bp = Blueprint("actions", __name__)
ACTOR = "web"


def _reason() -> str | None:
    return (request.form.get("reason") or "").strip() or None


def _back(memory_id: str) -> Response:
    return redirect(url_for("memories.detail", memory_id=memory_id))


@bp.post("/memories/<memory_id>/edit")
def edit_memory(memory_id: str) -> Response:
    config = load_config()
    current = get_memory(db(), memory_id)
    form = request.form
    text = form.get("text")
    text = text if text is not None and text.strip() != current.text.strip() else None
    tags = form.get("tags")
    tag_list = [t.strip() for t in tags.split(",") if t.strip()] if tags is not None else None
    if tag_list is not None and tuple(tag_list) == current.tags:
        tag_list = None
    confidence = (form.get("confidence") or "").strip()
    conf = None
    if confidence:
        try:
            conf = float(confidence)
        except ValueError:
            raise InvalidInput(
                f"Confidence must be a number from 0 to 1, got {confidence!r}."
            ) from None
        if conf == current.confidence:
            conf = None
    if text is None and tag_list is None and conf is None:
        flash("Nothing changed.")
        return _back(current.id)
    edit(
        db(),
        current.id,
        config=config,
        actor=ACTOR,
        text=text,
        tags=tag_list,
        confidence=conf,
        embedder=embedder(config) if text is not None else None,
    )
    flash("Saved. The history keeps the previous values.")
    return _back(current.id)


@bp.post("/memories/<memory_id>/category")
def recategorise(memory_id: str) -> Response:
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
    memory = forget(db(), memory_id, actor=ACTOR, reason=_reason())
    flash("Retired: agents no longer see this memory. Restore brings it back.")
    return _back(memory.id)


@bp.post("/memories/<memory_id>/restore")
def restore_memory(memory_id: str) -> Response:
    from memory_layer.trust.visibility import withheld_reason

    memory = restore(db(), memory_id, actor=ACTOR, reason=_reason())
    held = withheld_reason(memory, load_config())
    # A record that was never verified comes back unverified: say so, do not promise.
    flash(
        "Restored: agents see this memory again."
        if held is None
        else f"Restored, but still withheld from agents: {held}."
    )
    return _back(memory.id)


@bp.get("/memories/<memory_id>/purge")
def purge_confirm(memory_id: str) -> str:
    return render_template("purge.html", memory=get_memory(db(), memory_id))


@bp.post("/memories/<memory_id>/purge")
def purge(memory_id: str) -> Response:
    memory = get_memory(db(), memory_id)
    if request.form.get("confirm") != memory.id:
        raise InvalidInput("Purging needs the confirmation step: use the Purge page's button.")
    reason = _reason()
    delete_memory(db(), memory.id, actor=ACTOR, context={"reason": reason} if reason else None)
    flash(f"Purged {memory.id} for good.")
    return redirect(url_for("memories.index"))
