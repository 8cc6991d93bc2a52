"""How well `import-instructions` splits real instruction files into memories.

The reference is ``benchmarks/data/instructions/memories.jsonl``: rules, facts and
commands a person wrote down by reading the agent-instruction and CONTRIBUTING files of
public repositories (not written with the splitter). For the five files whose
repositories' licences allow committing them whole (``data/instructions/files``, see
SOURCES.md there), the file is split by ``capture.instructions.split_instructions``
and each hand-listed memory is looked for among the items:

- **covered**: some item holds at least ``--overlap`` (default 0.6) of the reference
  memory's content words (identifiers and backticked commands included);
- **category agreement**: of the covered memories, the share whose best item has the
  reference's category;
- **items** per file, and how many of them no reference memory matches (the splitter
  keeps everything the file states; the reference kept what one reader found most
  useful, so unmatched items are not errors by themselves).

Run: ``.venv/bin/python benchmarks/instructions_import.py [--overlap 0.6] [--show-misses]``
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_layer.capture.instructions import split_instructions  # noqa: E402

DATA = ROOT / "benchmarks" / "data" / "instructions"
FILES = {
    "github.com/pydantic/pydantic-ai": "pydantic/pydantic-ai/CLAUDE.md",
    "github.com/astral-sh/uv": "astral-sh/uv/CLAUDE.md",
    "github.com/cli/cli": "cli/cli/.github/CONTRIBUTING.md",
    "github.com/tokio-rs/tokio": "tokio-rs/tokio/CONTRIBUTING.md",
    "github.com/helm/helm": "helm/helm/CONTRIBUTING.md",
}
_STOP = frozenset(
    """the a an and or of to in on for with by is are be it its this that as at from
    use using used when into your you we our can should must not no do does""".split()
)


def words(text: str) -> set[str]:
    tokens = re.findall(r"[a-z0-9][a-z0-9_./:+-]*", text.lower())
    return {t.strip(".:") for t in tokens if t not in _STOP and len(t) > 1}


MAX_UNION = 3


def _union_share(target: set[str], item_words: list[set[str]]) -> float:
    """The share of ``target`` the best MAX_UNION items hold together (greedy)."""
    got: set[str] = set()
    for _ in range(MAX_UNION):
        best = max(item_words, key=lambda w: len((target - got) & w))
        got |= target & best
    return len(got) / max(1, len(target))


def evaluate(overlap: float) -> tuple[list[dict], list[tuple[str, str, str]]]:
    reference = [json.loads(line) for line in (DATA / "memories.jsonl").open()]
    rows, misses = [], []
    for project, relative in FILES.items():
        items = split_instructions((DATA / "files" / relative).read_text(encoding="utf-8"))
        item_words = [words(i.text) for i in items]
        wanted = [m for m in reference if m["project"] == project]
        covered = agree = covered_by_union = 0
        matched: set[int] = set()
        for memory in wanted:
            target = words(memory["text"])
            shares = [len(target & w) / max(1, len(target)) for w in item_words]
            best = max(range(len(items)), key=shares.__getitem__) if items else -1
            if best >= 0 and shares[best] >= overlap:
                covered += 1
                matched.add(best)
                agree += items[best].category == memory["category"]
            elif best >= 0 and _union_share(target, item_words) >= overlap:
                # The reference joined several facts the file states apart: atomic
                # items covering it together (at most MAX_UNION of them) count too.
                covered_by_union += 1
            else:
                misses.append((project, memory["text"], items[best].text if best >= 0 else ""))
        rows.append(
            {
                "project": project,
                "reference": len(wanted),
                "covered": covered,
                "covered_by_union": covered_by_union,
                "category_agree": agree,
                "items": len(items),
                "unmatched_items": len(items) - len(matched),
            }
        )
    return rows, misses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--overlap", type=float, default=0.6)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    rows, misses = evaluate(args.overlap)
    print(
        f"| repository | reference memories | covered by one item (≥ {args.overlap}) | "
        f"by ≤ {MAX_UNION} items together | missed | category agrees (one item) | items | "
        "items matching no reference |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        missed = r["reference"] - r["covered"] - r["covered_by_union"]
        print(
            f"| {r['project']} | {r['reference']} | {r['covered']} | {r['covered_by_union']} | "
            f"{missed} | {r['category_agree']} | {r['items']} | {r['unmatched_items']} |"
        )
    ref = sum(r["reference"] for r in rows)
    cov = sum(r["covered"] for r in rows)
    union = sum(r["covered_by_union"] for r in rows)
    agree = sum(r["category_agree"] for r in rows)
    print(
        f"| **total** | {ref} | {cov} ({cov / ref:.2f}) | {union} ({(cov + union) / ref:.2f} "
        f"together) | {ref - cov - union} | {agree} ({agree / max(1, cov):.2f}) | "
        f"{sum(r['items'] for r in rows)} | {sum(r['unmatched_items'] for r in rows)} |"
    )
    if args.show_misses:
        for project, text, best in misses:
            print(f"\nMISS {project}: {text}\n  best item: {best}")


if __name__ == "__main__":
    main()
