"""Privacy cleaning for every free-text field a writer supplies, not only the text.

A reason, a tag, a fact's subject or key and a dispute's reason are stored (in the
record, the proposals table, the operations log) and shown in the review inbox and
the history, so a token pasted into any of them would persist as surely as one in
the text. They go through the same ``capture.privacy.clean`` as the text, and
``check`` reports a secret in any of them.
"""

from __future__ import annotations

import re

from memory_layer.errors import InvalidInput

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path (captures are written through here) never
# imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_REDACTED = re.compile(r"\[REDACTED:([\w-]+)\]")


def clean_field(value: str | None) -> str | None:
    """``value`` with ``<private>`` spans removed and secrets redacted (None stays None)."""
    if value is None:
        return None
    from memory_layer.capture.privacy import clean

    return clean(str(value))


def clean_reason(reason: str | None) -> str | None:
    """A reason (of a proposal, a dispute, a review decision...) within
    ``memories.MAX_REASON_CHARS``, cleaned like the text."""
    from memory_layer.memories import MAX_REASON_CHARS, check_length

    check_length("reason", reason, MAX_REASON_CHARS)
    return clean_field(reason)


def clean_tag_values(tags: Any) -> Any:
    """Each tag cleaned like the text; a comma-separated string stays a string, since
    ``memories.clean_tags`` splits it (cleaning first could split a redaction marker)."""
    if tags is None:
        return None
    if isinstance(tags, str):
        return clean_field(tags)
    if not isinstance(tags, list | tuple):
        raise InvalidInput(f"Tags must be a list of strings, got {tags!r}.")
    return [clean_field(tag) if isinstance(tag, str) else tag for tag in tags]


def secret_kinds(value: str) -> list[str]:
    """The kinds of secret redaction would remove from ``value`` (empty: none)."""
    from memory_layer.capture.privacy import redact, strip_private

    visible = strip_private(value)
    redacted = redact(visible)
    if redacted == visible:
        return []
    return sorted(set(_REDACTED.findall(redacted))) or ["credential"]


def secret_problems(values: dict[str, str | None]) -> list[dict[str, Any]]:
    """One ``secret`` problem per field (other than the text) that holds a secret."""
    problems: list[dict[str, Any]] = []
    for field, value in values.items():
        kinds = secret_kinds(value) if value else []
        if kinds:
            problems.append(
                {
                    "kind": "secret",
                    "field": field,
                    "detail": f"the {field} looks like it holds a secret ("
                    + ", ".join(kinds)
                    + "); it would be stored redacted. Leave the value out.",
                }
            )
    return problems
