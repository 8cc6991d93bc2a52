"""The bar a memory clears before SessionStart shows it with no query at all.

Per-prompt injection has the prompt as evidence of relevance; SessionStart has none,
so a memory there must have earned its place whatever the store's size (a small store
used to inject everything it had, junk included). A memory clears the bar when it is
specific (not vague, ``trust.quality.vague_reasons``) and a person or the record's
history vouches for it:

- a person stated or accepted it: a trusted source (``trust.trusted_sources``: the CLI,
  ``/remember``, an instruction-file import) or approved by someone who is not a hook;
- outcome learning credited it (a success, a positive score) or it was reinforced
  (said again: ``use_count``);
- or, captured automatically, the extractor was confident
  (``hooks.session_start_min_confidence``, default 0.7: explicit user rules 0.85-0.9,
  decisions 0.75, root causes 0.7; single-sighting commands 0.6 and fail -> fix stories
  0.5-0.6 wait until they are reinforced or credited) and it is still worth knowing
  by the quality blend (``hooks.session_start_min_quality``: recency decays an unused
  capture below it after about two months).

Memories imported from a CLAUDE.md are left out: Claude Code loads that file itself.

What misses the bar stays available where there is evidence: per-prompt injection
above the relevance floor, ``recall`` and MCP search.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from memory_layer.models import Memory


# Imports of the files Claude Code reads into every session on its own (the project's
# and the user's CLAUDE.md): injecting them again would only repeat them. AGENTS.md,
# .cursorrules, CONTRIBUTING.md, … are not read by Claude Code, so their memories stay.
LOADED_BY_CLAUDE_CODE = frozenset({"import:CLAUDE.md", "import:CLAUDE.local.md"})


def _vouched(memory: Memory, config: dict[str, Any]) -> bool:
    from memory_layer.trust.policy import is_automatic, source_kind

    trusted = {str(s).strip().lower() for s in config["trust"]["trusted_sources"]}
    source = (memory.source or "").strip().lower()
    if source in trusted or source_kind(source) in trusted:
        return True
    approver = str(memory.extra.get("approved_by") or "").strip().lower()
    # The one rule for "a person approved it" (as MCP's ``reviewed``): no automatic source.
    return bool(approver) and not is_automatic(approver)


def session_start_withheld(
    memory: Memory,
    config: dict[str, Any],
    *,
    quality: float | None = None,
    now: datetime | None = None,
) -> str | None:
    """Why SessionStart leaves ``memory`` out (None: it clears the bar). ``quality``: its
    score by ``retrieval.scoring.quality`` when the caller has it (else computed at
    ``now``)."""
    from memory_layer.trust.quality import vague_reasons

    if (memory.source or "").strip() in LOADED_BY_CLAUDE_CODE:
        return "Claude Code loads this CLAUDE.md into every session itself"
    vague = vague_reasons(memory.text)
    if vague:
        return "vague: " + "; ".join(vague)
    if _vouched(memory, config):
        return None
    if memory.success_count > 0 or memory.outcome_score > 0 or memory.use_count > 0:
        return None
    hooks = config["hooks"]
    floor = float(hooks["session_start_min_confidence"])
    if memory.confidence < floor:
        return f"captured at confidence {memory.confidence:.2f} (< {floor}), never reinforced or credited"
    if quality is None:
        from memory_layer.models import utcnow
        from memory_layer.retrieval.scoring import quality as blend

        quality = blend(memory, config, now or utcnow())
    score = quality
    if score < float(hooks["session_start_min_quality"]):
        return f"quality {score:.2f} below hooks.session_start_min_quality"
    return None
