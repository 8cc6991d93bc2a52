"""`memory-layer mcp`: the store over MCP (stdio), for Codex, Cursor, Claude Code...

Agents can search, read, check a draft, propose, dispute and report outcomes.
There is deliberately no tool to approve, delete or retire: proposals land in the
review inbox as pending and only a person (CLI or dashboard) decides, so an agent
can never make its own proposal true. Every tool hands out only what
``api.agent_withheld_reason`` allows, the predicate every door shares.

Built on the official ``mcp`` SDK (``MCPServer``); this module's name avoids
shadowing the ``mcp`` package, and every import here is absolute.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import sqlite3
import threading
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from memory_layer import __version__, api
from memory_layer.config import load_config
from memory_layer.errors import MemoryLayerError, NotFound
from memory_layer.models import Memory
from memory_layer.requests import Place

INSTRUCTIONS = """\
memory-layer: the shared, reviewed memory of this machine's coding agents.
- Call `search` before non-trivial work (how to run, deploy, known gotchas, decisions).
- Use `check` on a draft, then `propose` what future sessions should know; a person
  reviews every proposal before any agent sees it.
- Call `report_outcome` when a memory you used worked or failed, and `dispute` a
  record you found to be wrong.
Records marked CONFLICT are unconfirmed candidate values; say so if you rely on one."""


class Server:
    """The store behind the MCP tools: one connection, guarded by a lock because the
    SDK runs synchronous tools in worker threads."""

    def __init__(self, *, project: str | None, scene: str | None, client: str | None) -> None:
        from memory_layer.api import clean_scene, open_db

        self.conn: sqlite3.Connection = open_db()
        self.lock = threading.Lock()
        self.project = project
        self.scene = clean_scene(scene)
        self.client = client
        self.session_id = secrets.token_hex(6)

    def source(self, ctx: Context | None) -> str:
        name = self.client
        if name is None and ctx is not None:
            try:
                params = ctx.session.client_params
                name = params.client_info.name if params and params.client_info else None
            except (AttributeError, LookupError):
                name = None
        cleaned = "".join(ch for ch in (name or "agent").lower() if ch.isalnum() or ch in "-_.")
        # The client names itself: bounded like every stored field.
        return "mcp:" + (cleaned[:MAX_CLIENT_NAME] or "agent")

    def project_for(self, project: str | None) -> str | None:
        if project:
            return project
        if self.project is None:
            # The working directory does not change under a running server: resolve once.
            from memory_layer.api import project_for

            self.project = project_for()
        return self.project

    def embedder(self, config: dict[str, Any]) -> Any:
        from memory_layer.api import get_embedder

        return get_embedder(config)


# The library's messages name CLI commands; an agent over MCP has only its tools.
_CLI_HINTS = (
    ("`memory-layer list` shows ids.", "Ids come from `search` results."),
    ("(`memory-layer review` lists them)", "(a person decides in review)"),
)
MAX_LIMIT = 50  # results per search: more is a dump, not an answer
MAX_CLIENT_NAME = 64  # characters of a client's own name kept in its source
_MAX_ECHO = 80  # characters of an agent's own input repeated in an error
_MAX_MESSAGE = 600


def _shown(value: Any) -> str:
    text = str(value)
    if len(text) > _MAX_ECHO:
        text = text[:_MAX_ECHO] + f"... ({len(text)} characters)"
    return repr(text)


def agent_message(exc: MemoryLayerError, given: dict[str, Any]) -> str:
    """The error as an agent can act on it: what to do with its own tools, not CLI
    commands it cannot run, and never its whole (possibly huge) input echoed back."""
    from memory_layer.api import UnknownTask

    if isinstance(exc, UnknownTask):
        return (
            f"No task {_shown(given.get('task_id'))} is known to memory-layer (tasks come "
            "from the task hooks of Claude Code or Beads). To report on a memory you used, "
            "pass its memory_id instead of task_id."
        )
    message = str(exc)
    if isinstance(exc, NotFound) and (
        message.startswith("No memory with id") or message.startswith("Id prefix")
    ):
        # One answer for an unknown id, an ambiguous prefix and a withheld record.
        return (
            f"No memory with id {_shown(given.get('memory_id'))} is available to agents. Use "
            "an id from `search` results (the full id, or a unique prefix of at least 4 "
            "characters)."
        )
    for cli_hint, tool_hint in _CLI_HINTS:
        message = message.replace(cli_hint, tool_hint)
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "..."
    return message


def _public(memory: Memory, config: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": memory.id,
        "text": memory.text,
        "category": memory.category,
        "project": memory.project,
        "scope": memory.scope,
        "scene": memory.extra.get("scene"),
        "subject": memory.extra.get("subject"),
        "key": memory.extra.get("fact_key"),
        "thread": memory.extra.get("thread"),
        "position": memory.extra.get("position"),
        "source": memory.source,
        "status": memory.status,
        # Who approved it as a person; a hook capture is "captured_by", never reviewed.
        **api.agent_review(memory),
        "review_by": memory.extra.get("review_by"),
        "outcome_score": round(memory.outcome_score, 3),
        "flags": api.agent_flags(memory, config),
    }


def search(
    server: Server,
    query: str,
    *,
    project: str | None,
    scene: str | None,
    category: str | None,
    limit: int,
    source: str,
) -> dict[str, Any]:
    from memory_layer.api import Scope, clean_scene

    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise ToolError(f"limit must be a whole number from 1 to {MAX_LIMIT}, got {limit!r}.")
    config = load_config()
    project = server.project_for(project)
    scene = clean_scene(scene) or server.scene
    scope = dataclasses.replace(
        Scope.for_project(project, category=category), scenes=(scene,) if scene else None
    )
    with server.lock:
        results = api.recall(
            server.conn,
            api.check_query(query, limit=limit, category=category),
            config=config,
            scope=scope,
            audience=api.AGENT,
            # One MCP connection is one session; its id names the client.
            surfaced_as="mcp_search",
            session_id=f"{source}#{server.session_id}",
            limit=limit,
            embedder=server.embedder(config),
        )
    return {
        "project": project,
        "scene": scene,
        "results": [
            {**_public(item.memory, config), "score": round(item.score, 4)} for item in results
        ],
    }


def read(server: Server, memory_id: str) -> dict[str, Any]:
    from memory_layer.api import agent_provenance, agent_record, history

    config = load_config()
    with server.lock:
        # A withheld record is refused like an unknown id: no subject, key or reason.
        memory = agent_record(server.conn, memory_id, config)
        ops = history(server.conn, memory.id)
    info = _public(memory, config)
    info["created_at"] = memory.created_at
    # When a person approved it; a hook's own stamp is no approval to an agent.
    info["approved_at"] = memory.extra.get("approved_at") if info["reviewed"] else None
    # Who did what and when, never the values: operations hold pending and rejected text.
    info["provenance"] = agent_provenance(ops, config, withheld=False)
    return info


def check(
    server: Server,
    text: str,
    *,
    category: str,
    project: str | None,
    subject: str | None,
    key: str | None,
    reason: str | None,
    tags: list[str] | None,
) -> dict[str, Any]:
    from memory_layer.api import check_draft

    config = load_config()
    with server.lock:
        return check_draft(
            server.conn,
            text,
            config=config,
            category=category,
            project=server.project_for(project),
            subject=subject,
            key=key,
            reason=reason,
            tags=tags,
            embedder=server.embedder(config),
        )


def propose(
    server: Server,
    text: str,
    *,
    source: str,
    category: str | None,
    project: str | None,
    is_global: bool,
    scene: str | None,
    subject: str | None,
    key: str | None,
    memory_id: str | None,
    reason: str | None,
    tags: list[str] | None,
    thread: str | None = None,
    position: int | None = None,
) -> dict[str, Any]:
    from memory_layer.api import clean_field

    if memory_id:
        _refuse_new_record_fields(
            category=category,
            project=project,
            is_global=is_global,
            subject=subject,
            key=key,
            tags=tags,
            thread=thread is not None,
            position=position is not None,
        )
    place = Place.parse(thread, position)
    config = load_config()
    with server.lock:
        done = api.remember(
            server.conn,
            text,
            config=config,
            source=source,
            category=category or "general",
            project=None if is_global else server.project_for(clean_field(project)),
            # A change proposes a new scene only when the agent asks for one; the
            # server's declared scene says where the agent works, not where the record
            # belongs.
            scene=scene if memory_id else scene or server.scene,
            subject=subject,
            key=key,
            change_of=memory_id,
            reason=reason,
            tags=tags,
            embedder=server.embedder(config),
            place=place,
        )
    answer: dict[str, Any] = {
        "status": "pending" if done.outcome == "change" else done.memory.status,
        "item_id": done.item_id,
        "kind": done.outcome,
        "memory_id": done.memory.id,
        "created": done.created,
        "note": done.note,
    }
    if done.outcome == "new":
        answer["redacted"] = done.redacted
    return answer


def _refuse_new_record_fields(**given: Any) -> None:
    """A change proposal carries a new text (and optionally a scene); the other fields
    describe a new record. Silently dropping them would let an agent believe it had
    proposed them."""
    named = sorted(name for name, value in given.items() if value)
    if named:
        raise ToolError(
            "With memory_id, propose takes only text, reason and scene (a change to that "
            f"record); leave out {', '.join(named)}. To record something else, propose "
            "without memory_id."
        )


def report_outcome(
    server: Server,
    *,
    worked: bool,
    memory_id: str | None,
    task_id: str | None,
    source: str,
) -> dict[str, Any]:
    config = load_config()
    with server.lock:
        result = api.report_outcome(
            server.conn,
            worked=worked,
            source=source,
            config=config,
            memory_id=memory_id,
            task_id=task_id,
            project=server.project_for(None) if task_id else None,
        )
    if hasattr(result, "to_dict"):
        result = result.to_dict()
    return {"recorded": True, "worked": worked, "result": result}


def dispute(server: Server, memory_id: str, *, reason: str, source: str) -> dict[str, Any]:
    with server.lock:
        memory = api.dispute(server.conn, memory_id, actor=source, reason=reason)
    return {"id": memory.id, "status": memory.status, "note": "A person will review it."}


def build(
    *, project: str | None = None, scene: str | None = None, client: str | None = None
) -> MCPServer:
    """The MCP application with its tools bound to one store connection."""
    server = Server(project=project, scene=scene, client=client)
    app = MCPServer("memory-layer", version=__version__, instructions=INSTRUCTIONS)

    def guarded(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            # Every result as inert data for the model (no escapes, invisible characters, tags).
            return api.model_data(fn(server, *args, **kwargs))
        except MemoryLayerError as exc:
            # A problem the agent can fix (bad id, empty text...): say how.
            raise ToolError(api.model_text(agent_message(exc, kwargs))) from None

    _reading_tools(app, server, guarded)
    _writing_tools(app, server, guarded)
    return app


def _reading_tools(app: MCPServer, server: Server, guarded: Any) -> None:
    """search, read, check: what an agent may learn from the store."""

    @app.tool(name="search")
    def search_tool(
        query: str,
        ctx: Context,
        project: str | None = None,
        scene: str | None = None,
        category: str | None = None,
        limit: int = 8,
    ) -> dict[str, Any]:
        """Find memories for a query, best first (same ranking as `memory-layer recall`).

        Covers the project (default: the server's working directory's project) plus
        global memories, and the declared scene plus scene-less memories. Unreviewed,
        rejected, retired, disputed, edited or sinking records are never returned;
        overdue ones neither, unless the user set trust.overdue to flag (then they come
        with an "overdue" flag). Conflict candidates may come marked CONFLICT.
        """
        return guarded(
            search,
            query,
            project=project,
            scene=scene,
            category=category,
            limit=limit,
            source=server.source(ctx),
        )

    @app.tool(name="read")
    def read_tool(memory_id: str) -> dict[str, Any]:
        """One record with its status, review date and provenance (who wrote, approved,
        changed it). A record withheld from agents is refused exactly like an unknown id."""
        return guarded(read, memory_id=memory_id)

    @app.tool(name="check")
    def check_tool(
        text: str,
        category: str = "general",
        project: str | None = None,
        subject: str | None = None,
        key: str | None = None,
        reason: str | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        """Check a draft memory before proposing it: vague, duplicate of an existing
        record, conflicting with one (same subject/key, other value), or holding a secret
        (in the text, subject, key, reason or tags)."""
        return guarded(
            check,
            text,
            category=category,
            project=project,
            subject=subject,
            key=key,
            reason=reason,
            tags=tags,
        )


def _writing_tools(app: MCPServer, server: Server, guarded: Any) -> None:
    """propose, report_outcome, dispute: all an agent may change, and only for review."""

    @app.tool(name="propose")
    def propose_tool(
        text: str,
        ctx: Context,
        category: str | None = None,
        project: str | None = None,
        is_global: bool = False,
        scene: str | None = None,
        subject: str | None = None,
        key: str | None = None,
        memory_id: str | None = None,
        reason: str | None = None,
        tags: list[str] | None = None,
        thread: str | None = None,
        position: int | None = None,
    ) -> dict[str, Any]:
        """Propose a new memory, or (with memory_id) a new text for an existing one.

        It goes to the review inbox as pending; agents see it only once a person
        accepts it. subject + key make it a structured fact whose value is the text
        (e.g. subject "prod-server", key "os", text "ubuntu 22.04"). thread (a
        conversation's id) + position (its turn number; left out: after the last) make
        it a turn of that conversation (of this project): search lets a turn inherit
        part of the relevance of the turn before it; a position already taken queues it
        after the thread's last turn for the reviewer to place. category defaults to
        general. With memory_id only text,
        reason and scene apply."""
        return guarded(
            propose,
            text,
            source=server.source(ctx),
            category=category,
            project=project,
            is_global=is_global,
            scene=scene,
            subject=subject,
            key=key,
            memory_id=memory_id,
            reason=reason,
            tags=tags,
            thread=thread,
            position=position,
        )

    @app.tool(name="report_outcome")
    def report_outcome_tool(
        worked: bool, ctx: Context, memory_id: str | None = None, task_id: str | None = None
    ) -> dict[str, Any]:
        """Report that a memory you used (memory_id) or a task (task_id) worked or failed.
        Memories that keep working rank higher; ones that fail sink."""
        return guarded(
            report_outcome,
            worked=worked,
            memory_id=memory_id,
            task_id=task_id,
            source=server.source(ctx),
        )

    @app.tool(name="dispute")
    def dispute_tool(memory_id: str, reason: str, ctx: Context) -> dict[str, Any]:
        """Say a record is wrong, and why. It is withheld from every agent until a person
        reviews it (it is not deleted)."""
        return guarded(dispute, memory_id=memory_id, reason=reason, source=server.source(ctx))


def run(*, project: str | None = None, scene: str | None = None, client: str | None = None) -> None:
    scene = scene or os.environ.get("MEMORY_LAYER_SCENE") or None
    build(project=project, scene=scene, client=client).run("stdio")
