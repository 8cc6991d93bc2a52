"""The user's own words that arrive inside tool results.

Two tool results in a Claude Code transcript carry what the user typed, not what a
tool returned: a rejected tool call with the reason the user gave ("The user doesn't
want to proceed with this tool use. … The user provided the following reason for the
rejection: use docker, you are on Windows"), and the answers to the built-in
``AskUserQuestion`` tool (``toolUseResult.answers``). Corrections and decisions are
stated there, so capture reads them as the user's prompts, with the user's rules.

Only those exact shapes count, because everything else in a tool result is third-party
text and may be planted. A rejection is recognised by Claude Code's own fixed sentence
at the very start of an error result that Claude Code wrote: the call went to a
built-in tool in ``REJECTABLE`` (an MCP server writes its own error text, so it could
forge the sentence), the result is a plain string and ``toolUseResult`` is Claude Code's "Error: …" copy of
it. A built-in tool's own errors begin with Claude Code's prefixes ("Exit code 1",
"<tool_use_error>", "File does not exist"), never with text a command printed. Answers
come only from ``toolUseResult.answers`` of a call the assistant made to
``AskUserQuestion``. Both still pass relay detection: an option label the assistant
worded from a fetched page is not the user's idea because the user clicked it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory_layer.capture.transcript import Entry, ToolOutput, ToolResult

__all__ = ["ASK_TOOL", "REJECTABLE", "user_words"]

ASK_TOOL = "AskUserQuestion"
_REJECTED = "The user doesn't want to proceed with this tool use."
_REASON = re.compile(
    r"(?:The user provided the following reason for the rejection:|"
    r"To tell you how to proceed, the user said:)\s*(?P<said>\S.*)",
    re.DOTALL,
)
# What Claude Code writes in the user's place when they chose "clarify" instead of typing.
_BOILERPLATE = ("The user wants to clarify these questions.",)


# Built-in tools whose error results Claude Code itself writes (a file's or a page's
# words arrive only in successful results). Not MCP tools (the server writes its error
# text) and not Task/Agent (a subagent's words are model output): an allowlist, so a
# tool added later is not trusted by default.
REJECTABLE = frozenset(
    """AskUserQuestion Bash Edit ExitPlanMode Glob Grep MultiEdit NotebookEdit Read
    WebFetch WebSearch Write""".split()
)


def _rejection_reason(result: ToolResult, output: ToolOutput | None, tool: str) -> str:
    text = result.relay_text
    if not (tool in REJECTABLE and result.is_error):
        return ""
    if not (text.startswith(_REJECTED) and result.plain):
        return ""
    if output is None or output.full_parts != ("Error: " + text,):
        return ""  # not Claude Code's own record of the rejection
    found = _REASON.search(text)
    said = found.group("said").strip() if found else ""
    return "" if said.startswith(_BOILERPLATE) else said


def user_words(entry: Entry, tool_names: Mapping[str, str]) -> dict[str, list[str]]:
    """What the user typed inside ``entry``'s tool results, by tool_use id
    (``tool_names``: tool_use id to the tool's name, from the assistant lines before)."""
    said: dict[str, list[str]] = {}
    output = entry.tool_output
    for result in entry.tool_results:
        tool = tool_names.get(result.tool_use_id, "")
        reason = _rejection_reason(result, output, tool)
        if reason:
            said[result.tool_use_id] = [reason]
        elif tool == ASK_TOOL and not result.is_error and output is not None and output.answers:
            said[result.tool_use_id] = list(output.answers)
    return said
