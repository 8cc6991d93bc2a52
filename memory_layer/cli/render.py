"""How `recall` and `remember` print, from the records the use cases return.

The same records come from the CLI's own process or from the warm engine, so this
module is the only formatting of them, and it imports nothing slow (no click): the
CLI's fast path prints through it.
"""

from __future__ import annotations

import json
import re

from memory_layer import api

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the CLI's fast path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TEXT_WIDTH = 160


def short(text: str, width: int = 100) -> str:
    """One line of stored text for a terminal: hidden characters shown, not obeyed."""
    flat = " ".join(api.terminal_text(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def as_json(value: Any) -> str:
    """``--json`` output: hidden characters in strings as ``\\u`` escapes (same values)."""
    return api.json_escapes(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _explain_lines(record: dict[str, Any]) -> list[str]:
    s = record["scores"]
    e = record["explain"]
    vector = "n/a" if e["vector"] is None else f"{e['vector']:.3f}"
    weighted = " + ".join(f"{k} {v:.3f}" for k, v in e["weighted"].items())
    band = e.get("band")
    ordered = (
        f"   relevance band {band['number']} (similarity within the band of "
        f"{band['from_similarity']:.3f}): ranked by score inside it, bands by similarity"
        if band
        else None
    )
    lines = [
        f"   similarity {s['similarity']:.3f} (keyword {e['keyword']:.3f}, vector {vector}) "
        f"· outcome {s['outcome']:.3f} · recency {s['recency']:.3f} (age {e['age_days']:.1f}d) "
        f"· frequency {s['frequency']:.3f} · confidence {s['confidence']:.3f}",
        f"   = ({weighted}) = {e['base']:.3f} × boost {s['boost']:.2f} "
        f"[{e['boost_reason']}] = {record['score']:.3f}",
    ]
    lent = e.get("thread")
    if lent:
        lines.append(
            f"   reply in its thread: {lent['share']:.2f} (retrieval.thread_share) of the "
            f"similarity {lent['predecessor_similarity']:.3f} of the turn before it, "
            f"{lent['follows']}, instead of its own {lent['own_similarity']:.3f}"
        )
    explored = e.get("explore")
    if explored:
        lines.append(
            f"   tried first (outcomes.explore): optimistic success rate "
            f"{explored['optimistic_rate']:.2f} beats the band leader's record "
            f"{explored['leader_rate']:.2f}; tried {explored['tries']} time(s)"
        )
    return [*lines, ordered] if ordered else lines


def weaker_matches(floor: float) -> str:
    """The line between the closer matches and those below the relative floor, which
    rank after them whatever their score (retrieval.search._rank_strong_first)."""
    return (
        f"-- weaker matches: similarity under {floor:.3f} (retrieval.relative_floor of the "
        "best match's), listed after the closer matches whatever their score --"
    )


def recall_lines(
    records: list[dict[str, Any]], *, explain: bool, common_share: float | None
) -> list[str]:
    """The human-readable recall output (stdout), best first."""
    lines: list[str] = []
    left_out = records[0]["explain"].get("vector_query_left_out") if records else None
    if explain and left_out:
        share = f"{common_share:.0%}" if common_share is not None else "a share"
        lines.append(
            f"Left out of the embedded query (in over {share} of the searched memories; "
            f"keywords still use them): {', '.join(left_out)}"
        )
    weaker = False
    answer = records[0]["explain"].get("answer") if records else None
    if explain and answer is not None:
        lines.append(
            f"Store answers the query: {answer:.3f} (the verifier on the evidence; "
            "below retrieval.min_answer recall says nothing matches)"
        )
    for rank, record in enumerate(records, 1):
        floor = record["explain"].get("below_relative_floor")
        if floor is not None and not weaker:
            weaker = True
            lines.append(weaker_matches(floor))
        where = record.get("project") or "global"
        lines.append(f"{rank}. [{record['category']}] {short(record['text'], TEXT_WIDTH)}")
        lines.append(
            f"   id {record['id']} · {where} · score {record['score']:.3f} · "
            f"match {record['scores']['similarity']:.3f}"
        )
        if explain:
            lines.extend(_explain_lines(record))
        if record.get("withheld"):
            lines.append(f"   withheld from agents: {record['withheld']}")
        if record.get("sinking"):
            lines.append(
                f"   sinking: outcome {record['outcome_score']:+.2f}, withheld from injection "
                f"(`memory-layer outcome --memory {record['id']} --restore`)"
            )
    return lines


def redaction_notice(record: dict[str, Any]) -> str:
    """Which secrets were replaced, by kind and count, as the stored text marks them."""
    from collections import Counter

    kinds = Counter(re.findall(r"\[REDACTED:([a-z0-9_]+)\]", record.get("text") or ""))
    found = ", ".join(f"{n} x {kind}" if n > 1 else kind for kind, n in sorted(kinds.items()))
    what = (
        f"Replaced secrets before storing ({found}: each is now [REDACTED:<kind>] in the text)"
        if found
        else "Removed <private> parts before storing"
    )
    return f"{what}; `memory-layer show {record['id']}` shows what was stored."


def remember_notices(record: dict[str, Any]) -> list[str]:
    """What `remember` says on stderr about the write (in both output modes, so `--json`
    output stays parseable)."""
    notices: list[str] = []
    if record.get("redacted"):
        notices.append(redaction_notice(record))
    if record["status"] == "conflict":
        notices.append(
            "Another source recorded a different value for this fact: both are now "
            "candidates until you choose one (`memory-layer review`)."
        )
    elif record["status"] != "active":
        notices.append(
            f"Stored as {record['status']}: agents do not see it until it is reviewed "
            "(`memory-layer review`)."
        )
    outcome = record.get("outcome")
    if outcome == "reinforced":
        notices.append(
            f"Reinforced existing memory {record['id']} instead of adding a copy "
            f"(now used {record['use_count']}x)."
        )
    elif outcome == "duplicate":
        notices.append(f"Already recorded as {record['id']} ({record['status']}); nothing added.")
    elif outcome == "change":
        notices.append(
            f"Queued a change to {record['id']} for review; the record is unchanged until "
            "a person accepts it (`memory-layer review`)."
        )
    return notices
