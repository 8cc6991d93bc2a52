"""Reading: what agents may see, recall, and the record of what reached an agent."""

from __future__ import annotations

from dataclasses import replace

from memory_layer.errors import InvalidInput

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from datetime import datetime
    from typing import Any

    from memory_layer.models import Memory
    from memory_layer.requests import RecallRequest
    from memory_layer.retrieval.scoring import Scored
    from memory_layer.retrieval.search import Scope
    from memory_layer.storage.conn import Conn


PERSON = "person"
AGENT = "agent"
AUDIENCES = (PERSON, AGENT)
# How a memory reached an agent: by a hook (per prompt, at session start), by the agent
# running `memory-layer recall` (`/recall`, the skill), or by an MCP search. Outcome
# credit treats them alike: each is a usage row in the agent's session.
SURFACE_KINDS = ("injected", "session_start", "recalled", "mcp_search")
# How long recording a surfacing may wait for another writer before it is skipped.
SURFACING_WAIT_MS = 250


def agent_withheld_reason(
    memory: Memory, config: dict[str, Any], now: datetime | None = None
) -> str | None:
    """Why no agent may receive this record, or None: the one predicate behind hook
    injection, MCP search/read/check, agent-audience recall and the dashboard's
    "visible to agents" line."""
    from memory_layer.trust.visibility import agent_withheld_reason as reason

    return reason(memory, config, now)


def agent_record(
    db: Conn, memory_id: Any, config: dict[str, Any], now: datetime | None = None
) -> Memory:
    """The record an agent names by id, if it may receive it.

    A withheld record (pending, retired, rejected, disputed, edited, sinking...) and an
    id that matches nothing (or an ambiguous prefix) get the same ``NotFound``, worded
    the same and naming only what the agent typed: any difference (a reason, a field,
    "already says exactly that") would let an agent confirm what a person withheld."""
    from memory_layer.errors import NotFound
    from memory_layer.storage.records import get_memory

    given = str(memory_id or "").strip()
    try:
        memory = get_memory(db, given)
    except NotFound:
        memory = None
    if memory is None or agent_withheld_reason(memory, config, now) is not None:
        raise NotFound(f"No memory with id {given[:80]!r} is available to agents.")
    return memory


def agent_flags(memory: Memory, config: dict[str, Any], now: datetime | None = None) -> list[str]:
    """Warnings that go with a record an agent does receive (a conflict, an overdue
    review when configured to flag, a sinking memory shown on probation)."""
    from memory_layer.outcomes.rules import is_sinking
    from memory_layer.trust.visibility import flags

    out = flags(memory, config, now)
    if is_sinking(memory, config):
        out.append(
            f"ON PROBATION: failed {memory.failure_count} of "
            f"{memory.failure_count + memory.success_count} credited tries "
            f"(outcome {memory.outcome_score:+.2f}); shown again only because nothing "
            "better answers this"
        )
    return out


def agent_rankable(memory: Memory, config: dict[str, Any], now: datetime | None = None) -> bool:
    """What an agent-facing search may rank: what agents may receive, plus a sinking
    memory that may be retried on probation (``outcomes.rules.may_retry``). ``recall``
    keeps the latter only where no rival that is not sinking answers as well and no
    person marked it failed (``probation_filter``)."""
    from memory_layer.outcomes.rules import may_retry
    from memory_layer.trust.visibility import SINKING_PREFIX
    from memory_layer.trust.visibility import agent_withheld_reason as reason_for

    reason = reason_for(memory, config, now)
    if reason is None:
        return True
    return reason.startswith(SINKING_PREFIX) and may_retry(memory, config)


def probation_filter(db: Conn, results: list[Scored], config: dict[str, Any]) -> list[Scored]:
    """Drop the sinking results (let through by ``agent_rankable``) that have a rival
    that is not sinking within the relevance band of their similarity or above, or that
    a person marked failed; mark the rest (``explain["probation"]``).

    Sinking withholds a memory, and a withheld memory can never earn its way back: at
    20% outcome noise 4 of 20 good fixes stayed withheld for good after two unlucky
    failures (benchmarks/learning.py). On probation it is tried again only when every
    comparable answer is sinking too, and flagged as such."""
    from memory_layer.outcomes.rules import is_sinking
    from memory_layer.outcomes.store import TRACKER_SOURCES
    from memory_layer.storage.credits import failed_by_person

    sinking = [item for item in results if is_sinking(item.memory, config)]
    if not sinking:
        return results
    band = float(config["retrieval"]["relevance_band"])
    fine = [item.scores["similarity"] for item in results if item not in sinking]
    held = failed_by_person(db, [item.memory.id for item in sinking], TRACKER_SOURCES)
    kept = []
    for item in results:
        if item in sinking:
            similarity = item.scores["similarity"]
            if item.memory.id in held or any(s >= similarity - band for s in fine):
                continue
            item.explain["probation"] = (
                "sinking, shown: no rival that is not sinking answers as well"
            )
        kept.append(item)
    return kept


def check_query(query: str, *, limit: int = 8, category: str | None = None) -> str:
    """Validate a recall before anything slow loads; returns the stripped query."""
    query = (query or "").strip() if isinstance(query, str) else ""
    if not query:
        raise InvalidInput("The query is empty. Give some words to search for.")
    if limit < 1:
        raise InvalidInput("--limit must be at least 1.")
    if category:
        from memory_layer.models import check_category

        check_category(category)
    return query


def agent_statuses(config: dict[str, Any]) -> tuple[str, ...]:
    """The statuses an agent-facing search looks at (conflict candidates when the trust
    settings show them, each flagged)."""
    from memory_layer.trust.visibility import agent_statuses as statuses

    return tuple(statuses(config))


def parse_query(text: str) -> Any:
    """A query parsed once (``retrieval.query.Query``): hand it to ``recall`` and the
    relevance floor instead of the text, so neither parses it again."""
    from memory_layer.retrieval import query

    return query.parse_query(text)


def agent_scope(scope: Scope, config: dict[str, Any]) -> Scope:
    """The statuses an agent-facing recall searches (conflict candidates when shown)."""
    return replace(scope, statuses=agent_statuses(config))


def recall(
    db: Conn,
    query: Any,
    *,
    config: dict[str, Any],
    scope: Scope,
    audience: str = PERSON,
    surfaced_as: str | None = None,
    session_id: str | None = None,
    limit: int = 8,
    embedder: Any = None,
    now: datetime | None = None,
    include_sinking: bool = False,
    also: Callable[[Memory], bool] | None = None,
    min_answer: float | None = None,
) -> list[Scored]:
    """Rank memories for ``query`` (a string or a parsed query), best first; nothing
    when the store holds no answer (``min_answer``, default ``retrieval.min_answer``:
    retrieval/answerable.py).

    ``audience=agent`` searches only what an agent may receive (``agent_withheld_reason``);
    ``person`` shows every record in ``scope`` with its standing, except sinking ones
    unless ``include_sinking``. With ``surfaced_as``, the agent-visible results are
    recorded as surfaced in ``session_id`` so outcome learning can credit them; without
    a session nothing is recorded (no task can have used them). ``also`` narrows the
    results further (a list page's filters that ``Scope`` does not cover).
    """
    from memory_layer.outcomes.rules import is_sinking
    from memory_layer.retrieval.search import recall as rank

    if audience not in AUDIENCES:
        raise InvalidInput(f"audience must be one of {', '.join(AUDIENCES)}, got {audience!r}.")
    if surfaced_as is not None and surfaced_as not in SURFACE_KINDS:
        raise InvalidInput(f"surfaced_as must be one of {', '.join(SURFACE_KINDS)}.")
    if audience == AGENT:
        scope = agent_scope(scope, config)

    def visible(memory: Memory) -> bool:
        if also is not None and not also(memory):
            return False
        if audience == AGENT:
            return agent_rankable(memory, config, now)
        return include_sinking or not is_sinking(memory, config)

    results = rank(
        db,
        query,
        scope=scope,
        config=config,
        # Room for the sinking results probation_filter may drop.
        limit=limit * 2 if audience == AGENT else limit,
        embedder=embedder,
        now=now,
        visible=visible,
        min_answer=min_answer,
    )
    if audience == AGENT:
        results = probation_filter(db, results, config)[:limit]
    if surfaced_as and session_id:
        shown = [
            (item.memory.id, item.score)
            for item in results
            if audience == AGENT or agent_withheld_reason(item.memory, config, now) is None
        ]
        text = query if isinstance(query, str) else getattr(query, "text", str(query))
        record_surfacing(
            db,
            shown,
            kind=surfaced_as,
            session_id=session_id,
            project=scope.single_project(),
            query=text,
            now=now,
        )
    return results


def record_surfacing(
    db: Conn,
    shown: Iterable[tuple[str, float]],
    *,
    kind: str,
    session_id: str,
    project: str | None,
    query: str | None = None,
    now: datetime | None = None,
) -> int:
    """Record that these (memory id, score) pairs, in rank order, reached an agent in
    ``session_id``: the usage rows outcome learning credits from."""
    import sqlite3

    from memory_layer.activity import record_usage
    from memory_layer.models import iso, utcnow
    from memory_layer.storage.conn import raw
    from memory_layer.storage.db import brief_wait, is_locked

    if kind not in SURFACE_KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(SURFACE_KINDS)}.")
    rows = list(shown)
    if not rows or not session_id:
        return 0
    # Bookkeeping, not the answer: behind another process's long write it is skipped
    # (the agent still gets its results) instead of stalling the search for seconds.
    try:
        with brief_wait(raw(db), SURFACING_WAIT_MS):
            return record_usage(
                db,
                rows,
                session_id=session_id,
                project=project,
                kind=kind,
                query=query,  # cleaned and bounded where it is stored (activity)
                at=iso(now or utcnow()),
            )
    except sqlite3.OperationalError as exc:
        if not is_locked(exc):
            raise
        return 0


def scope_for(
    *,
    project: str | None,
    cwd: str | None,
    all_projects: bool = False,
    no_global: bool = False,
    category: str | None = None,
    scene: str | None = None,
) -> Scope:
    """Where a recall looks: the named project (else ``cwd``'s) plus global memories,
    every project, or without the global ones; optionally one category and scene."""
    from memory_layer.project import project_for
    from memory_layer.retrieval.search import Scope
    from memory_layer.trust.facts import clean_scene

    if all_projects and project:
        raise InvalidInput("Use either --project or --all-projects, not both.")
    if all_projects:
        scope = Scope(projects=None, category=category)
    else:
        scope = Scope.for_project(
            project or project_for(cwd), include_global=not no_global, category=category
        )
    if scene:
        scope = replace(scope, scenes=(clean_scene(scene) or "",))
    return scope


def recall_records(
    db: Conn, request: RecallRequest, *, config: dict[str, Any], embedder: Any
) -> list[dict[str, Any]]:
    """`memory-layer recall` whichever process answers it (the CLI itself or the warm
    engine): the results as records with their standing, best first. Inside a Claude
    Code session (``request.session_id``) what an agent may see is recorded as
    ``recalled``, so a task that applies it credits it like an injected memory."""
    from memory_layer.outcomes.rules import is_sinking

    wanted = request.limit if request.limit is not None else 1
    query = check_query(request.query, limit=wanted, category=request.category)
    scope = scope_for(
        project=request.project,
        cwd=request.cwd,
        all_projects=request.all_projects,
        no_global=request.no_global,
        category=request.category,
        scene=request.scene,
    )
    results = recall(
        db,
        query,
        config=config,
        scope=scope,
        audience=request.audience,
        surfaced_as="recalled" if request.session_id else None,
        session_id=request.session_id,
        limit=request.limit or int(config["retrieval"]["default_limit"]),
        embedder=None if request.keyword_only else embedder,
        include_sinking=request.include_sinking,
    )
    return [
        {
            **item.to_dict(),
            "sinking": is_sinking(item.memory, config),
            "withheld": agent_withheld_reason(item.memory, config),
        }
        for item in results
    ]
