"""Memories: the list with filters, search (the same ranking as recall) and the detail page."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, render_template, request

from memory_layer.config import load_config
from memory_layer.errors import InvalidInput
from memory_layer.listing import SORTS, Filters, count_memories, details, list_memories, stats
from memory_layer.models import CATEGORIES, Memory
from memory_layer.retrieval.scoring import Scored
from memory_layer.retrieval.search import Scope, recall
from memory_layer.storage.records import get_memory
from memory_layer.web import data
from memory_layer.web.app import db, embedder
from memory_layer.web.optional import feature

bp = Blueprint("memories", __name__)

PER_PAGE = 25
# Re-sorting search results by another key ranks at most this many matches.
SORTED_SEARCH_CAP = 500


@dataclass(frozen=True)
class Query:
    """The list page's query string, parsed once."""

    q: str
    filters: Filters
    sort: str
    page: int

    @classmethod
    def from_args(cls, args: Any) -> Query:
        def number(name: str) -> float | None:
            raw = (args.get(name) or "").strip()
            if not raw:
                return None
            try:
                return float(raw)
            except ValueError:
                raise InvalidInput(f"{name} must be a number from -1 to 1, got {raw!r}.") from None

        try:
            page = max(1, int(args.get("page") or 1))
        except ValueError:
            raise InvalidInput("page must be a whole number.") from None
        q = (args.get("q") or "").strip()
        # No sort chosen: best match first for a search (recall's order), else newest.
        sort = args.get("sort") or ("relevance" if q else "newest")
        if sort == "relevance" and not q:
            sort = "newest"
        if sort not in SORTS and sort != "relevance":
            raise InvalidInput(f"Unknown sort '{sort}'. Choose one of: {', '.join(SORTS)}.")
        filters = Filters(
            project=args.get("project") or None,
            category=args.get("category") or None,
            status=args.get("status") or None,
            source=args.get("source") or None,
            min_outcome=number("min_outcome"),
            max_outcome=number("max_outcome"),
        )
        return cls(q=q, filters=filters, sort=sort, page=page)


def _scope(filters: Filters, statuses: list[str]) -> Scope:
    if filters.project == "global":
        projects: tuple[str | None, ...] | None = (None,)
    elif filters.project:
        projects = (filters.project,)
    else:
        projects = None
    wanted = (filters.status,) if filters.status else tuple(statuses) or ("active",)
    return Scope(projects=projects, statuses=wanted, category=filters.category)


def _visible(filters: Filters) -> Any:
    """The filters recall's Scope does not cover, as its ``visible`` predicate."""

    def keep(memory: Memory) -> bool:
        if filters.source and memory.source != filters.source:
            return False
        if filters.min_outcome is not None and memory.outcome_score < filters.min_outcome:
            return False
        return filters.max_outcome is None or memory.outcome_score <= filters.max_outcome

    return keep


def search(conn: Any, query: Query, statuses: list[str]) -> tuple[list[Scored], bool]:
    """One page of recall results (and whether there is a next page)."""
    config = load_config()
    start = (query.page - 1) * PER_PAGE
    wanted = start + PER_PAGE + 1 if query.sort == "relevance" else SORTED_SEARCH_CAP
    results = recall(
        conn,
        query.q,
        scope=_scope(query.filters, statuses),
        config=config,
        limit=wanted,
        embedder=embedder(config),
        visible=_visible(query.filters),
    )
    if query.sort != "relevance":
        field = {"newest": "created_at", "oldest": "created_at", "updated": "updated_at"}
        key = field.get(query.sort)
        if key:
            results.sort(key=lambda s: getattr(s.memory, key), reverse=query.sort != "oldest")
        else:
            attr = "outcome_score" if query.sort == "outcome" else "use_count"
            results.sort(key=lambda s: getattr(s.memory, attr), reverse=True)
    page = results[start : start + PER_PAGE + 1]
    return page[:PER_PAGE], len(page) > PER_PAGE


@bp.get("/memories")
def index() -> str:
    conn = db()
    query = Query.from_args(request.args)
    info = stats(conn)
    statuses = sorted(info["by_status"])
    if query.q:
        results, has_next = search(conn, query, statuses)
        rows = [(item.memory, item) for item in results]
        total = None
    else:
        memories = list_memories(
            conn,
            query.filters,
            limit=PER_PAGE + 1,
            offset=(query.page - 1) * PER_PAGE,
            sort=query.sort,
        )
        has_next = len(memories) > PER_PAGE
        rows = [(memory, None) for memory in memories[:PER_PAGE]]
        total = count_memories(conn, query.filters)
    args = {k: v for k, v in request.args.items() if v and k != "page"}
    config = load_config()
    marks = {memory.id: standing(memory, config)["marks"] for memory, _ in rows}
    return render_template(
        "memories.html",
        query=query,
        rows=rows,
        total=total,
        has_next=has_next,
        args=args,
        categories=CATEGORIES,
        projects=sorted(info["by_project"]),
        statuses=statuses,
        sources=sorted(info["by_source"]),
        sorts=["relevance", *SORTS],
        marks=marks,
    )


def explain_for(conn: Any, memory: Memory, q: str) -> Scored | None:
    """How recall scores this memory for ``q``: recall itself, limited to this one record."""
    config = load_config()
    found = recall(
        conn,
        q,
        scope=Scope(projects=None, statuses=(memory.status,)),
        config=config,
        limit=1,
        embedder=embedder(config),
        visible=lambda m: m.id == memory.id,
    )
    return found[0] if found else None


def standing(memory: Memory, config: dict[str, Any]) -> dict[str, Any]:
    """Whether agents receive the memory and why not, and its proven/sinking marks."""
    out: dict[str, Any] = {"withheld": None, "flags": [], "marks": [], "missing": []}
    trust = feature("memory_layer.trust", "withheld_reason", "flags")
    if trust.ok:
        out["withheld"] = trust.module.withheld_reason(memory, config)
        out["flags"] = trust.module.flags(memory, config)
    else:
        out["missing"].append(trust.missing)
    outcomes = feature("memory_layer.outcomes", "is_proven", "is_sinking")
    if outcomes.ok:
        if outcomes.module.is_proven(memory, config):
            out["marks"].append("proven")
        if outcomes.module.is_sinking(memory, config):
            out["marks"].append("sinking")
    else:
        out["missing"].append(outcomes.missing)
    return out


@bp.get("/memories/<memory_id>")
def detail(memory_id: str) -> str:
    conn = db()
    memory = get_memory(conn, memory_id)
    info = details(conn, memory.id)
    q = (request.args.get("q") or "").strip()
    outcomes = feature("memory_layer.outcomes", "memory_outcomes")
    return render_template(
        "detail.html",
        memory=memory,
        info=info,
        q=q,
        scored=explain_for(conn, memory, q) if q else None,
        weights=load_config()["weights"],
        usage=data.usage_history(conn, memory.id),
        outcomes=outcomes.module.memory_outcomes(conn, memory.id) if outcomes.ok else None,
        outcomes_missing=outcomes.missing,
        categories=CATEGORIES,
        standing=standing(memory, load_config()),
    )
