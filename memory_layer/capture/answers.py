"""The user's own words that arrive inside tool results.

Two tool results in a Claude Code transcript carry what the user typed, not what a
tool returned: a rejected tool call with the reason the user gave ("The user doesn't
want to proceed with this tool use. … The user provided the following reason for the
rejection: use docker, you are on Windows"), and the answers to the built-in
``AskUserQuestion`` tool (``toolUseResult.answers``). Corrections and decisions are
stated there, so capture reads them as the user's prompts, with the user's rules.

Only those exact shapes count. A rejection is recognised by Claude Code's own fixed
sentence at the very start of an error result, which a command's output does not
begin with; answers only from the result of a call the assistant made to
``AskUserQuestion``. Everything else in a tool result stays third-party text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory_layer.capture.transcript import Entry

__all__ = ["ASK_TOOL", "user_words"]

ASK_TOOL = "AskUserQuestion"
_REJECTED = "The user doesn't want to proceed with this tool use."
_REASON = re.compile(
    r"(?:The user provided the following reason for the rejection:|"
    r"To tell you how to proceed, the user said:)\s*(?P<said>\S.*)",
    re.DOTALL,
)
# What Claude Code writes in the user's place when they chose "clarify" instead of typing.
_BOILERPLATE = ("The user wants to clarify these questions.",)


def _rejection_reason(text: str) -> str:
    if not text.startswith(_REJECTED):
        return ""
    found = _REASON.search(text)
    said = found.group("said").strip() if found else ""
    return "" if said.startswith(_BOILERPLATE) else said


def user_words(entry: Entry, tool_names: Mapping[str, str]) -> list[str]:
    """What the user typed inside ``entry``'s tool results (``tool_names``: tool_use id
    to the tool's name, from the assistant lines before it)."""
    said: list[str] = []
    for result in entry.tool_results:
        if result.is_error:
            reason = _rejection_reason(result.relay_text)
            if reason:
                said.append(reason)
        elif tool_names.get(result.tool_use_id) == ASK_TOOL and entry.tool_output is not None:
            said.extend(entry.tool_output.answers)
    return said
