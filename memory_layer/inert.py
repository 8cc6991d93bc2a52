"""Stored text made inert on its way out: into a model's context, onto a terminal.

What memory-layer stores came from sessions, tool output and agents, so it may hold
what a reader acts on rather than reads: terminal escape sequences (colour, cursor
moves, window titles, OSC 8 links), a BEL, a carriage return that overwrites the line,
bidirectional overrides that make a line read differently from what it says
(U+202E), zero-width and tag characters that hide words from a person but not from
a model, and markup such as ``</system-reminder>`` that closes the block Claude Code
wraps hook output in and opens a new one the model takes as the system's.

* ``for_model``: what hooks inject and MCP returns. Escape sequences and invisible
  characters are removed, and tag-like markup gets look-alike brackets
  (``‹/system-reminder›``) so it still reads as what it was but is no tag.
* ``for_terminal``: what the CLI prints for a person. Every control or invisible
  character (ESC included, so ``\\u001b[8m`` is printed, not obeyed) is shown as a
  visible ``\\u202e``-style escape: a person reviewing a record sees what was hidden
  in it, where a model is better served by its absence.
* ``json_escapes``: the same characters written as JSON ``\\u`` escapes in ``--json``
  output, which keeps the document's values exact and the terminal safe.

A leaf module: no imports from the package, cheap enough for the hook path.
"""

from __future__ import annotations

import re

__all__ = ["data_for_model", "for_model", "for_terminal", "json_escapes"]

# ECMA-48 sequences, whole: CSI (ESC [ or the 8-bit CSI), OSC (ESC ] ... BEL or ST),
# DCS/SOS/PM/APC strings, and the two- or three-character escapes (ESC c, ESC ( B).
_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# Control characters (C0 but tab and newline, DEL, C1), bidirectional controls
# (U+061C, U+200E/F, U+202A-202E, U+2066-2069), zero-width and other invisible
# formatting characters, variation selectors and the tag block (used to smuggle text
# a person cannot see), and interlinear annotation marks.
_INVISIBLE_CLASS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000e0000-\U000e0fff"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")
# Line and paragraph separators end a line for a model or a terminal: a newline.
_LINE_SEPARATOR = re.compile("[\u2028\u2029\x85]")
# Tag-like markup: an opening bracket (ASCII, full-width or small) right before a tag
# name, "/", "!" or "?" (spaces allowed between), up to its closing bracket when there
# is one. `a < 5` and `2>&1` are no tags; `List<String>` is neutralised too, harmless.
_TAG = re.compile(r"[<\uff1c\ufe64](\s*[/!?A-Za-z][^<>\uff1c\uff1e\ufe64\ufe65]*)([>\uff1e\ufe65]?)")
_TAG_START = re.compile("[<\uff1c\ufe64]")
OPEN_LOOKALIKE = "\u2039"  # ‹
CLOSE_LOOKALIKE = "\u203a"  # ›


def _neutralise_tag(match: re.Match[str]) -> str:
    close = CLOSE_LOOKALIKE if match.group(2) else ""
    return f"{OPEN_LOOKALIKE}{match.group(1)}{close}"


# Any character for_model changes or looks at: one scan of a character class, so the
# common text (plain, no markup) costs one pass on the hook path, and the escape pattern,
# whose alternatives cost ~20x more per character, runs only where an ESC or C1 is.
_NEEDS_WORK = re.compile(f"[{_INVISIBLE_CLASS}\u2028\u2029<\uff1c\ufe64]")
_ESCAPE_START = re.compile("[\x1b\x90-\x9f]")


def for_model(text: str) -> str:
    """``text`` as inert data for a model: no escapes, no invisible characters, no tags."""
    if not _NEEDS_WORK.search(text):
        return text
    if _ESCAPE_START.search(text):
        text = _ESCAPE_SEQUENCE.sub("", text)
    if not text.isascii():
        text = _LINE_SEPARATOR.sub("\n", text)
    text = _INVISIBLE.sub("", text)
    return _TAG.sub(_neutralise_tag, text) if _TAG_START.search(text) else text


def data_for_model(value: object) -> object:
    """A JSON-like result (an MCP tool's) with ``for_model`` applied to every string in it:
    stored text reaches an agent there as it reaches hook context."""
    if isinstance(value, str):
        return for_model(value)
    if isinstance(value, dict):
        return {key: data_for_model(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [data_for_model(item) for item in value]
    return value


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def for_terminal(text: str) -> str:
    """``text`` safe to print: every hidden or control character shown, none obeyed."""
    text = _LINE_SEPARATOR.sub("\n", text)
    return _INVISIBLE.sub(_visible, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON spells characters beyond the BMP as a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


_JSON_UNSAFE = re.compile(f"[{_INVISIBLE_CLASS}\u2028\u2029]")


def json_escapes(document: str) -> str:
    """A JSON document (``ensure_ascii=False``) with hidden characters as ``\\u`` escapes.

    Such characters can only occur inside JSON strings, where an escape means the same
    character: the parsed values are unchanged."""
    return _JSON_UNSAFE.sub(_json_escape, document)
