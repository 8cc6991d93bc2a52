"""Build benchmarks/data/parallel_outside/pairs.jsonl from public bilingual FAQ pages.

Usage:  .venv/bin/python benchmarks/build_parallel_outside.py MIRRORS_DIR

MIRRORS_DIR holds bare git clones named ``owner+name/repo`` (what the search tool's
``fetch`` writes; any ``git clone --bare`` laid out the same way works). Each source is
one Chinese page and its English counterpart at one commit (``SOURCES`` below, copied
into SOURCES.md). A page is cut into its question sections (a heading and the text up to
the next heading of that level); the two languages are paired by position, and a page
whose two versions do not have the same number of questions is skipped whole, because
one missing question would shift every pair after it. A pair is kept when both answers
say something (``MIN_ANSWER`` characters once links, images, HTML and fenced code are
taken out) and both headings are questions. Nothing here is written by us: the memories
are the maintainers' answers, the queries their headings.

Fenced code blocks are dropped from the answers: they are identical in both languages,
so they would let any model match a translation by its code alone; inline identifiers
(`getPopupContainer`) stay, as they would in a real note.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "data" / "parallel_outside" / "pairs.jsonl"
MIN_ANSWER = 40  # characters of English answer: "See Customize Theme." says nothing
MAX_ANSWER = 600  # a memory is a note, not a page: the answer is cut at a sentence end
_CJK = re.compile(r"[\u3400-\u9fff]")
# ant-design's headings end in an anchor, the same in both languages ({#faq-lose-focus}):
# a check that the pairing is right, then taken out (a shared token no note would have).
_ANCHOR = re.compile(r"\s*\{#[^}]*\}\s*$")


@dataclass(frozen=True)
class Source:
    repo: str
    commit: str
    zh: str
    en: str
    level: int  # heading level of one question
    under: str | None = None  # only questions below this heading (level - 1)
    # (zh index, en index) when the two pages order their questions differently; checked
    # by hand, and every question of either page not named here is left out.
    order: tuple[tuple[int, int], ...] | None = None


ANTD = "ant-design/ant-design"
ANTD_COMMIT = "2b258157ff20fb8948780e414dc1d74246aede40"
ANTD_COMPONENTS = (
    "app", "auto-complete", "badge", "breadcrumb", "button", "calendar", "card",
    "collapse", "config-provider", "date-picker", "float-button", "form", "icon", "image",
    "input", "input-number", "list", "menu", "mentions", "message", "modal",
    "notification", "progress", "qr-code", "radio", "segmented", "select", "skeleton",
    "slider", "space", "splitter", "steps", "table", "tabs", "tag", "timeline", "tooltip",
    "tour", "transfer", "tree", "tree-select", "typography", "upload", "watermark",
)
# docs/react/faq: the Chinese page has two questions the English one has not (icon files
# behind a firewall, switching the default language back to Chinese) and the mirror
# question sits elsewhere; paired by hand, heading by heading.
ANTD_FAQ_ORDER = tuple(zip(
    [*range(0, 11), 11, *range(12, 18), 18, 19, *range(21, 23), *range(24, 41)],
    [*range(0, 11), 12, *range(13, 19), 11, 19, *range(20, 22), *range(22, 39)],
    strict=True,
))
# Questions that are about the project, not about using it (no coding knowledge in them).
NOT_CODING = (
    "Why do I need a new API gateway", "How does Apache APISIX differ",
    "What is the performance impact", "Where can I find more answers",
    "Is there more reference documentation", "Do you guys have any channel",
    "How to spell Ant Design", "Why API request should be strict discussion",
)
SOURCES = (
    Source(ANTD, ANTD_COMMIT, "docs/react/faq.zh-CN.md", "docs/react/faq.en-US.md", 2,
           order=ANTD_FAQ_ORDER),
    *(Source(ANTD, ANTD_COMMIT, f"components/{c}/index.zh-CN.md",
             f"components/{c}/index.en-US.md", 3, "FAQ") for c in ANTD_COMPONENTS),
    Source("apache/apisix", "f519a0f04ccfd4c13b5d06caf34bcde8c8593980",
           "docs/zh/latest/FAQ.md", "docs/en/latest/FAQ.md", 2),
    Source("umijs/umi", "a4a2b588e29a83b21450b37e5a455bbf8e256ad3",
           "docs/docs/docs/introduce/faq.md", "docs/docs/docs/introduce/faq.en-US.md", 2),
)


def show(mirrors: Path, src: Source, path: str) -> str:
    git_dir = mirrors / src.repo.replace("/", "+") / "repo"
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{src.commit}:{path}"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{src.repo}@{src.commit[:10]}:{path}: {done.stderr.strip()}")
    return done.stdout


def sections(text: str, level: int, under: str | None) -> list[tuple[str, str]]:
    """(heading, body) of every heading of ``level``, optionally only inside the
    section whose heading (one level up) starts with ``under``."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # front matter
    # Fenced code, also indented inside a list item.
    text = re.sub(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", "", text, flags=re.S | re.M)
    out: list[tuple[str, str]] = []
    inside = under is None
    current: list[str] | None = None
    for line in text.splitlines():
        depth = len(line) - len(line.lstrip("#"))
        if 0 < depth <= level and line[depth:depth + 1] == " ":
            if under is not None and depth == level - 1:
                inside = line[depth:].strip().startswith(under)
            if current is not None:
                out.append((current[0], "\n".join(current[1:])))
                current = None
            if depth == level and inside:
                current = [line[depth:].strip()]
            continue
        if current is not None:
            current.append(line)
    if current is not None:
        out.append((current[0], "\n".join(current[1:])))
    return out


def clean(text: str) -> str:
    """Markdown to the plain text a note would hold."""
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)  # images
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links -> their text
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)
    # HTML tags (<br>, <code src=...>); a React element in inline code (<Select ...>)
    # is capitalised and stays.
    text = re.sub(r"</?[a-z][a-z0-9]*\b[^<>]*>", " ", text)
    text = re.sub(r"^\s*(?:[-*+]|\d+\.)\s+", "", text, flags=re.M)  # list markers
    text = re.sub(r"^\s*>\s?", "", text, flags=re.M)  # quotes
    text = re.sub(r"^\s*\|.*\|\s*$", " ", text, flags=re.M)  # tables
    text = text.replace("**", "").replace("__", "")
    return re.sub(r"\s+", " ", text).strip()


def cut(text: str) -> str:
    if len(text) <= MAX_ANSWER:
        return text
    ends = [m.end() for m in re.finditer(r"[.!?。！？](\s|$)|[。！？]", text[:MAX_ANSWER])]
    return text[: ends[-1]].strip() if ends else text[:MAX_ANSWER].rstrip() + "…"


def is_question(zh: str, en: str) -> bool:
    """FAQ headings only: API tables and demos ("Form.Item", "size") are not questions."""
    return bool(_CJK.search(zh)) and (
        en.rstrip().endswith("?") or re.match(
            r"(?i)(how|why|what|when|where|which|can|could|is|are|does|do|should|will)\b",
            en.strip()) is not None
        or zh.rstrip().endswith(("？", "?")) or any(w in zh for w in ("如何", "怎么", "为什么")))


def pairs(mirrors: Path) -> tuple[list[dict], list[str]]:
    rows: list[dict] = []
    skipped: list[str] = []
    seen: set[str] = set()
    for src in SOURCES:
        zh = sections(show(mirrors, src, src.zh), src.level, src.under)
        en = sections(show(mirrors, src, src.en), src.level, src.under)
        if src.order is not None:
            matched = [(zh[z], en[e]) for z, e in src.order]
        elif len(zh) == len(en):
            matched = list(zip(zh, en, strict=True))
        else:
            skipped.append(f"{src.repo}:{src.zh}: {len(zh)} zh / {len(en)} en questions")
            continue
        for (zq, zb), (eq, eb) in matched:
            z_answer, e_answer = cut(clean(zb)), cut(clean(eb))
            z_anchor, e_anchor = _ANCHOR.search(zq), _ANCHOR.search(eq)
            if z_anchor and e_anchor and z_anchor.group(0).strip() != e_anchor.group(0).strip():
                sys.exit(f"{src.repo}:{src.zh}: {zq!r} paired with {eq!r}")
            zq, eq = clean(_ANCHOR.sub("", zq)), clean(_ANCHOR.sub("", eq))
            if len(e_answer) < MIN_ANSWER or not _CJK.search(z_answer):
                continue
            if not is_question(zq, eq) or eq.startswith(NOT_CODING):
                continue
            if eq.lower() in seen or e_answer in seen:
                continue  # the same question on two component pages (calendar, date-picker)
            seen.update((eq.lower(), e_answer))
            rows.append({
                "id": f"o{len(rows) + 1:03d}", "repo": src.repo, "commit": src.commit,
                "path_zh": src.zh, "path_en": src.en,
                "en": e_answer, "zh": z_answer,
                "queries": {"en": eq, "zh": zq},
            })
    return rows, skipped


def write_pairs(out: Path, rows: list[dict], skipped: list[str], why: str) -> None:
    """Write the pairs as JSON lines, list what was skipped and count pairs per repo."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    for line in skipped:
        print(f"skipped{why}:", line, file=sys.stderr)
    by_repo: dict[str, int] = {}
    for r in rows:
        by_repo[r["repo"]] = by_repo.get(r["repo"], 0) + 1
    print(f"{len(rows)} pairs -> {out.relative_to(ROOT)}: {by_repo}")


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows, skipped = pairs(Path(sys.argv[1]))
    write_pairs(OUT, rows, skipped, " (question counts differ)")


if __name__ == "__main__":
    main()
