"""Where the gold lessons capture misses live, and why each one is missed.

For every gold lesson of the chosen splits that no stored record matches
(``capture_real.py``'s scoring), this finds the entry holding its ``quote`` and names

* **where** it lives: ``user`` (a prompt), ``closing`` (the assistant's last prose of a
  turn, before the next prompt), ``mid-turn`` (assistant prose between tool calls),
  ``compaction`` (a compaction summary), ``tool_output`` (a tool result only),
  ``tool_input`` (a command or a written file), or ``not located``;
* **why** it was missed: ``tool output only`` (capture deliberately does not trust it),
  ``prose filter drops the line`` (a table, heading, code, quoted or indented line, so
  no extractor sees it), ``a rule reads it, a guard drops it`` (a trigger phrasing
  matches the sentence but a guard refuses it), ``no rule reads that phrasing``,
  ``candidate mismatched by the scorer`` (a candidate came from the quote's sentence but
  its category or keywords do not fit the lesson) or ``candidate lost at store`` (a
  candidate matches the lesson but no stored record does: merged or dropped by
  ``remember``).

Only ``tune`` and ``train`` may be analysed: the held-out splits are never read while
rules are written (``--split holdout`` is refused).

Usage: ``.venv/bin/python benchmarks/capture_misses.py [--split train] [--split tune] [-v]``
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import capture_real  # noqa: E402
from capture_quality import matches  # noqa: E402

ALLOWED = ("tune", "train")
# A prose sentence belongs to the quote when this share of its words occur in it.
OVERLAP = 0.6
_WORD = re.compile(r"\w+")


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.replace("**", "").lower()))


def _triggers() -> list[re.Pattern[str]]:
    """Every trigger phrasing the prose rules key on, guards aside. A renamed trigger
    fails here (getattr without a default) rather than silently leaving the count."""
    from memory_layer.capture import cjk, extract, findings, guards, recipes, sections

    names = {
        extract: "_ALWAYS_NEVER _REMEMBER _FROM_NOW_ON _USE_NOT _PREFER _DECISION _REVERSAL _LETS "
        "_EMPHATIC",
        findings: "_ROOT_CAUSE _TURNS_OUT _GOTCHA_LABEL _NOTE_THAT _ONLY_WORKS _CAUSE _CHANGE "
        "_CONTRAST _HARMLESS _DEFERRED",
        guards: "LEAD_IN",
        cjk: "_FROM_NOW_ON _ALWAYS _REMEMBER _PREFER _DECISION _ROOT_CAUSE _CONSTRAINT "
        "_EVERY_CASE _REQUIRED _THE_POINT _REFUSED _MIND",
        recipes: "_LABEL_FIRST _COMMAND_FIRST",
        sections: "_TITLE",
    }
    return [getattr(module, n) for module, listed in names.items() for n in listed.split()]


def _user_prompt(entry: Any) -> bool:
    return entry.role == "user" and not entry.is_tool_result and not entry.is_meta


def locate(entries: list[Any], quote: str) -> tuple[str, Any]:
    """(where, entry) of the first entry whose text holds ``quote``."""
    want = _norm(quote)
    for i, e in enumerate(entries):
        if e.is_sidechain:
            continue
        if e.is_tool_result:
            texts = [r.relay_text for r in e.tool_results] + [e.text]
            if e.tool_output is not None:
                texts += list(e.tool_output.full_parts) + list(e.tool_output.answers)
            if any(want in _norm(t) for t in texts if t):
                return "tool_output", e
            continue
        if any(want in _norm(t) for t in e.texts):
            if e.is_compact_summary:
                return "compaction", e
            if e.role == "user":
                return "user", e
            later = entries[i + 1 :]
            nxt = next((x for x in later if _user_prompt(x)), None)
            rest = later[: later.index(nxt)] if nxt is not None else later
            spoken = any(x.role == "assistant" and any(t.strip() for t in x.texts) for x in rest)
            return ("mid-turn" if spoken else "closing"), e
        inputs = " ".join(json.dumps(u.input, ensure_ascii=False) for u in e.tool_uses)
        if inputs and want in _norm(inputs.replace("\\n", " ")):
            return "tool_input", e
    return "not located", None


def _quote_sentences(entry: Any, quote: str) -> list[str]:
    from memory_layer.capture.prose import prose_sentences

    want = set(_WORD.findall(quote.lower()))
    out = []
    for text in entry.texts:
        for s in prose_sentences(text):
            words = _WORD.findall(s.lower())
            if words and sum(w in want for w in words) / len(words) >= OVERLAP:
                out.append(s)
    return out


def cause(
    where: str, entry: Any, lesson: dict[str, Any], candidates: list[Any], records: list[Any]
) -> str:
    from memory_layer.capture.guards import strip_filler

    if any(matches(r, lesson) for r in records):
        return "its record counts for another lesson"  # one record, one lesson
    if any(matches(c, lesson) for c in candidates):
        return "candidate lost at store"
    if where in ("tool_output", "tool_input", "not located"):
        return f"{where} only" if where != "not located" else "not located"
    sentences = _quote_sentences(entry, lesson["quote"])
    if not sentences:
        return "prose filter drops the line"
    keys = {_norm(s) for s in sentences}
    if any(_norm(c.evidence or c.text) in keys or _norm(c.text) in keys for c in candidates):
        return "candidate mismatched by the scorer"
    triggers = _triggers()
    if any(t.search(strip_filler(s)) for s in sentences for t in triggers):
        return "a rule reads it, a guard drops it"
    return "no rule reads that phrasing"


def analyse(spec: dict[str, Any], data: Path) -> list[dict[str, Any]]:
    from memory_layer.capture.transcript import read_new_entries
    from memory_layer.hooks.capture import transcript_candidates

    path = data / f"{spec['name']}.jsonl"
    capture_real.check_hash(path, spec)
    with tempfile.TemporaryDirectory() as home:
        (Path(home) / "config.yaml").write_text("embedding:\n  enabled: false\n")
        records = capture_real.capture(path, Path(home))
    scored = capture_real.score(spec, records)
    entries, _ = read_new_entries(path, 0)
    cwd = next((e.cwd for e in entries if e.cwd), "")
    candidates = transcript_candidates(entries, tools=True, cwd=cwd)
    stored = [capture_real._Record(row) for row in records]
    rows = []
    for li in scored.missed:
        lesson = scored.lessons[li]
        where, entry = locate(entries, lesson["quote"])
        rows.append(
            {
                "transcript": spec["name"],
                "language": spec["language"],
                "where": where,
                "why": cause(where, entry, lesson, candidates, stored),
                "lesson": lesson["text"],
                "quote": lesson["quote"],
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", action="append", help="tune or train (repeatable)")
    parser.add_argument("--data", type=Path, default=capture_real.DEFAULT_DATA)
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    splits = args.split or ["train"]
    refused = [s for s in splits if s not in ALLOWED]
    if refused:
        raise SystemExit(
            f"{', '.join(refused)}: held-out splits are never analysed; use {' or '.join(ALLOWED)}."
        )
    gold = json.loads(capture_real.GOLD.read_text(encoding="utf-8"))
    rows = [
        row
        for spec in gold["transcripts"]
        if spec["split"] in splits
        for row in analyse(spec, args.data)
    ]
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if args.verbose:
        for r in rows:
            print(f"{r['transcript']:14} {r['where']:11} {r['why']:34} {r['quote'][:110]!r}")
    print(f"{len(rows)} missed lessons in {', '.join(splits)}")
    table = Counter((r["where"], r["why"]) for r in rows)
    for (where, why), n in sorted(table.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:3}  {where:11}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
