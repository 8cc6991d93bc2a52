"""Cheap signals from tool events: what failed, what fixed it, what commands work.

The hook layer keeps a small per-session log of ``ToolEvent`` values (one per
Bash/Edit/Write call, persisted with ``to_dict``/``from_dict``) and calls

* ``troubleshooting_candidates``: a command failed, later a similar command
  (same program and subcommand, or same target file) succeeded; the memory
  names the most informative error line and what happened in between
  (installs, other commands, edited files);
* ``command_candidates``: successful build/test/lint/format/typecheck
  commands, normalised, one per tool, never trivial ones like ``ls``.

No LLM, no store: a few string operations per event, cheap enough for a hook.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from memory_layer.capture.candidate import TOOL_OUTPUT, Candidate, dedupe
from memory_layer.capture.commands import (
    command_key,
    command_kind,
    is_trivial,
    normalise_command,
    one_off_command,
    similar,
)
from memory_layer.capture.privacy import clean
from memory_layer.frozen import Frozen
from memory_layer.lazyre import LazyPattern

TYPE_CHECKING = False  # no typing import at run time (~3 ms on the hook path)
if TYPE_CHECKING:  # annotations only: the PostToolUse hook never reads a transcript
    from collections.abc import Callable
    from typing import Any

    from memory_layer.capture.transcript import Entry, ToolUse

__all__ = [
    "ToolEvent",
    "command_candidates",
    "error_line",
    "event_from_hook",
    "events_from_entries",
    "signal_candidates",
    "troubleshooting_candidates",
]

SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
# How far after a failure we look for the similar command that succeeded.
WINDOW = 40
MAX_SNIPPET = 2_000


class ToolEvent(Frozen):
    """One tool call, reduced to what the signals need.

    ``ok`` is False for a failed call (PostToolUseFailure, ``is_error``
    results, interrupted commands).  ``error`` holds the failure text and
    ``output`` a stdout/stderr snippet; both are cleaned and truncated by the
    constructors below, so the event log never holds secrets.
    """

    tool: str
    command: str = ""
    ok: bool = True
    error: str = ""
    output: str = ""
    file_path: str = ""
    ts: str = ""

    def to_dict(self) -> dict[str, Any]:
        return self.as_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolEvent:
        """Inverse of ``to_dict``; tolerant of missing or mistyped fields."""

        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        return cls(
            tool=text("tool"),
            command=text("command"),
            ok=data.get("ok") is not False,
            error=text("error"),
            output=text("output"),
            file_path=text("file_path"),
            ts=text("ts"),
        )

    @property
    def is_shell(self) -> bool:
        return self.tool in SHELL_TOOLS and bool(self.command)

    @property
    def is_edit(self) -> bool:
        return self.tool in EDIT_TOOLS and bool(self.file_path)


def _snippet(text: str) -> str:
    """Clean and bound a tool output; keep head and tail, where errors usually are."""
    text = clean(text)
    if len(text) <= MAX_SNIPPET:
        return text
    half = MAX_SNIPPET // 2
    return f"{text[:half]}\n…\n{text[-half:]}"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _file_path(tool_input: Mapping[str, Any]) -> str:
    return _str(tool_input.get("file_path")) or _str(tool_input.get("notebook_path"))


def event_from_hook(
    tool_name: str,
    tool_input: Mapping[str, Any] | None,
    tool_response: Any = None,
    error: str | None = None,
    ts: str = "",
) -> ToolEvent:
    """Build an event from PostToolUse / PostToolUseFailure payload fields.

    Pass ``error`` for PostToolUseFailure (it starts with ``Exit code N``).
    A Bash ``tool_response`` is ``{stdout, stderr, interrupted, …}``.
    """
    tool_input = tool_input or {}
    response = tool_response if isinstance(tool_response, Mapping) else {}
    output = "\n".join(
        part for part in (_str(response.get("stdout")), _str(response.get("stderr"))) if part
    )
    if isinstance(tool_response, str):
        output = tool_response
    interrupted = response.get("interrupted") is True
    command = clean(_str(tool_input.get("command")))
    ok = error is None and not interrupted
    if ok and tool_name in SHELL_TOOLS and output_failure(command, output):
        ok, error = False, output  # a success status masked by a pipe, `|| true` or `; echo`
    return ToolEvent(
        tool=tool_name,
        command=command,
        ok=ok,
        error=_snippet(error or ""),
        output=_snippet(output),
        file_path=_file_path(tool_input) or _str(response.get("filePath")),
        ts=ts,
    )


def events_from_entries(
    entries: Iterable[Entry], only: Callable[[str], bool] | None = None
) -> list[ToolEvent]:
    """Pair transcript ``tool_use`` blocks with their results, in result order.

    Sidechain (subagent) calls are skipped: their failures and fixes belong
    to the subagent's own transcript. ``only``: keep the calls whose command it accepts
    (reading a failure from the output is most of the cost).
    """
    pending: dict[str, ToolUse] = {}
    events: list[ToolEvent] = []
    for entry in entries:
        if entry.is_sidechain:
            continue
        for use in entry.tool_uses:
            pending[use.id] = use
        for result in entry.tool_results:
            use = pending.pop(result.tool_use_id, None)
            if use is None:
                continue
            out = entry.tool_output
            output = result.text
            if out is not None and (out.stdout or out.stderr):
                output = "\n".join(p for p in (out.stdout, out.stderr) if p)
            failed = result.is_error or (out is not None and out.interrupted)
            command = clean(_str(use.input.get("command")))
            if only is not None and not only(command):
                continue
            if not failed and use.name in SHELL_TOOLS and output_failure(command, output):
                failed = True  # a success status masked by a pipe, `|| true` or `; echo`
            events.append(
                ToolEvent(
                    tool=use.name,
                    command=command,
                    ok=not failed,
                    error=_snippet(result.text or output) if failed else "",
                    output=_snippet(output),
                    file_path=_file_path(use.input) or (out.file_path if out else ""),
                    ts=entry.timestamp,
                )
            )
    return events


# --- error lines ------------------------------------------------------------

_ANSI = LazyPattern(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\[[0-9;]{1,8}m")
# A line that says the command itself failed, whatever the exit status says.  Anchored
# at the line start: an output that merely mentions "error" in a sentence is no failure.
_FAILED_OUTPUT = LazyPattern(
    r"^\s*(?:error(?:\[E?\d+\])?:\s|fatal:\s|npm (?:ERR!|error)\s|Traceback \(most recent|"
    r"[A-Z][A-Za-z]*(?:Error|Exception):\s|panic:\s|FAILED\b|FAIL\s+\S|"
    r"ERROR[:\s]|E\s{2,}\S|Could not (?:locate|find|resolve|open|load)\b|"
    r"(?:\S+: )?command not found|.*\b[1-9]\d* (?:failed|errors?)(?:,|\s+in\b|$))",
    re.MULTILINE,
)
# Programs whose output is someone else's text (a file, a log, a diff): an "error:" line
# there is content, not this command failing.
_READERS = frozenset(
    """cat head tail less more grep rg ag sed awk jq yq diff find ls echo printf wc sort
    uniq tree strings xxd od""".split()
)


def output_failure(command: str, output: str) -> bool:
    """Whether a shell call's output shows it failed although its status said success.

    ``cmd | tail -20``, ``cmd || true`` and ``cmd; echo done`` report the status of the
    last stage, so ``bun run typecheck | head`` "succeeds" with ``error: Script not
    found``.  Commands that only print other text (``cat``, ``grep``, ``git log``) are
    never judged by what they print.
    """
    if not output or not command or is_trivial(command):
        return False
    program = command_key(command).split(" ", 1)[0]
    if program in _READERS:
        return False
    return bool(_FAILED_OUTPUT.search(_ANSI.sub("", output)))


_NOISE_LINE = LazyPattern(
    r"^\s*(?:exit code \d+|traceback \(most recent call last\)|file \"|during handling|"
    r"the above exception|npm err! (?:a complete log|code|errno|path|syscall|command failed)|"
    r"[=\-_*~#^ ]+$|for more information|short test summary info|\d+ (?:failed|error)|"
    r"error: command failed|make: \*\*\*|error: process completed|"
    r"error: could not compile|error: script|npm err! test failed|.*returned non-zero exit)",
    re.IGNORECASE,
)
_STRONG = LazyPattern(
    r"^(?:E\s+|npm ERR!\s+)?(?:[A-Za-z_][\w.]*(?:Error|Exception|Failure):"
    r"|error(?:\[E?\d+\])?:|fatal:|FAILED\s.+\s-\s|ERROR:|Error:|panic:|thread .+ panicked|"
    r"\S+:\d+(?::\d+)?:\s*(?:fatal )?error)",
)
_WEAK = LazyPattern(
    r"\b(?:error|cannot|can'?t|could not|not found|no such file|permission denied|denied|"
    r"undefined|unresolved|missing|refused|timed out|invalid|failed)\b",
    re.IGNORECASE,
)
_LINE_PREFIX = LazyPattern(r"^(?:E\s{2,}|npm ERR!\s+|>\s+)")


def error_line(text: str) -> str:
    """Pick the most informative line of an error output.

    A typed exception or compiler ``error:`` line beats a line that merely
    mentions an error, which beats anything else; generic wrappers ("Exit
    code 1", "make: *** Error 1", "could not compile") never win.  Ties go
    to the first, usually the root of a chain.
    """
    best, best_score = "", 0
    for raw in _ANSI.sub("", text).splitlines():
        line = raw.strip()
        if not line or len(line) < 4 or _NOISE_LINE.match(line):
            continue
        score = 3 if _STRONG.match(line) else 2 if _WEAK.search(line) else 1
        if score > best_score:
            best, best_score = line, score
    best = _LINE_PREFIX.sub("", best).strip()
    return best[:200]


# --- candidates -------------------------------------------------------------

# Files whose edits fix the environment rather than the program.
_CONFIG_FILE = LazyPattern(
    r"(?:^|/)(?:Dockerfile[^/]*|docker-compose[^/]*|compose\.ya?ml|Makefile|justfile|"
    r"\.env[^/]*|requirements[^/]*\.txt|package\.json|tsconfig[^/]*\.json|go\.mod|"
    r"Cargo\.toml|pyproject\.toml|setup\.(?:py|cfg)|tox\.ini|conftest\.py|"
    r"[^/]+\.(?:toml|ini|cfg|ya?ml|conf))$"
)


def _config_edited(between: list[ToolEvent]) -> bool:
    return any(ev.ok and ev.is_edit and _CONFIG_FILE.search(ev.file_path) for ev in between)


def _first_stage(command: str) -> str:
    return re.split(r"\s(?:\||\|\||&&|;)\s", normalise_command(command), maxsplit=1)[0].strip()


def _short(command: str, limit: int = 100) -> str:
    cmd = normalise_command(command).replace("`", "'")
    return cmd if len(cmd) <= limit else cmd[: limit - 1] + "…"


def _rel(path: str, cwd: str) -> str:
    if cwd and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
        except ValueError:
            return path
        if not rel.startswith(".."):
            return rel
    return path


def _fix_steps(between: list[ToolEvent], failed: ToolEvent, cwd: str) -> list[str]:
    steps: list[str] = []
    edited: list[str] = []
    for ev in between:
        if not ev.ok:
            continue
        if ev.is_edit:
            path = _rel(ev.file_path, cwd)
            if path not in edited:
                edited.append(path)
        elif ev.is_shell and not is_trivial(ev.command) and not similar(ev.command, failed.command):
            step = f"running `{_short(ev.command)}`"
            if step not in steps:
                steps.append(step)
    if edited:
        steps.append(
            "editing " + ", ".join(edited[:4]) + (" and others" if len(edited) > 4 else "")
        )
    return steps[:4]


def troubleshooting_candidates(
    events: Iterable[ToolEvent], cwd: str = "", new_from: int = 0
) -> list[Candidate]:
    """Failure → fix → success stories from a sequence of tool events.

    For each failed shell command, the next *similar* command decides: when it
    succeeded, or failed with a different error (the first error was fixed),
    and the chain eventually succeeds, the steps in between are the fix.  A
    retry with no steps in between and the same command is a flake, not a
    lesson, and is skipped.

    ``new_from`` is the index of the first event not seen by an earlier call:
    only stories whose closing success is at or after it are returned, so a
    hook can pass the whole persisted log each time without repeats.
    """
    evs = list(events)
    new_from = max(new_from, 0)
    found: list[Candidate] = []
    for i, failed in enumerate(evs):
        if failed.ok or not failed.is_shell or is_trivial(failed.command):
            continue  # a grep without matches or a failed ls teaches nothing
        if "interrupted by user" in failed.error:
            continue
        err = error_line(f"{failed.error}\n{failed.output}")
        if not err or not (_STRONG.match(err) or _WEAK.search(err)):
            continue  # "Running BeforeDevCommand" names no failure: no lesson to tell
        chain = [
            j
            for j in range(i + 1, min(len(evs), i + 1 + WINDOW))
            if evs[j].is_shell
            and not is_trivial(evs[j].command)
            and similar(evs[j].command, failed.command)
        ]
        if not chain:
            continue
        nxt = evs[chain[0]]
        closing = next((j for j in chain if evs[j].ok), None)
        if closing is None:
            continue  # never fixed within the window
        if closing < new_from:
            continue  # reported by an earlier call
        if not nxt.ok and error_line(f"{nxt.error}\n{nxt.output}") == err:
            continue  # the same error again: the steps between did not fix it
        steps = _fix_steps(evs[i + 1 : chain[0]], failed, cwd)
        edits_only = bool(steps) and all(step.startswith("editing ") for step in steps)
        if edits_only and not _config_edited(evs[i + 1 : chain[0]]):
            # Failing, editing source code and passing is the ordinary
            # development loop (a red test, a lint finding, a typo), not a
            # lesson.  Edits to build/config files are: they encode how the
            # project's environment works.
            continue
        if not steps:
            if _first_stage(nxt.command) == _first_stage(failed.command):
                continue  # the same command again, read through another pipe: no fix
            steps = [f"running `{_short(nxt.command)}` instead"]
        text = (
            f"`{_short(failed.command)}` failed with `{err.replace('`', chr(39))}`; "
            f"fixed by {' and '.join(steps)}."
        )
        evidence = "\n".join(
            [f"failed: {failed.command}", f"error: {err}"]
            + [f"then: {ev.command or ev.file_path}" for ev in evs[i + 1 : chain[0]]]
            + [f"{'succeeded' if nxt.ok else 'next'}: {nxt.command}"]
        )
        confidence = 0.5 if edits_only else 0.6
        # The error line is the tool's words, not the session's: whoever printed it
        # (a test, a script, a dependency) may have written it for the agent to obey.
        found.append(
            Candidate(
                text,
                "troubleshooting",
                confidence,
                "signals.fail_then_fix",
                evidence,
                nxt.ts,
                origin=TOOL_OUTPUT,
            )
        )
    return dedupe(found)


_TEMPLATES = {
    "test": "Run the tests with `{cmd}`.",
    "lint": "Lint with `{cmd}`.",
    "format": "Format code with `{cmd}`.",
    "typecheck": "Type-check with `{cmd}`.",
    "build": "Build with `{cmd}`.",
}


def command_candidates(events: Iterable[ToolEvent], new_from: int = 0) -> list[Candidate]:
    """One ``command`` memory per (tool, kind): the shortest successful form.

    Commands aimed at a single test (``::``, ``-k``), at source files
    (``pytest tests/test_api.py``, ``rubocop app/models/user.rb``) or chaining other
    commands (``…; git status --short``) are too specific to be the project's command
    and are skipped: otherwise every file the agent touched would become a memory.
    Events before ``new_from`` were handled by an earlier call and are ignored.
    """
    best: dict[tuple[str, str], str] = {}
    first_ts: dict[tuple[str, str], str] = {}
    for ev in list(events)[max(new_from, 0) :]:
        if not (ev.ok and ev.is_shell) or is_trivial(ev.command):
            continue
        cmd = normalise_command(ev.command)
        kind = command_kind(cmd)
        if not kind or one_off_command(cmd):
            continue  # one test, one-off file lists and compound tails are no project command
        slot = (command_key(cmd), kind)
        if slot not in best or len(cmd) < len(best[slot]):
            best[slot] = cmd
            first_ts[slot] = ev.ts
    found = []
    for slot, cmd in best.items():
        if len(cmd) > 200:
            continue
        text = _TEMPLATES[slot[1]].format(cmd=cmd.replace("`", "'"))
        found.append(
            Candidate(text, "command", 0.6, f"signals.command.{slot[1]}", cmd, first_ts[slot])
        )
    return found


def signal_candidates(
    events: Iterable[ToolEvent], cwd: str = "", new_from: int = 0
) -> list[Candidate]:
    """Troubleshooting and command candidates together (see both for ``new_from``)."""
    evs = list(events)
    return troubleshooting_candidates(evs, cwd, new_from) + command_candidates(evs, new_from)
