"""The `memory-layer` entry point: `recall` and `remember` through the warm engine.

Loading click, the config, git and the embedding model costs a CLI process over a
second; the warm engine (``memory-layer engine start``, and started by the hooks) has
them all loaded. So when an engine of this version is running, a plain `recall` or
`remember` is parsed here from the same option table click uses
(``memory_layer.cli.spec``), sent to the engine, and printed through the same
formatting (``memory_layer.cli.render``), with nothing slow imported. Everything else
(help, odd arguments, no engine, an engine that does not answer) goes to the full
click CLI, which answers in its own process as before. The CLI never starts an
engine itself: a script or CI job running one command must not leave a background
process behind; the hooks start it for sessions.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from memory_layer.cli import spec

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the fast path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Recall answers in milliseconds once the engine is warm; a write may wait for the
# engine's worker to finish a capture (the store's busy timeout is 5 s).
RECALL_TIMEOUT_S = 10.0
REMEMBER_TIMEOUT_S = 30.0
TIMEOUTS = {"recall": RECALL_TIMEOUT_S, "remember": REMEMBER_TIMEOUT_S}


def session_from(option: str | None) -> str | None:
    from memory_layer.requests import SESSION_ENV, clean_session

    return clean_session(option if option is not None else os.environ.get(SESSION_ENV))


def recall_request(query: str, values: dict[str, Any]) -> Any:
    from memory_layer.requests import RecallRequest

    return RecallRequest(
        query=query,
        limit=values["limit"],
        project=values["project"],
        cwd=os.getcwd(),
        all_projects=values["all_projects"],
        no_global=values["no_global"],
        category=values["category"],
        scene=values["scene"],
        keyword_only=values["keyword_only"],
        include_sinking=values["include_sinking"],
        audience="agent" if values["for_agent"] else "person",
        session_id=session_from(values["session"]),
    )


def remember_request(text: str, values: dict[str, Any]) -> Any:
    from memory_layer.requests import Place, RememberRequest

    return RememberRequest(
        text=text,
        category=values["category"],
        project=values["project"],
        cwd=os.getcwd(),
        is_global=values["is_global"],
        tags=tuple(values["tags"]),
        source=values["source"],
        confidence=values["confidence"],
        scene=values["scene"],
        subject=values["subject"],
        key=values["key"],
        place=Place.parse(values["thread"], values["position"]),
    )


def ask_engine(op: str, request: Any) -> dict[str, Any] | None:
    """The engine's reply to ``op``, or None when no engine of this version answers."""
    from memory_layer import __version__
    from memory_layer.engine.client import client_settings, exchange
    from memory_layer.engine.guard import UnsafeFiles

    try:
        settings = client_settings()
        if not settings or settings.get("version") != __version__:
            return None
        sent, reply = exchange({"op": op, "request": request.to_wire()}, TIMEOUTS[op])
    except UnsafeFiles as exc:
        # Nothing was sent: answered here, and the user hears why the engine was not used.
        print(f"Warning: not using the engine: {exc}", file=sys.stderr)
        return None
    if reply is not None and (reply.get("ok") or reply.get("refused")):
        return reply
    if sent and op == "remember":
        # The engine had the write and did not say how it went: doing it again here
        # would count one memory twice. Say so instead.
        return {
            "ok": False,
            "refused": True,
            "error": f"The warm engine took the memory but did not answer within "
            f"{REMEMBER_TIMEOUT_S:.0f} s, so it may be stored. Check with `memory-layer "
            "list` before trying again (`memory-layer engine status` shows the engine).",
        }
    return None  # gone, late or confused: the CLI answers a recall by itself


def show(op: str, reply: dict[str, Any], *, as_json: bool, explain: bool = False) -> int:
    """Print an engine reply as the in-process command would; returns the exit code."""
    from memory_layer.cli import render

    if reply.get("refused"):
        print(f"Error: {reply.get('error')}", file=sys.stderr)
        return 1
    for notice in reply.get("notices") or ():
        print(notice, file=sys.stderr)
    records = reply["records"]
    if op == "remember":
        record = records[0]
        for notice in render.remember_notices(record):
            print(notice, file=sys.stderr)
        print(render.as_json(record) if as_json else record["id"])
        return 0
    if as_json:
        print(render.as_json(records))
    elif not records:
        print("No matching memories.", file=sys.stderr)
    else:
        lines = render.recall_lines(records, explain=explain, common_share=reply.get("common_share"))
        print("\n".join(lines))
    return 0


@dataclass(frozen=True)
class Attempt:
    """What the fast path did: the exit code when the engine answered (None: the full
    CLI answers), whether the engine was asked, and stdin if it was read already."""

    code: int | None = None
    engine_asked: bool = False
    stdin_text: str | None = None


def fast(argv: list[str]) -> Attempt:
    from memory_layer.errors import MemoryLayerError

    if not argv or argv[0] not in ("recall", "remember"):
        return Attempt()
    op = argv[0]
    stdin_text = None
    try:
        positional, values = spec.parse(spec.RECALL if op == "recall" else spec.REMEMBER, argv[1:])
        if positional == "-" and op == "remember":
            positional = stdin_text = read_stdin()
        refuse_empty(op, positional)
        if op == "recall":
            request: Any = recall_request(positional, values)
        else:
            request = remember_request(positional, values)
    except spec.NotSimple:
        return Attempt(stdin_text=stdin_text)
    except MemoryLayerError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return Attempt(code=1)
    reply = ask_engine(op, request)
    if reply is None:
        return Attempt(engine_asked=True, stdin_text=stdin_text)
    code = show(op, reply, as_json=values["as_json"], explain=values.get("explain", False))
    return Attempt(code=code, engine_asked=True)


def refuse_empty(op: str, text: str) -> None:
    """An empty query or text is refused here, before the engine, the config or a model
    is asked (the same messages as the use cases give)."""
    from memory_layer import api

    if op == "recall":
        api.check_query(text)
    else:
        api.require_text(text)


def read_stdin() -> str:
    from memory_layer.errors import InvalidInput

    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"Standard input is not valid UTF-8 (byte {exc.start}). Re-encode it as UTF-8."
        ) from None


def main() -> None:
    argv = sys.argv[1:]
    try:
        attempt = fast(argv)
    except BrokenPipeError:
        # `memory-layer recall … | head`: the reader left; say nothing more.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    if attempt.code is not None:
        sys.exit(attempt.code)
    from memory_layer.cli import cli

    # What the fast path learnt travels on: the engine is not asked twice, and stdin
    # it read is not read again (it is gone).
    cli.main(
        args=argv,
        prog_name="memory-layer",
        obj={"engine_asked": attempt.engine_asked, "stdin_text": attempt.stdin_text},
    )
