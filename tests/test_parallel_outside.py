"""benchmarks/build_parallel_outside.py and the set it built (benchmarks/data/parallel_outside/):
FAQ pages of a real git repository cut into question/answer pairs, and the committed set
checked against its SOURCES.md."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "parallel_outside"

ZH_PAGE = """---
title: FAQ
---

## API

### size

表格里的说明，不是问题。

## FAQ

### 为什么 `resetFields` 会重新 mount 组件？ {#faq-reset-fields-mount}

`resetFields` 会重置整个 Field，因而其子组件也会重新 mount 从而消除自定义组件可能存在的副作用。

```js
form.resetFields();
```

### 如何关闭点击波纹效果？ {#faq-close-wave-effect}

使用 [ConfigProvider](/components/config-provider) 的 `wave` 属性，例如 `<ConfigProvider wave={{ disabled: true }}>`。<br />
"""
EN_PAGE = """---
title: FAQ
---

## API

### size

A table row, not a question.

## FAQ

### Why will `resetFields` re-mount component? {#faq-reset-fields-mount}

`resetFields` will re-mount all components under Field to clean up customize component side effects.

```js
form.resetFields();
```

### How to close the click wave effect? {#faq-close-wave-effect}

Use the `wave` prop of [ConfigProvider](/components/config-provider), for example `<ConfigProvider wave={{ disabled: true }}>`.<br />
"""


@pytest.fixture(scope="module")
def builder() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_parallel_outside", ROOT / "benchmarks" / "build_parallel_outside.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while built
    spec.loader.exec_module(module)
    return module


def _mirror(tmp_path: Path, files: dict[str, str],
            repo: str = "acme/docs") -> tuple[Path, str]:
    """A bare clone laid out as the fetch tool writes it: MIRRORS/owner+name/repo."""
    work = tmp_path / "work"
    work.mkdir()
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "pages"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--bare", str(work),
                    str(mirrors / repo.replace("/", "+") / "repo")], check=True)
    return mirrors, commit


def test_faq_sections_become_answer_and_question_pairs(builder, tmp_path, monkeypatch):
    mirrors, commit = _mirror(tmp_path, {"faq.zh-CN.md": ZH_PAGE, "faq.en-US.md": EN_PAGE})
    source = builder.Source("acme/docs", commit, "faq.zh-CN.md", "faq.en-US.md", 3, "FAQ")
    monkeypatch.setattr(builder, "SOURCES", (source,))
    rows, skipped = builder.pairs(mirrors)
    assert skipped == [] and [r["queries"]["en"] for r in rows] == [
        "Why will `resetFields` re-mount component?", "How to close the click wave effect?"]
    first, second = rows
    assert first["queries"]["zh"] == "为什么 `resetFields` 会重新 mount 组件？"  # anchor gone
    assert "form.resetFields();" not in first["en"] and "```" not in first["zh"]
    # Links keep their text, HTML goes, a React element in inline code stays.
    assert second["en"] == ("Use the `wave` prop of ConfigProvider, for example "
                            "`<ConfigProvider wave={{ disabled: true }}>`.")
    assert (first["repo"], first["commit"], first["path_en"]) == ("acme/docs", commit,
                                                                 "faq.en-US.md")


def test_pages_that_do_not_pair_are_skipped_or_refused(builder, tmp_path, monkeypatch):
    shorter = EN_PAGE.split("### How to close")[0]
    swapped = EN_PAGE.replace("{#faq-reset-fields-mount}", "{#faq-other}")
    mirrors, commit = _mirror(tmp_path, {"zh.md": ZH_PAGE, "short.md": shorter,
                                         "swapped.md": swapped})
    monkeypatch.setattr(builder, "SOURCES", (
        builder.Source("acme/docs", commit, "zh.md", "short.md", 3, "FAQ"),))
    rows, skipped = builder.pairs(mirrors)
    assert rows == [] and skipped == ["acme/docs:zh.md: 2 zh / 1 en questions"]
    # Two headings whose anchors differ are not the same question: stop, never mispair.
    monkeypatch.setattr(builder, "SOURCES", (
        builder.Source("acme/docs", commit, "zh.md", "swapped.md", 3, "FAQ"),))
    with pytest.raises(SystemExit, match="paired with"):
        builder.pairs(mirrors)


def test_the_committed_set_is_what_its_sources_say():
    rows = [json.loads(line) for line in (DATA / "pairs.jsonl").read_text("utf-8").splitlines()]
    sources = (DATA / "SOURCES.md").read_text("utf-8")
    assert len(rows) >= 50 and len({r["id"] for r in rows}) == len(rows)
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for r in rows:
        assert re.fullmatch(r"[0-9a-f]{40}", r["commit"]) and f"`{r['commit']}`" in sources
        assert f"`{r['path_zh']}`" in sources and f"`{r['path_en']}`" in sources
        assert cjk.search(r["zh"]) and cjk.search(r["queries"]["zh"])
        assert not cjk.search(r["en"] + r["queries"]["en"]), r["id"]
        assert "{#" not in r["queries"]["en"] + r["queries"]["zh"] and "```" not in r["en"]
    counts = re.search(r"\*\*total\*\* \| \| \| \| \| \*\*(\d+)\*\*", sources)
    assert counts and int(counts.group(1)) == len(rows)
    assert len({r["en"] for r in rows}) == len(rows)  # no question twice (calendar/date-picker)
