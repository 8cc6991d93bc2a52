"""Incremental, defensive reading of Claude Code transcript JSONL files.

A transcript (``~/.claude/projects/<project>/<session>.jsonl``) is appended to
while the session runs, can grow to hundreds of megabytes, and its format is
undocumented.  So this module:

* reads from a byte offset and returns the offset to resume from, consuming
  only *complete* lines: a line still being written is left for next time;
* streams in fixed-size chunks instead of loading the file;
* skips malformed lines, unknown block types and oversized lines instead of
  raising, because a capture hook must never break the session.

Only the conversational line types (``user``, ``assistant``, ``system``,
``summary``) become entries; bookkeeping lines such as
``file-history-snapshot`` and ``queue-operation`` carry nothing to remember
and are skipped (their bytes are still consumed).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Entry",
    "ToolOutput",
    "ToolResult",
    "ToolUse",
    "iter_entries",
    "parse_line",
    "read_new_entries",
]

CHUNK_SIZE = 64 * 1024
# A single line bigger than this (a giant tool output pasted inline) is skipped
# rather than buffered: nothing worth remembering needs 16 MiB of context.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Tool result text is truncated for the signal extractors: they need the gist (an
# error line), not the whole output. Relay detection needs all of it (a planted line
# can sit deep in a long file read), so each result also keeps its untruncated text
# (``relay_text``): the same string object the JSON line decoded, no copy, bounded by
# what one read takes (``hooks.transcript_max_bytes``).
MAX_RESULT_CHARS = 8_000

_ENTRY_TYPES = frozenset({"user", "assistant", "system", "summary"})


@dataclass(frozen=True)
class ToolUse:
    """A ``tool_use`` block in an assistant message."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class ToolResult:
    """A ``tool_result`` block in a user line, answering ``tool_use_id``."""

    tool_use_id: str
    text: str
    is_error: bool = False
    # The untruncated text (``text`` is cut at MAX_RESULT_CHARS), for relay detection.
    full_text: str = field(default="", compare=False, repr=False)
    # Whether the content was a plain string, as Claude Code writes its own messages
    # (a tool's output may be a list of blocks).
    plain: bool = True

    @property
    def relay_text(self) -> str:
        return self.full_text or self.text


@dataclass(frozen=True)
class ToolOutput:
    """The line-level ``toolUseResult`` (same shape as a hook's ``tool_response``).

    For Bash it holds stdout/stderr; for Edit/Write the file path.  When a tool
    fails Claude Code stores a plain string here (``"Error: Exit code 1…"``),
    which becomes ``error``.
    """

    stdout: str = ""
    stderr: str = ""
    interrupted: bool = False
    file_path: str = ""
    error: str = ""
    # stdout, stderr and error untruncated, for relay detection.
    full_parts: tuple[str, ...] = field(default=(), compare=False, repr=False)
    # AskUserQuestion's result: the user's answers, in the order asked.
    answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    """One conversational transcript line, parsed."""

    type: str  # user | assistant | system | summary
    role: str  # message role, or the line type when there is no message
    uuid: str = ""
    parent_uuid: str = ""
    timestamp: str = ""
    session_id: str = ""
    cwd: str = ""
    texts: tuple[str, ...] = ()
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    tool_output: ToolOutput | None = None
    # isMeta lines are injected by Claude Code (command caveats, skill bodies),
    # not typed by the user; sidechain lines belong to a subagent.
    is_meta: bool = False
    is_sidechain: bool = False
    # A user line that carries a tool's result.  Some lines hold the result as
    # a bare string in ``content`` with a sibling ``toolUseResult``, so this
    # flag, not the content shape, says "these are not the user's words".
    is_tool_result: bool = False
    # The user line Claude Code writes after compacting: the model's summary of the
    # conversation so far, not something the user typed.
    is_compact_summary: bool = False

    @property
    def text(self) -> str:
        return "\n".join(self.texts)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _result_text(content: Any) -> str:
    """A tool_result's content is a string or a list of text/image blocks (untruncated)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _tool_result(block: dict[str, Any]) -> ToolResult:
    text = _result_text(block.get("content"))
    return ToolResult(
        tool_use_id=_str(block.get("tool_use_id")),
        text=text[:MAX_RESULT_CHARS],
        is_error=block.get("is_error") is True,
        full_text=text if len(text) > MAX_RESULT_CHARS else "",
        plain=isinstance(block.get("content"), str),
    )


def _tool_output(raw: Any) -> ToolOutput | None:
    if isinstance(raw, str):
        return ToolOutput(error=raw[:MAX_RESULT_CHARS], full_parts=(raw,))
    if not isinstance(raw, dict):
        return None
    stdout, stderr = _str(raw.get("stdout")), _str(raw.get("stderr"))
    return ToolOutput(
        stdout=stdout[:MAX_RESULT_CHARS],
        stderr=stderr[:MAX_RESULT_CHARS],
        interrupted=raw.get("interrupted") is True,
        file_path=_str(raw.get("filePath")) or _str(raw.get("file_path")),
        full_parts=tuple(part for part in (stdout, stderr) if part),
        answers=_answers(raw.get("answers")),
    )


def _answers(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, dict):
        return ()
    return tuple(v.strip() for v in raw.values() if isinstance(v, str) and v.strip())


def parse_line(line: str | bytes) -> Entry | None:
    """Parse one JSONL line; ``None`` for malformed or uninteresting lines."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind not in _ENTRY_TYPES:
        return None
    common = {
        "type": kind,
        "uuid": _str(obj.get("uuid")),
        "parent_uuid": _str(obj.get("parentUuid")),
        "timestamp": _str(obj.get("timestamp")),
        "session_id": _str(obj.get("sessionId")),
        "cwd": _str(obj.get("cwd")),
        "is_meta": obj.get("isMeta") is True,
        "is_sidechain": obj.get("isSidechain") is True,
    }
    if kind == "summary":
        summary = _str(obj.get("summary"))
        return Entry(role="summary", texts=(summary,) if summary else (), **common)
    if kind == "system":
        content = _str(obj.get("content"))
        return Entry(role="system", texts=(content,) if content else (), **common)

    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    role = _str(message.get("role")) or kind
    content = message.get("content")
    texts: list[str] = []
    uses: list[ToolUse] = []
    results: list[ToolResult] = []
    if isinstance(content, str):
        if content:
            texts.append(content)
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text" and _str(block.get("text")):
                texts.append(block["text"])
            elif btype == "tool_use":
                raw_input = block.get("input")
                uses.append(
                    ToolUse(
                        id=_str(block.get("id")),
                        name=_str(block.get("name")),
                        input=raw_input if isinstance(raw_input, dict) else {},
                    )
                )
            elif btype == "tool_result":
                results.append(_tool_result(block))
            # thinking, image, document, …: nothing to capture
    return Entry(
        role=role,
        texts=tuple(texts),
        tool_uses=tuple(uses),
        tool_results=tuple(results),
        tool_output=_tool_output(obj.get("toolUseResult")),
        is_tool_result=bool(results) or "toolUseResult" in obj,
        is_compact_summary=obj.get("isCompactSummary") is True,
        **common,
    )


def _start_offset(f: Any, offset: int, size: int) -> int:
    """Validate ``offset``: restart on truncation, realign if mid-line."""
    if offset <= 0:
        return 0
    if offset > size:
        # The file shrank (rewritten or replaced): the old offset is
        # meaningless, so read it again from the start.
        return 0
    f.seek(offset - 1)
    if f.read(1) == b"\n":
        return offset
    # The caller's offset is inside a line (it did not come from us).  Skip
    # to the next line start instead of parsing half a JSON object.
    f.seek(offset)
    pos = offset
    while chunk := f.read(CHUNK_SIZE):
        nl = chunk.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(chunk)
    return pos


def _scan(
    path: str | os.PathLike[str], offset: int, max_bytes: int | None
) -> Iterator[tuple[Entry | None, int]]:
    """Yield ``(entry or None, offset after the line)`` for every complete line.

    The first item is ``(None, start)`` so callers learn where reading began
    (the offset may have been reset or realigned).  ``None`` entries are
    blank, malformed, oversized or uninteresting lines: still consumed.
    """
    try:
        f = open(path, "rb")
    except FileNotFoundError:
        return
    with f:
        size = os.fstat(f.fileno()).st_size
        pos = _start_offset(f, offset, size)
        begin = pos
        yield None, pos
        f.seek(pos)
        # bytearray: appending is amortised O(1), so a long line arriving in
        # many chunks is not copied quadratically.
        buf = bytearray()
        oversized = False
        while chunk := f.read(CHUNK_SIZE):
            buf += chunk
            start = 0
            while (nl := buf.find(b"\n", start)) >= 0:
                raw = bytes(buf[start:nl])
                start = nl + 1
                line_end = pos + start
                if oversized:
                    oversized = False
                    yield None, line_end
                else:
                    yield (parse_line(raw) if raw.strip() else None), line_end
                if max_bytes is not None and line_end - begin >= max_bytes:
                    return
            pos += start
            del buf[:start]
            if len(buf) > MAX_LINE_BYTES:
                pos += len(buf)
                buf.clear()
                oversized = True
        # Whatever remains in ``buf`` is a partially written line: not
        # consumed, so the next call starts at its first byte.


def iter_entries(
    path: str | os.PathLike[str], offset: int = 0, max_bytes: int | None = None
) -> Iterator[tuple[Entry, int]]:
    """Yield ``(entry, offset_after_its_line)`` for complete lines from ``offset``.

    Streams the file, so memory stays bounded however large it is.  Stops
    after the last complete line, or once at least ``max_bytes`` have been
    consumed so a hook can work through a huge backlog in bounded steps.
    A missing file yields nothing.
    """
    for entry, end in _scan(path, offset, max_bytes):
        if entry is not None:
            yield entry, end


def read_new_entries(
    path: str | os.PathLike[str], offset: int = 0, max_bytes: int | None = None
) -> tuple[list[Entry], int]:
    """Read entries appended since ``offset``; return them and the new offset.

    The new offset points just after the last complete line consumed
    (skipped malformed lines included), so calling again with it never
    returns an entry twice and never loses a line that was half-written.
    A missing file returns ``([], offset)``.
    """
    entries: list[Entry] = []
    new_offset = offset
    for entry, end in _scan(path, offset, max_bytes):
        new_offset = end
        if entry is not None:
            entries.append(entry)
    return entries, new_offset
