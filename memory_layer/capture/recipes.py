"""The project's commands as the assistant states them in its summaries.

A closing summary often ends with how to use what was built: "Deploy: `cd contracts &&
npx hardhat run scripts/deploy.js --network polkadotTestnet`" or "`npm run dev` to test
locally (loads `.env`)". That is the build/test/deploy command a later session needs,
stated once, in prose. Kept only when the span reads as a command line
(``is_shell_command``) and what it is for is one of the project's standing tasks (run,
build, test, deploy …): "`git add -A` to stage everything" is a step, not a recipe.
"""

from __future__ import annotations

import re

from memory_layer.capture.candidate import Candidate
from memory_layer.capture.commands import (
    command_key,
    is_trivial,
    normalise_command,
    one_off_command,
    strip_tail,
)
from memory_layer.capture.guards import finish
from memory_layer.capture.instruction_kinds import is_shell_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from memory_layer.capture.signals import ToolEvent

__all__ = ["contradicted", "same_command", "stated_command", "stated_keys"]

_TASK = (
    r"(?:run|build|test|deploy|start|serve|lint|type-?check|format|compile|package|bundle|"
    r"release|publish|migrate|seed|develop|dev|preview|install)"
)
# Room for the words around the command: a task label ("To run the tests locally"), a
# note after it ("(loads `.env`)", "— runs the 66 tests"). A longer span is a sentence
# about something else that happens to hold a command.
LABEL_CHARS = 40
NOTE_CHARS = 80
# "Deploy: `…`", "To run the tests: `…`", "Run locally with `…`".
_LABEL_FIRST = re.compile(
    r"^(?:to\s+)?(?P<task>" + _TASK + rf")\b[\w ,/-]{{0,{LABEL_CHARS}}}?(?::|\bwith|\busing)\s*"
    rf"`(?P<cmd>[^`]+)`\s*(?:\([^)]{{0,{NOTE_CHARS}}}\))?\s*\.?$",
    re.IGNORECASE,
)
# "`npm run dev` to test locally (loads `.env`)", "`cargo test` — runs the 66 tests".
_COMMAND_FIRST = re.compile(
    r"^`(?P<cmd>[^`]+)`\s*(?:to|[—–:-])\s*(?:\w+\s+){0,2}?(?P<task>" + _TASK + r")\w*\b"
    rf"[^`]{{0,{NOTE_CHARS}}}(?:`[^`]+`[^`]{{0,{LABEL_CHARS}}})?$",
    re.IGNORECASE,
)
# Steps of this one session, not the project's commands.
_ONE_OFF = re.compile(r"^(?:git|cd|echo|cat|ls|rm|mv|cp|sudo|export|source)\b", re.IGNORECASE)


def stated_command(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    m = _LABEL_FIRST.match(s.strip()) or _COMMAND_FIRST.match(s.strip())
    if not m:
        return None, 0
    command = m.group("cmd").strip()
    # The filters of the commands observed (signals.command_candidates): "cd contracts &&
    # npx hardhat …" is judged by what runs after the cd, "npm run build 2>&1 | tail -20"
    # by "npm run build", and one test or a throwaway image is no project command.
    cmd = normalise_command(command)
    if not is_shell_command(command) or is_trivial(cmd) or _ONE_OFF.match(cmd):
        return None, 0
    if one_off_command(cmd):
        return None, 0
    shown = strip_tail(command)
    text = finish(s.strip().replace(f"`{command}`", f"`{shown}`", 1))
    if not text:
        return None, 0
    return Candidate(text, "command", 0.6, "recipe.stated", s), 0


def _stated_key(evidence: str) -> str:
    m = _LABEL_FIRST.match(evidence.strip()) or _COMMAND_FIRST.match(evidence.strip())
    return command_key(normalise_command(m.group("cmd"))) if m else ""


def stated_keys(candidates: list[Candidate]) -> frozenset[str]:
    """The ``command_key`` of every command stated in ``candidates``."""
    return frozenset(_stated_key(c.evidence) for c in candidates if c.extractor == "recipe.stated")


def same_command(keys: frozenset[str]) -> Callable[[str], bool]:
    """Whether a command run is one of ``keys`` (``signals.events_from_entries``' filter)."""
    return lambda command: command_key(normalise_command(command)) in keys


def contradicted(candidates: list[Candidate], events: list[ToolEvent]) -> list[Candidate]:
    """The candidates without the stated commands this session's output contradicts:
    "Type-check with `bun run typecheck`" after that command's output said `error: Script
    not found "typecheck"` (issue 12) is a claim, not the project's command. The last run
    of the same command (``command_key``) decides, the failure read from the output as
    ``signals.events_from_entries`` reads it (through pipes and ``|| true``)."""
    last: dict[str, bool] = {}
    for ev in events:
        if ev.is_shell and ev.command:
            last[command_key(normalise_command(ev.command))] = ev.ok
    return [
        c
        for c in candidates
        if c.extractor != "recipe.stated" or last.get(_stated_key(c.evidence), True)
    ]
