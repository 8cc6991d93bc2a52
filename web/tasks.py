"""Tasks: recent Claude Code and Beads tasks, their outcome and the memories they credited.

Everything comes from ``memory_layer.api`` (list_tasks, task_detail, correct_outcome);
correcting an outcome there undoes the old credits and redoes them.
"""

from __future__ import annotations

from flask import Blueprint, flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

from memory_layer.api import correct_outcome, list_tasks, task_detail
from memory_layer.errors import InvalidInput
from memory_layer.web.forms import page_number
from memory_layer.web.store import db

bp = Blueprint("tasks", __name__)
ACTOR = "web"
PER_PAGE = 25


@bp.get("/tasks")
def index() -> str:
    page = page_number(request.args)
    tasks = list_tasks(db(), limit=PER_PAGE + 1, offset=(page - 1) * PER_PAGE)
    return render_template(
        "tasks.html",
        tasks=tasks[:PER_PAGE],
        page=page,
        has_next=len(tasks) > PER_PAGE,
    )


# Task ids hold the tracker's scope (a project URL, a path), so they travel in the
# query string or the form rather than in the URL path.
@bp.get("/task")
def detail() -> str:
    task_id = request.args.get("id", "")
    info = task_detail(db(), task_id)
    return render_template("task.html", task=info)


@bp.post("/task/outcome")
def correct() -> Response:
    task_id = request.form.get("task_id", "")
    wanted = request.form.get("outcome", "")
    if wanted not in {"success", "failure"}:
        raise InvalidInput("Choose the outcome: success or failure.")
    correct_outcome(db(), task_id, wanted == "success", actor=ACTOR)
    flash(f"Outcome set to {wanted}; the earlier credits were undone and redone.")
    return redirect(url_for("tasks.detail", id=task_id))
