"""Reading values the browser sends: page numbers and textarea text.

Browsers send what a person typed in the shape HTML forms use (CRLF line ends, any
number in the page box), so each value is checked here before a library call sees it.
"""

from __future__ import annotations

from typing import Any

from memory_layer.errors import InvalidInput

# 10,000 pages of 25 is 250,000 rows: past any real store, and small enough that the
# offset (and a search's candidate pool) stays far from SQLite's integer limits.
MAX_PAGE = 10_000


def page_number(args: Any) -> int:
    """The ``page`` query parameter: 1 when absent, else a whole number from 1 to MAX_PAGE."""
    raw = (args.get("page") or "").strip()
    if not raw:
        return 1
    try:
        page = int(raw)
    except ValueError:
        page = 0
    if not 1 <= page <= MAX_PAGE:
        raise InvalidInput(
            f"page must be a whole number from 1 to {MAX_PAGE}, got {raw!r}. "
            "Use the Previous / Next links, or narrow the list with the filters."
        )
    return page


def plain_newlines(text: str) -> str:
    """Textarea text with LF line ends.

    Browsers submit textareas with CRLF, so without this a save that changes only the
    confidence would rewrite a multi-line text (and re-embed it)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")
