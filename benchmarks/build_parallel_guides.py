"""Build benchmarks/data/parallel_guides/pairs.jsonl: atomic coding notes that public
repositories ship in both Chinese and English (contributor guides).

Usage:  .venv/bin/python benchmarks/build_parallel_guides.py MIRRORS_DIR

MIRRORS_DIR holds bare git clones named ``owner+name/repo`` (what the search tool's
``fetch`` writes; ``git clone --bare`` laid out the same way works). Each source is one
Chinese guide and its English counterpart at one commit (``SOURCES``, copied into
SOURCES.md). The set is the translation task of issue 11 point 3 on other people's
coding notes: the memory is a note in one language, the query the same note in the
other.

How a guide becomes notes, without our judgement on any one pair:

1. Fenced code is taken out first (it is identical in both languages and would match a
   translation by itself; it also hides ``# comment`` lines that look like headings).
2. The guide is cut into sections at its headings, and a section into *units*: one
   top-level list item (its nested items and indented lines with it) or one paragraph.
   A unit is what a memory holds: a command, a convention, a rule, a gotcha.
3. The two languages' sections are paired by position, after the sections one language
   has and the other has not (named per source, checked by hand) are left out; two
   paired sections whose heading levels differ stop the build (never mispair).
4. Inside a pair of sections the units are paired by position when both have the same
   number; a section whose counts differ is skipped whole, since one missing sentence
   would shift every pair after it.
5. A pair is checked by its anchors, what a translation keeps unchanged: inline code
   spans and tokens with digits (``pytest tests``, ``1.92``, ``30%``). When either side
   has anchors, fewer than half of them shared rejects the pair (a translation that
   says more or less than its original is not a parallel note).
6. Only sections about the code (``keep``, per source: setup, build, test, commit and
   code rules) are used; welcome text, roadmaps and help links are not coding notes.
   Units shorter than ``MIN_NOTE`` characters once the code is out, and lead-ins that
   end in a colon ("Clone your fork and add the upstream remote:", whose command was
   the fenced code), say nothing alone and are dropped.

Inline identifiers stay, as they would in a real note. Nothing here is written by us.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_parallel_outside import clean, cut, show, write_pairs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "data" / "parallel_guides" / "pairs.jsonl"
MIN_NOTE = 30  # characters of English: "Clone the repository:" without its command is empty
MIN_SHARED = 0.5  # share of anchors both sides keep for a pair to count as a translation
_CJK = re.compile(r"[\u3400-\u9fff]")
_FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.S | re.M)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^( {0,1})([-*+]|\d+[.)])\s+")
_INLINE = re.compile(r"`([^`\n]+)`")
_DIGITS = re.compile(r"[A-Za-z0-9._/%+-]*\d[A-Za-z0-9._/%+-]*")


@dataclass(frozen=True)
class Source:
    repo: str
    commit: str
    zh: str
    en: str
    licence: str
    keep: tuple[str, ...]  # English headings (prefixes) whose sections hold coding notes
    drop_en: tuple[str, ...] = ()  # English headings the Chinese guide has not
    drop_zh: tuple[str, ...] = ()  # Chinese headings the English guide has not


@dataclass(frozen=True)
class Section:
    level: int
    heading: str
    units: tuple[str, ...]


SOURCES = (
    Source("agentscope-ai/agentscope", "da00849f2c3db60b16edaf2371ae1d863f341ae2",
           "CONTRIBUTING_zh.md", "CONTRIBUTING.md", "Apache-2.0",
           keep=("2. Responsible Use of AI", "Step ", "4. Important Notices", "Chat Model",
                 "Agent", "Workspace", "Examples")),
    Source("EasyTier/EasyTier", "1e40350c896e2635fbb7cc2804819cd25001b028",
           "CONTRIBUTING_zh.md", "CONTRIBUTING.md", "LGPL-3.0",
           keep=("Required Tools", "Platform-Specific", "Installation Steps", "Building",
                 "Build Notes", "Development Workflow", "Running Tests", "Test Requirements",
                 "Pull Request Guidelines"),
           drop_en=("Building the WASI core",)),
    Source("alibaba/higress", "4e0d69143208d713e88880d5af1c86f4386e425c",
           "CONTRIBUTING_CN.md", "CONTRIBUTING_EN.md", "Apache-2.0",
           keep=("Workspace Preparation", "Branch Definition", "Commit Message",
                 "Commit Content", "PR Description", "Special Requirements",
                 "Test requirements", "How to write tests")),
)


def guide_sections(text: str) -> list[Section]:
    """The guide's sections, each cut into units (see the module docstring, 1-2)."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # front matter
    text = re.sub(r"<!--.*?-->", "", _FENCE.sub("", text), flags=re.S)
    sections: list[Section] = []
    level, heading, units, current = 0, "", [], []
    item = False  # whether the unit being read is a list item (indented lines join it)

    def flush() -> None:
        if current:
            units.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        head = _HEADING.match(line)
        if head:
            flush()
            if heading or units:
                sections.append(Section(level, heading, tuple(units)))
            level, heading, units = len(head.group(1)), head.group(2), []
            continue
        if not line.strip():
            if not item:
                flush()  # a blank line ends a paragraph, not a list item
            continue
        if line.lstrip().startswith("|"):
            flush()  # tables are not notes
            continue
        if _ITEM.match(line):
            flush()
            item = True
            current.append(line)
        elif item and line.startswith((" ", "\t")):
            current.append(line)  # nested item or continuation of this one
        else:
            if item:
                flush()
                item = False
            current.append(line)
    flush()
    sections.append(Section(level, heading, tuple(units)))
    return sections


def anchors(text: str) -> set[str]:
    """What a translation keeps as it is: inline code and tokens with digits."""
    spans = {s.strip().lower() for s in _INLINE.findall(text)}
    rest = _INLINE.sub(" ", text)
    return spans | {t.lower().strip(".") for t in _DIGITS.findall(rest) if t.strip(".")}


def same_anchors(zh: str, en: str) -> bool:
    a, b = anchors(zh), anchors(en)
    return not (a or b) or len(a & b) / len(a | b) >= MIN_SHARED


def paired_sections(src: Source, zh: list[Section], en: list[Section]
                    ) -> list[tuple[Section, Section]]:
    """Sections paired by position once each language's extra sections are out."""
    zh = [s for s in zh if not s.heading.startswith(src.drop_zh or ("\0",))]
    en = [s for s in en if not s.heading.startswith(src.drop_en or ("\0",))]
    if len(zh) != len(en):
        sys.exit(f"{src.repo}:{src.zh}: {len(zh)} zh / {len(en)} en sections; name the "
                 "extra ones in drop_zh / drop_en")
    for z, e in zip(zh, en, strict=True):
        if z.level != e.level:
            sys.exit(f"{src.repo}:{src.zh}: {z.heading!r} (h{z.level}) paired with "
                     f"{e.heading!r} (h{e.level})")
    return list(zip(zh, en, strict=True))


def pairs(mirrors: Path) -> tuple[list[dict], list[str]]:
    rows: list[dict] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for src in SOURCES:
        zh_text, en_text = show(mirrors, src, src.zh), show(mirrors, src, src.en)
        for zs, es in paired_sections(src, guide_sections(zh_text), guide_sections(en_text)):
            if not es.heading.startswith(src.keep):
                continue
            if len(zs.units) != len(es.units):
                skipped.append(f"{src.repo}: {es.heading!r}: {len(zs.units)} zh / "
                               f"{len(es.units)} en units")
                continue
            for zu, eu in zip(zs.units, es.units, strict=True):
                z, e = cut(clean(zu)), cut(clean(eu))
                if len(e) < MIN_NOTE or not _CJK.search(z) or _CJK.search(e) or e in seen:
                    continue
                if e.endswith(":") or z.endswith(("：", ":")):
                    continue  # a lead-in to code or a list that follows: no note alone
                if not same_anchors(z, e):
                    skipped.append(f"{src.repo}: {es.heading!r}: anchors differ: {e[:60]!r}")
                    continue
                seen.add(e)
                rows.append({
                    "id": f"g{len(rows) + 1:03d}", "repo": src.repo, "commit": src.commit,
                    "path_zh": src.zh, "path_en": src.en,
                    "section": {"en": clean(es.heading), "zh": clean(zs.heading)},
                    "en": e, "zh": z,
                })
    return rows, skipped


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows, skipped = pairs(Path(sys.argv[1]))
    write_pairs(OUT, rows, skipped, "")


if __name__ == "__main__":
    main()
