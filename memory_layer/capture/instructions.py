"""Splitting agent-instruction files into atomic memories.

CLAUDE.md, AGENTS.md, ``.cursorrules``, ``.github/copilot-instructions.md`` and
CONTRIBUTING-style files are Markdown (or plain lists) written for people and agents:
headings name the area, bullets and numbered items state one rule or fact each,
paragraphs explain, and shell blocks hold commands with a comment saying what they do.
This module turns such a file into ``Instruction`` values, one rule, fact or command
each, with the heading path it sits under and a category among the 16.

Pure functions: no store, no I/O beyond the text given. The use case
(``memory_layer.api.instructions``) decides what is new, changed or gone.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memory_layer.capture.instruction_kinds import category_for, has_command, is_shell_command

__all__ = ["Instruction", "item_hash", "split_instructions"]

# An item longer than this is split at sentence ends: a memory is read in one glance.
MAX_ITEM_CHARS = 500
# Fewer words than this and an item needs its heading to make sense ("Edition: 2024").
CONTEXT_WORDS = 6
MIN_WORDS = 3
# A paragraph ending in ':' prefixes the list items after it when it is this short at most.
MAX_INTRO_WORDS = 15
MAX_STATEMENT_CHARS = 200
# A recipe block longer than this is cut: the first commands are the ones to remember.
MAX_RECIPE_COMMANDS = 6
SECTION_SEPARATOR = " / "

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_BOLD_LABEL = re.compile(r"^\s*\*\*([^*]+?)\*\*\s*:?\s*$")
_LINK_DEF = re.compile(r"^\s*\[[^\]]+\]:\s+\S+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CHECKBOX = re.compile(r"^\[[ xX]\]\s+")
_MARKERS = re.compile("[\u274c\u2705\u26a0\ufe0f\U0001f6ab\u2714\u2716\u2757]+\\s*")
_LINK = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")
# "`Term`: what it is" or "Term: what it is" (a term of at most three words).
_DEFINITION = re.compile(r"^(?:`[^`]+`|[\w./-]+(?: [\w./-]+){0,2}):\s")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
# Sections that describe the file itself, not the project.
_SKIP_SECTIONS = re.compile(r"^(?:table of contents|contents|toc|resources|links|license)$", re.I)
# The sentence every generated CLAUDE.md starts with, and its cousins.
_BOILERPLATE = re.compile(
    r"^(?:this (?:file|document|guide|doc)\b.*\b(?:provides?|contains?|describes?|"
    r"is (?:a|the|for))\b|here (?:is|are) (?:the|some)\b.*\bguidelines?\b|"
    r"this is (?:the|a) list\b|hi\b|hello\b|welcome\b|thanks? (?:you )?for\b)",
    re.I,
)
_SHELL_LANGS = frozenset({"", "bash", "sh", "shell", "console", "zsh", "powershell", "ps1", "cmd"})


@dataclass(frozen=True)
class Instruction:
    """One rule, fact or command of an instruction file, under ``section`` (its heading
    path, outermost first, joined by " / "; empty before the first heading)."""

    text: str
    category: str
    section: str
    line: int  # 1-based line of the file it starts on

    @property
    def key(self) -> str:
        return item_hash(self.text)


def item_hash(text: str) -> str:
    """What recognises an item again: its words, whatever the spacing or case."""
    norm = " ".join(re.sub(r"[^\w`./:-]+", " ", text.lower()).split())
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:32]


def _inline(text: str) -> str:
    """Markdown inline markup as plain text; code spans are kept (they carry commands)."""
    text = _MARKERS.sub("", text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = _CHECKBOX.sub("", text.strip())
    return " ".join(text.split()).strip()


def _words(text: str) -> int:
    return len(re.findall(r"[\w'-]+", text))


@dataclass
class _Block:
    """Text gathered so far for one item: a bullet with its continuation lines, or a
    paragraph."""

    lines: list[str]
    line: int
    indent: int = 0
    bullet: bool = False


@dataclass
class _State:
    headings: list[tuple[int, str]]
    label: str = ""  # a bold line standing alone: a small heading of its own
    intro: str = ""  # the last paragraph ending in ':' (what a list or a code block is)
    parent: str = ""  # a bullet ending in ':' whose children complete it

    def section(self) -> str:
        return SECTION_SEPARATOR.join(title for _, title in self.headings)

    def skipping(self) -> bool:
        return any(_SKIP_SECTIONS.match(title) for _, title in self.headings)


def split_instructions(text: str, filename: str = "") -> list[Instruction]:
    """Every rule, fact and command in ``text`` (Markdown or a plain list of rules),
    in file order. The same text always gives the same items."""
    lines = _body_lines(text)
    state = _State(headings=[])
    found: list[Instruction] = []
    block: _Block | None = None
    fence: tuple[str, str, list[str], int] | None = None

    def flush() -> None:
        nonlocal block
        if block is not None:
            _emit_block(block, state, found)
            block = None

    for number, raw in enumerate(lines, 1):
        if fence is not None:
            if raw.strip().startswith(fence[0]):
                _emit_code(fence[1], fence[2], fence[3], state, found)
                fence = None
            else:
                fence[2].append(raw)
            continue
        if opened := _FENCE.match(raw):
            flush()
            fence = (opened.group(1), opened.group(2).lower(), [], number)
            continue
        if heading := _heading(raw, lines, number):
            flush()
            _flush_long_intro(state, number, found)
            _enter_heading(state, *heading)
            continue
        if not raw.strip():
            flush()
            continue
        if _LINK_DEF.match(raw) or _TABLE_RULE.match(raw) or _SETEXT.match(raw.strip()):
            continue
        if label := _BOLD_LABEL.match(raw):
            flush()
            state.label = _inline(label.group(1)).rstrip(":").strip()
            state.intro = state.parent = ""
            continue
        if raw.lstrip().startswith("|"):
            flush()
            header = number < len(lines) and _TABLE_RULE.match(lines[number])
            if not header:
                _emit_row(raw, number, state, found)
            continue
        if bullet := _BULLET.match(raw):
            flush()
            block = _Block([bullet.group(2)], number, len(bullet.group(1)), True)
            continue
        if block is None:
            block = _Block([raw.strip()], number)
        else:
            block.lines.append(raw.strip())
    flush()
    return _unique(found)


def _body_lines(text: str) -> list[str]:
    """The file's lines without YAML front matter (Cursor's ``.mdc``) or HTML comments;
    line numbers stay those of the file (removed text keeps its newlines)."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text.replace("\r\n", "\n"))
    lines = text.split("\n")
    if lines and lines[0].strip() == "---":
        for end in range(1, min(len(lines), 40)):
            if lines[end].strip() == "---":
                return [""] * (end + 1) + lines[end + 1 :]
    return lines


def _heading(raw: str, lines: list[str], number: int) -> tuple[int, str] | None:
    if m := _HEADING.match(raw):
        return len(m.group(1)), _inline(m.group(2))
    # Setext: a text line underlined by === or --- (the underline is skipped later).
    following = lines[number] if number < len(lines) else ""
    if raw.strip() and not _BULLET.match(raw) and _SETEXT.match(following.strip()):
        if following.strip().startswith("=") or len(following.strip()) >= 3:
            return (1 if following.strip().startswith("=") else 2), _inline(raw)
    return None


def _enter_heading(state: _State, level: int, title: str) -> None:
    while state.headings and state.headings[-1][0] >= level:
        state.headings.pop()
    # The document's title (a lone level-1 heading first) names the file, not a section.
    if not (level == 1 and not state.headings and _is_title(title)):
        state.headings.append((level, title))
    state.label = state.intro = state.parent = ""


def _is_title(title: str) -> bool:
    return (
        bool(
            re.search(
                r"(?:claude|agents?|copilot|cursor|contributing|readme|guide|guidelines)",
                title,
                re.I,
            )
        )
        or len(title.split()) > 3
    )


def _emit_block(block: _Block, state: _State, found: list[Instruction]) -> None:
    if state.skipping():
        return
    text = _inline(" ".join(block.lines))
    if not text:
        return
    if block.bullet:
        if block.indent == 0:
            state.parent = ""
        if text.endswith(":"):
            state.parent = text  # its children complete it
            return
        _flush_long_intro(state, block.line, found)
        if state.parent and block.indent > 0:
            text = f"{state.parent} {text}"
        elif state.intro and _words(text) < CONTEXT_WORDS * 2:
            text = f"{state.intro} {text}"
    else:
        state.parent = ""
        _flush_long_intro(state, block.line, found)
        if text.endswith(":"):
            state.intro = text  # "Build with:" completes what follows
            return
    _add(text, block.line, state, found)


def _flush_long_intro(state: _State, line: int, found: list[Instruction]) -> None:
    """A long paragraph ending in ':' before a list is a statement of its own, not a
    prefix for each item (before a shell block it stays the recipe's description)."""
    if state.intro and _words(state.intro) > MAX_INTRO_WORDS:
        intro, state.intro = state.intro, ""
        _add(intro, line, state, found)


def _add(text: str, line: int, state: _State, found: list[Instruction], kind: str = "") -> None:
    if _BOILERPLATE.match(text) or _mostly_links(text) or _is_file_title(text, found, state):
        return
    text = _with_context(text, state, kind)
    for piece in _pieces(text):
        if _words(piece) < MIN_WORDS:
            continue
        category = kind or category_for(piece, state.section(), state.label)
        found.append(Instruction(piece, category, state.section(), line))


def _with_context(text: str, state: _State, kind: str) -> str:
    """The item, with the heading or bold label it needs to make sense on its own: a
    short item ("Edition: 2024"), or a term defined under a bold label. A command
    ("Run tests: `make test`") says enough by itself."""
    if kind == "command" or has_command(text):
        return text
    context = state.label or (state.headings[-1][1] if state.headings else "")
    if not context or text.lower().startswith(context.lower()):
        return text
    if _words(text) < CONTEXT_WORDS or (state.label and _DEFINITION.match(text)):
        return f"{context}: {text}"
    return text


def _is_file_title(text: str, found: list[Instruction], state: _State) -> bool:
    """A plain file's first line naming it (".cursorrules — Python Production")."""
    return (
        not found
        and not state.headings
        and _words(text) < CONTEXT_WORDS
        and not text.endswith((".", "!", ":"))
    )


def _mostly_links(text: str) -> bool:
    """A line that is only a link or two ("[GitHub Help](https://…)")."""
    return bool(re.fullmatch(r"(?:https?://\S+\s*)+", text))


def _pieces(text: str) -> list[str]:
    """``text`` in pieces of at most MAX_ITEM_CHARS, cut at sentence ends."""
    if len(text) <= MAX_ITEM_CHARS:
        return [text]
    pieces: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        if current and len(current) + 1 + len(sentence) > MAX_ITEM_CHARS:
            pieces.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        pieces.append(current)
    return [p if len(p) <= MAX_ITEM_CHARS else p[: MAX_ITEM_CHARS - 1] + "…" for p in pieces]


def _emit_code(
    lang: str, body: list[str], line: int, state: _State, found: list[Instruction]
) -> None:
    """A shell block. Commands each described by a comment (above or beside them)
    become one command memory each; a block of bare commands is one recipe, described by
    the paragraph that introduced it. Other code (Python, a directory tree) is an
    example, not a memory."""
    if state.skipping() or lang not in _SHELL_LANGS:
        _flush_long_intro(state, line, found)
        state.intro = ""
        return
    commands = _commands(body)
    intro = (state.intro or state.label).rstrip(":").strip()
    state.intro = ""
    if not commands:
        _emit_statement(lang, body, line, intro, state, found)
        return
    described = sum(1 for _, what, _ in commands if what)
    if described * 2 >= len(commands):
        for command, what, offset in commands:
            what = what or intro
            text = f"{what}: `{command}`" if what else f"Run `{command}`."
            _add(text, line + offset, state, found, kind="command")
        return
    recipe = "; ".join(f"`{command}`" for command, _, _ in commands[:MAX_RECIPE_COMMANDS])
    _add(
        f"{intro}: {recipe}" if intro else f"Run {recipe}.", line + 1, state, found, kind="command"
    )


def _emit_statement(
    lang: str, body: list[str], line: int, intro: str, state: _State, found: list[Instruction]
) -> None:
    """A plain block of one short line under a heading or label ("Configuration
    Hierarchy:" then ``CLI args > Environment vars > …``) states a fact; a longer block
    is a diagram or an example."""
    lines = [raw.strip() for raw in body if raw.strip()]
    if lang in ("", "text", "txt") and len(lines) == 1 and len(lines[0]) <= MAX_STATEMENT_CHARS:
        text = f"{intro}: {lines[0]}" if intro else lines[0]
        _add(text, line + 1, state, found)


def _commands(body: list[str]) -> list[tuple[str, str, int]]:
    """(command, what a comment says it does, line offset) for each command line."""
    found: list[tuple[str, str, int]] = []
    comment = ""
    for offset, raw in enumerate(body, 1):
        stripped = raw.strip().removeprefix("$ ").strip()
        if not stripped:
            comment = ""
            continue
        if stripped.startswith(("#", "//", "REM ")):
            comment = stripped.lstrip("#/ ").removeprefix("REM ").strip()
            continue
        command, _, beside = stripped.partition("  #")
        command = command.strip()
        if is_shell_command(command):
            found.append((command, (beside.strip() or comment).rstrip(":"), offset))
        comment = ""
    return found


def _emit_row(raw: str, line: int, state: _State, found: list[Instruction]) -> None:
    """A table row (not the header rule): its cells, joined."""
    cells = [_inline(cell) for cell in raw.strip().strip("|").split("|")]
    cells = [c for c in cells if c]
    if len(cells) >= 2 and not state.skipping():
        _add(" — ".join(cells), line, state, found)


def _unique(items: list[Instruction]) -> list[Instruction]:
    """The first of items saying the same thing (a command listed in two sections is
    one memory, kept where it first appears)."""
    seen: set[str] = set()
    out: list[Instruction] = []
    for item in items:
        if item.key not in seen:
            seen.add(item.key)
            out.append(item)
    return out
