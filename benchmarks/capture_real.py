"""Capture quality on real Claude Code transcripts that their authors committed publicly.

The transcripts are listed in ``benchmarks/data/real_transcripts/gold.json`` (repository,
path, commit, a sha256 prefix) with the durable lessons a careful reader listed for each
one, written down before any tuning. Every ``split`` in gold.json is reported on its own:
``tune`` is what the extractors were tuned on, ``train`` is labelled data for a learned
capture model, and ``holdout`` / ``holdout2`` were never read while tuning or training.

Each transcript is captured as the hooks capture it: the prose extractors over its
entries and the tool-event signals over its tool calls, stored through the one write
path (``api.remember`` under the default trust policy) in a fresh temporary store. What
is scored is what the store then holds:

* precision = stored records matching a lesson (or repeating a matched one) / records;
* recall = lessons matched / lessons;
* "held" = records written pending because their words came from tool output, a file
  or the assistant relaying one (``memories.origin``): captured, but not injected until
  a person accepts them. ``active recall`` counts only lessons matched by an active
  record: what provenance costs automatic capture.

``recall`` counts a lesson found by any record, held ones included (a person sees it in
``memory-layer review``); ``active recall`` only by records injected without review.
``tune_strict`` scores the tuning transcripts without the lessons a later audit added
(``audit`` in gold.json: a lesson the first reading missed, found re-reading where a
record was scored false); holdout lessons are never audited.

Matching is the fixture benchmark's rule (``capture_quality.matches``): the record's
category is the lesson's or one of its ``also`` categories, and at least 60% of the
lesson's keywords occur in the record's text.

The transcripts are not shipped (they belong to their authors). Put them in ``--data``
(default ``~/.cache/memory-layer/real-transcripts``) as ``<name>.jsonl``;
``--fetch`` downloads each from raw.githubusercontent.com at the recorded commit and
checks its hash.

Usage: ``.venv/bin/python benchmarks/capture_real.py [-v] [--json] [--fetch] [--data DIR]
[--split S] [--embedder minilm|none] [--classifier]``. The default is what users get: the
rules alone (the classifier is opt-in), with MiniLM loaded as the warm engine has it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
for entry in (str(ROOT), str(BENCH)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

from capture_quality import matches  # noqa: E402

GOLD = BENCH / "data" / "real_transcripts" / "gold.json"
DEFAULT_DATA = Path("~/.cache/memory-layer/real-transcripts").expanduser()
PROJECT = "github.com/bench/real"


@dataclass
class Scored:
    name: str
    split: str
    language: str
    records: list[dict[str, Any]]
    lessons: list[dict[str, Any]]
    matched: dict[int, int] = field(default_factory=dict)  # record index -> lesson index
    duplicates: list[int] = field(default_factory=list)
    false_positives: list[int] = field(default_factory=list)

    @property
    def missed(self) -> list[int]:
        return [i for i in range(len(self.lessons)) if i not in self.matched.values()]

    def active_matched(self) -> int:
        return sum(1 for ri in self.matched if self.records[ri]["status"] == "active")


class _Record:
    """What ``matches`` reads from a candidate: text and category."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.text = row["text"]
        self.category = row["category"]


def fetch(spec: dict[str, Any], data: Path) -> Path:
    target = data / f"{spec['name']}.jsonl"
    if not target.exists():
        url = f"https://raw.githubusercontent.com/{spec['repo']}/{spec['commit']}/{spec['path']}"
        data.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (fixed host)
            target.write_bytes(response.read())
    return target


def check_hash(path: Path, spec: dict[str, Any]) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if not digest.startswith(spec["sha256_prefix"]):
        raise SystemExit(
            f"{path} is not the transcript recorded in gold.json (sha256 {digest[:16]}, "
            f"expected {spec['sha256_prefix']}): delete it and run with --fetch."
        )


def load_minilm() -> Any:
    """The engine's default embedder (MiniLM), or exit saying why it cannot load."""
    from memory_layer.config import DEFAULTS
    from memory_layer.embed import load_embedder

    embedder, status = load_embedder(DEFAULTS)
    if embedder is None:
        raise SystemExit(f"MiniLM did not load ({status.reason}); run with --embedder none.")
    return embedder


def capture(
    path: Path, home: Path, embedder: Any = None, *, classifier: bool = False
) -> list[dict[str, Any]]:
    """Store what the hooks would store for this transcript; return the records.

    ``embedder``: what the warm engine has loaded (``remember``'s duplicate check uses its
    vectors); None is a hook without the engine. ``classifier``: the learned capture
    classifier judges too (``hooks.capture_classifier``, off by default, as in the
    product: the engine passes it the embedder only when the setting is on)."""
    os.environ["MEMORY_LAYER_HOME"] = str(home)
    from memory_layer.capture.transcript import read_new_entries
    from memory_layer.config import load_config
    from memory_layer.hooks.capture import store_candidates, transcript_candidates
    from memory_layer.models import utcnow
    from memory_layer.storage.db import open_db

    entries, _offset = read_new_entries(path, 0)
    cwd = next((e.cwd for e in entries if e.cwd), "")
    # The one place a transcript becomes candidates (Stop/PreCompact/SessionEnd and
    # backfill); tools=True adds the fail->fix and command signals a live session gets
    # from PostToolUse.
    judge_with = embedder if classifier else None
    candidates = transcript_candidates(entries, tools=True, cwd=cwd, embedder=judge_with)
    config = load_config()
    conn = open_db()
    try:
        store_candidates(
            conn,
            candidates,
            project=PROJECT,
            source="hook:Stop",
            config=config,
            embedder=embedder,
            now=utcnow(),
        )
        conn.row_factory = None
        cursor = conn.execute("SELECT text, category, status, origin FROM memories ORDER BY rowid")
        return [{"text": t, "category": c, "status": s, "origin": o} for t, c, s, o in cursor]
    finally:
        conn.close()


def score(spec: dict[str, Any], records: list[dict[str, Any]], *, strict: bool = False) -> Scored:
    """Match records to lessons; ``strict`` leaves out lessons added in an audit."""
    lessons = [ls for ls in spec["lessons"] if not (strict and ls.get("audit"))]
    result = Scored(spec["name"], spec["split"], spec["language"], records, lessons)
    options = [
        [li for li, lesson in enumerate(lessons) if matches(_Record(row), lesson)]
        for row in records
    ]
    # A maximum matching (augmenting paths), not first-come: a record that fits two
    # lessons must not take the one a later record could only have matched.
    owner: dict[int, int] = {}  # lesson index -> record index

    def assign(ri: int, seen: set[int]) -> bool:
        for li in options[ri]:
            if li in seen:
                continue
            seen.add(li)
            if li not in owner or assign(owner[li], seen):
                owner[li] = ri
                return True
        return False

    for ri in range(len(records)):
        assign(ri, set())
    result.matched = {ri: li for li, ri in owner.items()}
    for ri in range(len(records)):
        if ri in result.matched:
            continue
        (result.duplicates if options[ri] else result.false_positives).append(ri)
    return result


def totals(results: list[Scored]) -> dict[str, Any]:
    n_rec = sum(len(r.records) for r in results)
    n_good = sum(len(r.matched) + len(r.duplicates) for r in results)
    n_les = sum(len(r.lessons) for r in results)
    n_found = sum(len(r.matched) for r in results)
    held = sum(1 for r in results for row in r.records if row["status"] != "active")
    return {
        "transcripts": len(results),
        "records": n_rec,
        "held_for_review": held,
        "lessons": n_les,
        "matched": n_found,
        "false_positives": sum(len(r.false_positives) for r in results),
        "precision": round(n_good / n_rec, 3) if n_rec else 1.0,
        "recall": round(n_found / n_les, 3) if n_les else 1.0,
        "active_recall": round(sum(r.active_matched() for r in results) / n_les, 3)
        if n_les
        else 1.0,
    }


def gold_splits(gold: dict[str, Any] | None = None) -> list[str]:
    """The splits gold.json uses, in the order they first appear."""
    if gold is None:
        gold = json.loads(GOLD.read_text(encoding="utf-8"))
    return list(dict.fromkeys(spec["split"] for spec in gold["transcripts"]))


def run(
    data: Path = DEFAULT_DATA,
    *,
    download: bool = False,
    only: str | None = None,
    embedder: Any = None,
    classifier: bool = False,
) -> dict[str, Any]:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    results: list[Scored] = []
    strict: list[Scored] = []
    for spec in gold["transcripts"]:
        if only and spec["split"] != only:
            continue
        path = fetch(spec, data) if download else data / f"{spec['name']}.jsonl"
        if not path.exists():
            raise SystemExit(f"{path} is missing: run with --fetch (or --data DIR).")
        check_hash(path, spec)
        with tempfile.TemporaryDirectory() as home:
            if embedder is None:
                (Path(home) / "config.yaml").write_text("embedding:\n  enabled: false\n")
            records = capture(path, Path(home), embedder, classifier=classifier)
        results.append(score(spec, records))
        strict.append(score(spec, records, strict=True))
    report: dict[str, Any] = {
        split: totals([r for r in results if r.split == split]) for split in gold_splits(gold)
    }
    # Without the lessons an audit added to tuning transcripts (gold.json "audit").
    report["tune_strict"] = totals([r for r in strict if r.split == "tune"])
    report["all"] = totals(results)
    report["non_english"] = totals([r for r in results if r.language != "en"])
    report["results"] = results
    return report


def _print(results: list[Scored], verbose: bool) -> None:
    width = max((len(r.split) for r in results), default=0)
    for r in results:
        print(
            f"{r.split:{width}} {r.name:22} {r.language}  records {len(r.records):2}  matched "
            f"{len(r.matched):2}/{len(r.lessons):2}  fp {len(r.false_positives)}"
        )
        if not verbose:
            continue
        for ri, row in enumerate(r.records):
            tag = "ok " if ri in r.matched else "dup" if ri in r.duplicates else "FP "
            held = "" if row["status"] == "active" else f" (held: {row['origin']})"
            print(f"    {tag} [{row['category']}] {row['text'][:160]}{held}")
        for li in r.missed:
            print(f"    MISS [{r.lessons[li]['category']}] {r.lessons[li]['text'][:160]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every record")
    parser.add_argument("--json", action="store_true", help="print the totals as JSON")
    parser.add_argument("--fetch", action="store_true", help="download missing transcripts")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="transcript directory")
    splits = gold_splits()
    parser.add_argument(
        "--split", choices=splits, help="only these transcripts (tune while tuning)"
    )
    parser.add_argument(
        "--embedder",
        choices=("minilm", "none"),
        default="minilm",
        help="minilm: as the warm engine stores (its vectors in remember's duplicate "
        "check); none: keyword-only, a hook without the engine",
    )
    parser.add_argument(
        "--classifier",
        action="store_true",
        help="the learned capture classifier judges too (hooks.capture_classifier, off by "
        "default); needs --embedder minilm",
    )
    args = parser.parse_args(argv)
    if args.classifier and args.embedder != "minilm":
        parser.error("--classifier needs --embedder minilm (it judges MiniLM vectors)")
    embedder = load_minilm() if args.embedder == "minilm" else None
    report = run(
        args.data,
        download=args.fetch,
        only=args.split,
        embedder=embedder,
        classifier=args.classifier,
    )
    results: list[Scored] = report.pop("results")
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    _print(results, args.verbose)
    rows = [name for split in splits for name in (split, f"{split}_strict") if name in report]
    for split in [*rows, "all", "non_english"]:
        t = report[split]
        print(
            f"{split:11} {t['transcripts']:2} transcripts  records {t['records']:3} "
            f"(held {t['held_for_review']})  lessons {t['lessons']:3}  precision "
            f"{t['precision']:.3f}  recall {t['recall']:.3f}  active recall "
            f"{t['active_recall']:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
