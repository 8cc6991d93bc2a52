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
from memory_layer.capture.guards import finish
from memory_layer.capture.instruction_kinds import is_shell_command

__all__ = ["stated_command"]

_TASK = (
    r"(?:run|build|test|deploy|start|serve|lint|type-?check|format|compile|package|bundle|"
    r"release|publish|migrate|seed|develop|dev|preview|install)"
)
# "Deploy: `…`", "To run the tests: `…`", "Run locally with `…`".
_LABEL_FIRST = re.compile(
    r"^(?:to\s+)?(?P<task>" + _TASK + r")\b[\w ,/-]{0,40}?(?::|\bwith|\busing)\s*"
    r"`(?P<cmd>[^`]+)`\s*(?:\([^)]{0,80}\))?\s*\.?$",
    re.IGNORECASE,
)
# "`npm run dev` to test locally (loads `.env`)", "`cargo test` — runs the 66 tests".
_COMMAND_FIRST = re.compile(
    r"^`(?P<cmd>[^`]+)`\s*(?:to|[—–:-])\s*(?:\w+\s+){0,2}?(?P<task>" + _TASK + r")\w*\b"
    r"[^`]{0,80}(?:`[^`]+`[^`]{0,40})?$",
    re.IGNORECASE,
)
# Steps of this one session, not the project's commands.
_ONE_OFF = re.compile(r"^(?:git|cd|echo|cat|ls|rm|mv|cp|sudo|export|source)\b", re.IGNORECASE)


def stated_command(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i].strip()
    m = _LABEL_FIRST.match(s) or _COMMAND_FIRST.match(s)
    if not m:
        return None, 0
    command = m.group("cmd").strip()
    # "cd contracts && npx hardhat …": the command is what runs after the cd.
    last = command.split("&&")[-1].strip()
    if not is_shell_command(command) or _ONE_OFF.match(last):
        return None, 0
    text = finish(s)
    if not text:
        return None, 0
    return Candidate(text, "command", 0.6, "recipe.stated", s), 0
