"""Memories: the list with filters, search (the same ranking as recall) and the detail page."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, render_template, request

from memory_layer import api
from memory_layer.api import (
    SORTS,
    Filters,
    Scope,
    Scored,
    count_memories,
    details,
    get_memory,
    list_memories,
    stats,
    usage_history,
)
from memory_layer.config import load_config
from memory_layer.errors import InvalidInput
from memory_layer.models import CATEGORIES, Memory
from memory_layer.web.forms import page_number
from memory_layer.web.standing import form_version, standing, tags_field
from memory_layer.web.store import db, embedder

bp = Blueprint("memories", __name__)

PER_PAGE = 25
# Re-sorting search results by another key ranks at most this many matches.
SORTED_SEARCH_CAP = 500
# The detail page lists this many of the latest times a memory was shown to an agent.
USAGE_HISTORY_ROWS = 100


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
                value = float(raw)
            except ValueError:
                value = math.nan
            # float() accepts "nan" and "inf"; outcome scores lie in -1..1.
            if not (math.isfinite(value) and -1.0 <= value <= 1.0):
                raise InvalidInput(f"{name} must be a number from -1 to 1, got {raw!r}.")
            return value

        _refuse_unknown(args)
        page = page_number(args)
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

    def link_args(self) -> dict[str, str]:
        """The search and filters as query parameters, for pager and detail links.

        Built from the parsed values only: anything else in the request's query string
        (``endpoint``, ``_anchor``, ``_external``) would reach url_for."""
        default_sort = "relevance" if self.q else "newest"
        out = {"q": self.q, "sort": "" if self.sort == default_sort else self.sort}
        for name in FILTER_PARAMS:
            value = getattr(self.filters, name)
            if value is not None:
                out[name] = str(value)
        return {k: v for k, v in out.items() if v}


# The Filters fields the list page offers (tag is the CLI's only).
FILTER_PARAMS = ("project", "category", "status", "source", "min_outcome", "max_outcome")
QUERY_PARAMS = ("q", "sort", "page", *FILTER_PARAMS)


def _refuse_unknown(args: Any) -> None:
    """A misspelt filter (``outcome_min=...``) would be ignored and the page would list
    everything as if it had been applied: say which names exist instead."""
    import difflib

    for name in args:
        if name in QUERY_PARAMS:
            continue
        swapped = "_".join(reversed(name.split("_")))  # outcome_min -> min_outcome
        near = difflib.get_close_matches(swapped, QUERY_PARAMS, n=1) or difflib.get_close_matches(
            name, QUERY_PARAMS, n=1
        )
        hint = f" Did you mean '{near[0]}'?" if near else ""
        raise InvalidInput(
            f"Unknown parameter '{name[:40]}'.{hint} The list takes: {', '.join(QUERY_PARAMS)}."
        )


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


def _ranked(conn: Any, query: Query, statuses: list[str], also: Any = None) -> list[Scored]:
    """recall over the list's scope, with the limit the list page uses.

    The limit sets recall's candidate pool, and the scope sets the best BM25 hit that
    keyword scores are relative to: the detail page passes the same query here (plus
    ``also``, its one memory) so that its explained score is the number the list shows."""
    config = load_config()
    wanted = query.page * PER_PAGE + 1 if query.sort == "relevance" else SORTED_SEARCH_CAP
    keep = _visible(query.filters)
    # A person's view: every status the list shows, sinking memories included.
    return api.recall(
        conn,
        query.q,
        scope=_scope(query.filters, statuses),
        config=config,
        audience=api.PERSON,
        include_sinking=True,
        limit=wanted,
        embedder=embedder(config),
        also=keep if also is None else lambda m: keep(m) and also(m),
    )


def search(conn: Any, query: Query, statuses: list[str]) -> tuple[list[Scored], bool]:
    """One page of recall results (and whether there is a next page)."""
    results = _ranked(conn, query, statuses)
    if query.sort != "relevance":
        field = {"newest": "created_at", "oldest": "created_at", "updated": "updated_at"}
        key = field.get(query.sort)
        if key:
            results.sort(key=lambda s: getattr(s.memory, key), reverse=query.sort != "oldest")
        else:
            attr = "outcome_score" if query.sort == "outcome" else "use_count"
            results.sort(key=lambda s: getattr(s.memory, attr), reverse=True)
    start = (query.page - 1) * PER_PAGE
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
    args = query.link_args()
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
        detail_args=_detail_args(query, args),
    )


def _detail_args(query: Query, args: dict[str, str]) -> dict[str, str]:
    """A row's link repeats the search (and its page, which sets recall's candidate
    pool) so the detail page explains the same recall call the row came from."""
    if not query.q:
        return {}
    return {**args, "page": str(query.page)} if query.page > 1 else args


def explain_for(conn: Any, memory: Memory, query: Query) -> Scored | None:
    """How recall scores this memory for the list's search: the list's recall call
    (query, filters, page), limited to this one record."""
    statuses = sorted(stats(conn)["by_status"])
    found = _ranked(conn, query, statuses, also=lambda m: m.id == memory.id)
    return found[0] if found else None


@bp.get("/memories/<memory_id>")
def detail(memory_id: str) -> str:
    conn = db()
    memory = get_memory(conn, memory_id)
    info = details(conn, memory.id)
    # The list's link carries its search, filters and page, so the explanation below
    # is the same recall call (and the same number) as the row that was clicked.
    query = Query.from_args(request.args)
    return render_template(
        "detail.html",
        memory=memory,
        info=info,
        q=query.q,
        scope_args={k: v for k, v in query.link_args().items() if k != "q"},
        scored=explain_for(conn, memory, query) if query.q else None,
        weights=load_config()["weights"],
        usage=usage_history(conn, memory.id, USAGE_HISTORY_ROWS),
        outcomes=api.memory_outcomes(conn, memory.id),
        categories=CATEGORIES,
        standing=standing(memory, load_config()),
        edit_tags=tags_field(memory),
        edit_version=form_version(memory),
    )
