"""Capture quality: precision and recall of the rule-based extractors.

Runs the prose extractors and the tool-event signals over every transcript in
``tests/fixtures/transcripts/`` and compares the candidates with the sibling
``<name>.expected.json``, which lists what a careful human would keep.

Matching rule (documented here because the numbers depend on it):

* A candidate matches an expected memory when its category is the expected
  ``category`` or one of its ``also`` categories (where a human would accept
  either, e.g. ``convention``/``coding_style``), **and** at least 60% of the
  expected ``keywords`` occur in the candidate text (case-insensitive
  substring).  Keywords are the facts that make the memory useful (the error,
  the package, the flag), not the wording.
* Each candidate is matched to the best still-unmatched expected memory
  (most keywords); if every memory it matches is already taken it counts as a
  *duplicate*: correct, so not a false positive, but reported separately.
* precision = (matched + duplicates) / candidates;
  recall = matched expected memories / expected memories.
* ``forbidden`` strings (secrets, private spans) must appear in no candidate;
  any occurrence is reported as a leak.

Usage: ``.venv/bin/python benchmarks/capture_quality.py [-v] [--json]``
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_layer.capture.candidate import Candidate  # noqa: E402
from memory_layer.capture.extract import extract_from_entries  # noqa: E402
from memory_layer.capture.signals import events_from_entries, signal_candidates  # noqa: E402
from memory_layer.capture.transcript import read_new_entries  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "transcripts"
KEYWORD_SHARE = 0.6


@dataclass
class FileResult:
    name: str
    candidates: list[Candidate]
    expected: list[dict]
    matched: dict[int, int] = field(default_factory=dict)  # candidate index -> expected index
    duplicates: list[int] = field(default_factory=list)
    false_positives: list[int] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)

    @property
    def missed(self) -> list[int]:
        return [i for i in range(len(self.expected)) if i not in self.matched.values()]


# The learned capture classifier (capture/learned.py) with the engine's MiniLM, or None:
# the rules alone, as a hook without the engine captures.
JUDGE: dict[str, Any] = {"judge": None}


def capture(path: Path) -> list[Candidate]:
    """Everything capture proposes for one transcript, as the hooks would run it."""
    entries, _offset = read_new_entries(path, 0)
    cwd = next((e.cwd for e in entries if e.cwd), "")
    found = extract_from_entries(entries, judge=JUDGE["judge"])
    return found + signal_candidates(events_from_entries(entries), cwd)


def keyword_hits(candidate: Candidate, memory: dict) -> int:
    text = candidate.text.lower()
    return sum(1 for kw in memory["keywords"] if kw.lower() in text)


def matches(candidate: Candidate, memory: dict) -> bool:
    categories = {memory["category"], *memory.get("also", [])}
    needed = max(1, -(-len(memory["keywords"]) * KEYWORD_SHARE // 1))  # ceil
    return candidate.category in categories and keyword_hits(candidate, memory) >= needed


def score_file(path: Path) -> FileResult:
    spec = json.loads(path.with_name(path.stem + ".expected.json").read_text())
    result = FileResult(path.stem, capture(path), spec["memories"])
    taken: set[int] = set()
    for ci, cand in enumerate(result.candidates):
        options = [mi for mi, mem in enumerate(result.expected) if matches(cand, mem)]
        free = [mi for mi in options if mi not in taken]
        if free:
            best = max(free, key=lambda mi: keyword_hits(cand, result.expected[mi]))
            result.matched[ci] = best
            taken.add(best)
        elif options:
            result.duplicates.append(ci)
        else:
            result.false_positives.append(ci)
        for secret in spec.get("forbidden", []):
            if secret.lower() in (cand.text + cand.evidence).lower():
                result.leaks.append(f"{secret!r} in {cand.text!r}")
    return result


def run(fixtures: Path = FIXTURES) -> dict:
    results = [score_file(p) for p in sorted(fixtures.glob("*.jsonl"))]
    n_cand = sum(len(r.candidates) for r in results)
    n_good = sum(len(r.matched) + len(r.duplicates) for r in results)
    n_exp = sum(len(r.expected) for r in results)
    n_found = sum(len(r.matched) for r in results)
    return {
        "files": len(results),
        "candidates": n_cand,
        "expected": n_exp,
        "matched": n_found,
        "duplicates": sum(len(r.duplicates) for r in results),
        "false_positives": sum(len(r.false_positives) for r in results),
        "leaks": [leak for r in results for leak in r.leaks],
        "precision": n_good / n_cand if n_cand else 1.0,
        "recall": n_found / n_exp if n_exp else 1.0,
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every candidate")
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    parser.add_argument(
        "--judge",
        action="store_true",
        help="with the learned capture classifier on MiniLM, as the warm engine captures",
    )
    args = parser.parse_args(argv)
    if args.judge:
        from capture_real import load_minilm

        from memory_layer.capture.learned import judge_for

        JUDGE["judge"] = judge_for(load_minilm())
    report = run()
    results: list[FileResult] = report.pop("results")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for r in results:
        print(
            f"{r.name:28} candidates {len(r.candidates):2}  matched {len(r.matched):2}/"
            f"{len(r.expected):2}  dup {len(r.duplicates)}  fp {len(r.false_positives)}"
        )
        if args.verbose:
            for ci, cand in enumerate(r.candidates):
                tag = "ok " if ci in r.matched else "dup" if ci in r.duplicates else "FP "
                print(f"   {tag} [{cand.category}/{cand.extractor} {cand.confidence}] {cand.text}")
            for mi in r.missed:
                mem = r.expected[mi]
                print(f"   MISS [{mem['category']}] {mem['gist']}")
    print(
        f"\n{report['files']} transcripts, {report['candidates']} candidates, "
        f"{report['expected']} expected memories"
    )
    print(
        f"precision {report['precision']:.3f}  recall {report['recall']:.3f}  "
        f"(duplicates {report['duplicates']}, false positives {report['false_positives']})"
    )
    if report["leaks"]:
        print("LEAKS:\n  " + "\n  ".join(report["leaks"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
