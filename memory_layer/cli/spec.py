"""The options of `recall` and `remember`, declared once.

click builds the commands from this table (``memory_layer.cli.memories``), and the
fast path (``memory_layer.cli.fast``) parses the same table without importing click,
so the two can never disagree about what an option is called or takes. Cheap to
import: standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the CLI's fast path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FLAG = "flag"  # takes no value
TEXT = "text"
COUNT = "count"  # a whole number of at least 1
WHOLE = "whole"  # a whole number of at least 0
NUMBER = "number"  # a float
MANY = "many"  # a text option that may be repeated


@dataclass(frozen=True)
class Opt:
    names: tuple[str, ...]
    dest: str
    kind: str
    help: str
    default: Any = None

    @property
    def takes_value(self) -> bool:
        return self.kind != FLAG


SESSION_HELP = (
    "The Claude Code session this runs in (default: $MEMORY_LAYER_SESSION_ID, which the "
    "SessionStart hook sets): results an agent may see are recorded as surfaced there."
)

RECALL: tuple[Opt, ...] = (
    Opt(("-n", "--limit"), "limit", COUNT, "How many results (default 8)."),
    Opt(("-p", "--project"), "project", TEXT, "Project id (default: the current git project)."),
    Opt(("--all-projects",), "all_projects", FLAG, "Search every project.", False),
    Opt(("--no-global",), "no_global", FLAG, "Leave out global memories.", False),
    Opt(("-c", "--category"), "category", TEXT, "Only this category."),
    Opt(("--keyword-only",), "keyword_only", FLAG, "Skip the embedding model.", False),
    Opt(("--scene",), "scene", TEXT, "Only this scene plus memories without a scene."),
    Opt(("--explain",), "explain", FLAG, "Show every term, the boost and why.", False),
    Opt(
        ("--include-sinking",),
        "include_sinking",
        FLAG,
        "Also show memories at or below the outcome floor (withheld from injection).",
        False,
    ),
    Opt(
        ("--for-agent",),
        "for_agent",
        FLAG,
        "Only what an agent may receive (what hooks inject and MCP search returns).",
        False,
    ),
    Opt(("--session",), "session", TEXT, SESSION_HELP),
    Opt(("--json",), "as_json", FLAG, "Print JSON.", False),
)

REMEMBER: tuple[Opt, ...] = (
    Opt(("-c", "--category"), "category", TEXT, "", "general"),  # help: CATEGORY_HELP
    Opt(("-p", "--project"), "project", TEXT, "Project id (default: the current git project)."),
    Opt(("-g", "--global"), "is_global", FLAG, "Store for every project.", False),
    Opt(("-t", "--tag"), "tags", MANY, "A tag; repeat for more.", ()),
    Opt(("-s", "--source"), "source", TEXT, "Who is writing this.", "cli"),
    Opt(("--confidence",), "confidence", NUMBER, "0 to 1 (default: remember.default_confidence)."),
    Opt(("--scene",), "scene", TEXT, "Scene it belongs to (deploy, server_ops, coding...)."),
    Opt(("--subject",), "subject", TEXT, "Structured fact: what it is about (e.g. prod-server)."),
    Opt(("--key",), "key", TEXT, "Structured fact: which property (e.g. os); TEXT is the value."),
    Opt(
        ("--thread",),
        "thread",
        TEXT,
        "Conversation it is a turn of (a chat log's or session's id): recall lets a turn "
        "inherit part of the relevance of the turn before it.",
    ),
    Opt(
        ("--position",),
        "position",
        WHOLE,
        "Its turn number in --thread (default: after the thread's last memory).",
    ),
    Opt(("--json",), "as_json", FLAG, "Print JSON.", False),
)


# Pairs of options a command refuses together (the click commands check the same pairs).
CONFLICTS = (("project", "all_projects"), ("project", "is_global"))


class NotSimple(Exception):
    """The arguments need click (help, an error message, an unusual spelling)."""


def _value(opt: Opt, raw: str) -> Any:
    if opt.kind in (COUNT, WHOLE):
        if not (raw.isascii() and raw.isdigit()) or int(raw) < (1 if opt.kind == COUNT else 0):
            raise NotSimple(opt.dest)
        return int(raw)
    if opt.kind == NUMBER:
        try:
            return float(raw)
        except ValueError:
            raise NotSimple(opt.dest) from None
    return raw


def parse(spec: tuple[Opt, ...], args: list[str]) -> tuple[str, dict[str, Any]]:
    """The one positional argument and the options, as click would parse them; raises
    ``NotSimple`` for anything click should handle itself (``--help``, a missing or
    bad value, an unknown option, ``--``, several positional arguments)."""
    by_name = {name: opt for opt in spec for name in opt.names}
    values: dict[str, Any] = {opt.dest: opt.default for opt in spec}
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        opt = by_name.get(name)
        if opt is None or (eq and not opt.takes_value):
            raise NotSimple(arg)
        if not opt.takes_value:
            values[opt.dest] = True
            continue
        if not eq:
            if i >= len(args):
                raise NotSimple(arg)
            inline = args[i]
            i += 1
        value = _value(opt, inline)
        values[opt.dest] = (*values[opt.dest], value) if opt.kind == MANY else value
    if len(positional) != 1:
        raise NotSimple("positional")
    # Options that exclude each other: click's usage error (exit 2), engine or not.
    for first, second in CONFLICTS:
        if values.get(first) and values.get(second):
            raise NotSimple(f"{first} and {second}")
    return positional[0], values
