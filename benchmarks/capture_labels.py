"""Build the labelled sentence set the capture classifier learns from.

For every transcript of split ``tune`` or ``train`` in ``data/real_transcripts/gold.json``
(never ``holdout`` or ``holdout2``: those are only ever scored, once), the transcript is
read exactly as capture reads it (``capture.extract.turns``: user prompts, the
assistant's prose, compaction summaries as the assistant's account; tool output never)
and every unit the classifier judges at run time becomes a row:

* ``sentence``: a prose sentence as it would be admitted (``learned._admissible``);
* ``candidate``: a rule extractor's candidate text.

A unit is positive when it states one of that transcript's gold lessons: it contains
the lesson's verbatim ``quote`` (or most of its words), or the unit lies inside the
quote (``by: quote``). A unit with at least 60% of a lesson's keywords (the benchmark's
own matching rule, without the category) is marked ``by: keywords``: the benchmark
would count it, but it may only mention the facts ("Now run `pnpm build`"), so the
training script weighs these apart. Every other unit is negative. Rows carry a reference (transcript, entry uuid, kind, role, a hash of the
full text) and the first 100 characters, not the transcripts themselves; the training
script re-reads the cached transcripts and checks each row's hash.

Usage: ``.venv/bin/python benchmarks/capture_labels.py [--data DIR] [--check]``
(writes ``data/real_transcripts/capture_labels.jsonl``; ``--check`` only compares).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
for entry in (str(ROOT), str(BENCH)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from capture_quality import KEYWORD_SHARE  # noqa: E402
from capture_real import DEFAULT_DATA, GOLD, check_hash  # noqa: E402

LABELS = BENCH / "data" / "real_transcripts" / "capture_labels.jsonl"
TRAINING_SPLITS = ("tune", "train")
PREVIEW = 100
QUOTE_WORD_SHARE = 0.8  # of a quote's words in a unit that make it state the quote
MIN_QUOTE_WORDS = 3
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Unit:
    transcript: str
    uuid: str
    kind: str  # sentence | candidate
    role: str  # user | assistant | compact
    text: str
    index: int = 0  # the sentence's place in its message
    count: int = 1  # and the message's sentences
    label: int = 0
    lesson: int | None = None
    category: str | None = None
    by: str | None = None

    @property
    def digest(self) -> str:
        return hashlib.sha1(self.text.encode()).hexdigest()[:16]

    def row(self) -> dict[str, Any]:
        return {
            "transcript": self.transcript,
            "uuid": self.uuid,
            "kind": self.kind,
            "role": self.role,
            "sha1": self.digest,
            "text": self.text[:PREVIEW],
            "at": [self.index, self.count],
            "label": self.label,
            "lesson": self.lesson,
            "category": self.category,
            "by": self.by,
        }


def training_specs(gold: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in gold["transcripts"] if t["split"] in TRAINING_SPLITS]


def transcript_units(path: Path, name: str) -> list[Unit]:
    """Every unit capture's classifier would judge in this transcript, unlabelled."""
    from memory_layer.capture.extract import turns
    from memory_layer.capture.learned import _admissible, candidate_sample
    from memory_layer.capture.transcript import read_new_entries

    entries, _offset = read_new_entries(path, 0)
    units: list[Unit] = []
    for _entry, turn in turns(entries):
        if turn is None:
            continue
        count = len(turn.sentences)
        for index, raw in enumerate(turn.sentences):
            text = _admissible(raw)
            if text:
                units.append(Unit(name, turn.uuid, "sentence", turn.role, text, index, count))
        for cand in turn.proposed:
            at = candidate_sample(turn, cand)
            units.append(
                Unit(name, turn.uuid, "candidate", turn.role, cand.text, at.index, at.count)
            )
    return units


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def _quotes(lesson: dict[str, Any]) -> list[str]:
    quote = lesson.get("quote")
    if not quote:
        return []
    return [quote] if isinstance(quote, str) else [q for q in quote if q]


def states(text: str, lesson: dict[str, Any]) -> str | None:
    """How ``text`` states ``lesson`` ("quote" or "keywords"), or None."""
    unit = _norm(text)
    for quote in _quotes(lesson):
        q = _norm(quote)
        if not q:
            continue
        if q in unit or (len(unit) >= 20 and unit in q):
            return "quote"
        words = q.split()
        have = set(unit.split())
        if len(words) >= MIN_QUOTE_WORDS and sum(w in have for w in words) >= QUOTE_WORD_SHARE * len(
            words
        ):
            return "quote"
    keywords = lesson.get("keywords") or []
    if keywords:
        needed = max(1, -(-len(keywords) * KEYWORD_SHARE // 1))
        low = text.lower()
        if sum(1 for kw in keywords if kw.lower() in low) >= needed:
            return "keywords"
    return None


def label(unit: Unit, lessons: list[dict[str, Any]]) -> Unit:
    # A quote beats keywords: the lesson a unit quotes is the one it states.
    best: tuple[int, str] | None = None
    for li, lesson in enumerate(lessons):
        by = states(unit.text, lesson)
        if by and (best is None or (by == "quote" and best[1] != "quote")):
            best = (li, by)
    if best is None:
        return unit
    li, by = best
    return dataclasses.replace(unit, label=1, lesson=li, category=lessons[li]["category"], by=by)


def build(data: Path = DEFAULT_DATA) -> list[Unit]:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    units: list[Unit] = []
    for spec in training_specs(gold):
        path = data / f"{spec['name']}.jsonl"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run benchmarks/capture_real.py --fetch first.")
        check_hash(path, spec)
        units += [label(u, spec["lessons"]) for u in transcript_units(path, spec["name"])]
    return units


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="transcript directory")
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    units = build(args.data)
    text = "".join(json.dumps(u.row(), ensure_ascii=False) + "\n" for u in units)
    positives = sum(u.label for u in units)
    names = sorted({u.transcript for u in units})
    print(
        f"{len(units)} units from {len(names)} transcripts: {positives} positive "
        f"({sum(1 for u in units if u.by == 'quote')} by quote)"
    )
    if args.check:
        same = LABELS.exists() and LABELS.read_text(encoding="utf-8") == text
        print("labels are up to date" if same else f"{LABELS} differs: rerun without --check")
        return 0 if same else 1
    LABELS.write_text(text, encoding="utf-8")
    print(f"wrote {LABELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
