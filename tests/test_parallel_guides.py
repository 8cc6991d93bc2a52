"""benchmarks/build_parallel_guides.py, the set it built (benchmarks/data/parallel_guides/)
and the query plan of benchmarks/multilingual.py that runs on it: a real bilingual
contributor guide cut into atomic notes, paired across languages, and the translation task
that never queries a memory with its own text."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.test_parallel_outside import _mirror

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "parallel_guides"

# An excerpt of EasyTier/EasyTier's CONTRIBUTING.md and CONTRIBUTING_zh.md at
# 1e40350c896e2635fbb7cc2804819cd25001b028 (LGPL-3.0), as the maintainers wrote it: the
# English guide has a section the Chinese one has not (Building the WASI core), fenced code
# with "# comment" lines, numbered steps whose commands are fenced, and a bullet list.
EN_GUIDE = """# Contributing to EasyTier

### Building the WASI core

```bash
script/build-wasi-core.sh
```

This builds the `easytier-core` Go-host profile for `wasm32-wasip1`, then
optimizes it with the pinned official Binaryen release.

### Build Notes

1. Cross-compilation for ARM/MIPS requires additional setup
2. Windows builds need correct DLL files
3. Check `.github/workflows/` for detailed build configurations

## Development Workflow

1. Create a feature branch from `develop`:
   ```bash
   git checkout develop
   git checkout -b feature/your-feature-name
   ```

2. Make your changes following our coding standards

3. Write or update tests as needed

5. Submit a pull request to `develop`

### Running Tests

```bash
# Configure system (Linux)
sudo modprobe br_netfilter

# Run tests
cargo test --no-default-features --features=full --verbose
```

### Test Requirements

- Write tests for new features
- Maintain existing test coverage
- Tests should be isolated and repeatable
- Include both unit and integration tests
"""
ZH_GUIDE = """# EasyTier 贡献指南

### 构建注意事项

1. ARM/MIPS 的交叉编译需要额外配置
2. Windows 构建需要正确的 DLL 文件
3. 详细构建配置请参考 `.github/workflows/` 目录

## 开发工作流

1. 从 `develop` 分支创建特性分支：
   ```bash
   git checkout develop
   git checkout -b feature/your-feature-name
   ```

2. 按照代码规范进行修改

3. 编写或更新测试

5. 提交 Pull Request 到 `develop` 分支

### 运行测试

```bash
# 配置系统（Linux）
sudo modprobe br_netfilter

# 运行测试
cargo test --no-default-features --features=full --verbose
```

### 测试要求

- 为新功能编写测试
- 维护现有测试覆盖率
- 测试应该是独立且可重复的
- 包含单元测试和集成测试
"""
EASYTIER = "EasyTier/EasyTier"
KEEP = ("Build Notes", "Development Workflow", "Running Tests", "Test Requirements")


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while built
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def builder() -> ModuleType:
    return _load("build_parallel_guides")


def test_a_guide_is_cut_into_sections_of_notes(builder):
    sections = builder.guide_sections(EN_GUIDE)
    # "# Configure system (Linux)" inside fenced code is not a heading.
    assert [s.heading for s in sections] == [
        "Contributing to EasyTier", "Building the WASI core", "Build Notes",
        "Development Workflow", "Running Tests", "Test Requirements"]
    wasi, notes, workflow, running, _ = sections[1:]
    assert len(wasi.units) == 1 and wasi.units[0].startswith("This builds the `easytier-core`")
    assert "Go-host profile" in wasi.units[0] and "optimizes it" in wasi.units[0]  # one paragraph
    assert len(notes.units) == 3 and running.units == ()
    # A step keeps its indented lines; the fenced command is gone from it.
    assert len(workflow.units) == 4 and "git checkout" not in workflow.units[0]


def test_guides_pair_note_by_note_checked_by_their_anchors(builder, tmp_path, monkeypatch):
    mirrors, commit = _mirror(tmp_path, {"CONTRIBUTING.md": EN_GUIDE,
                                         "CONTRIBUTING_zh.md": ZH_GUIDE}, EASYTIER)
    source = builder.Source("EasyTier/EasyTier", commit, "CONTRIBUTING_zh.md", "CONTRIBUTING.md",
                            "LGPL-3.0", keep=KEEP, drop_en=("Building the WASI core",))
    monkeypatch.setattr(builder, "SOURCES", (source,))
    rows, skipped = builder.pairs(mirrors)
    assert skipped == []
    by_en = {r["en"]: r for r in rows}
    assert by_en["Check `.github/workflows/` for detailed build configurations"]["zh"] == (
        "详细构建配置请参考 `.github/workflows/` 目录")
    assert by_en["Submit a pull request to `develop`"]["zh"] == "提交 Pull Request 到 `develop` 分支"
    # The lead-in whose command was fenced code says nothing alone; so does a short line.
    assert not any(e.endswith(":") for e in by_en) and "Write tests for new features" not in by_en
    assert by_en["Tests should be isolated and repeatable"]["section"] == {
        "en": "Test Requirements", "zh": "测试要求"}
    assert len(rows) == 9 and all(r["commit"] == commit for r in rows)


def test_guides_that_do_not_pair_are_skipped_or_refused(builder, tmp_path, monkeypatch):
    shifted = ZH_GUIDE.replace("- 维护现有测试覆盖率\n", "")  # one note fewer: section skipped
    moved = ZH_GUIDE.replace("`.github/workflows/`", "`.github/actions/`")
    mirrors, commit = _mirror(tmp_path, {"en.md": EN_GUIDE, "shifted.md": shifted,
                                         "moved.md": moved}, EASYTIER)

    def run(zh: str, **drops: tuple[str, ...]):
        monkeypatch.setattr(builder, "SOURCES", (builder.Source(
            "EasyTier/EasyTier", commit, zh, "en.md", "LGPL-3.0", keep=KEEP, **drops),))
        return builder.pairs(mirrors)

    rows, skipped = run("shifted.md", drop_en=("Building the WASI core",))
    assert skipped == ["EasyTier/EasyTier: 'Test Requirements': 3 zh / 4 en units"]
    assert not any(r["section"]["en"] == "Test Requirements" for r in rows)
    rows, skipped = run("moved.md", drop_en=("Building the WASI core",))
    assert any("anchors differ" in s and "Check `.github" in s for s in skipped)
    # Without naming the English-only section the sections cannot be paired: stop.
    with pytest.raises(SystemExit, match="sections; name the extra ones"):
        run("moved.md")


def test_anchors_are_code_and_numbers(builder):
    assert builder.anchors("Coverage of 50% (see `codecov.yml`) on Python 3.11+") == {
        "codecov.yml", "50%", "3.11+"}
    assert builder.same_anchors("需要 `pytest` 与 3.11", "needs `pytest` and 3.11")
    assert not builder.same_anchors("用 `uv`", "use `pip` or `uv` or `conda`")
    assert builder.same_anchors("按照代码规范进行修改", "Make your changes following our standards")


def test_the_committed_set_is_what_its_sources_say():
    rows = [json.loads(line) for line in (DATA / "pairs.jsonl").read_text("utf-8").splitlines()]
    sources = (DATA / "SOURCES.md").read_text("utf-8")
    assert len(rows) >= 50 and len({r["id"] for r in rows}) == len(rows)
    assert len({r["repo"] for r in rows}) >= 3
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for r in rows:
        assert re.fullmatch(r"[0-9a-f]{40}", r["commit"]) and f"`{r['commit']}`" in sources
        assert f"`{r['path_zh']}`" in sources and f"`{r['path_en']}`" in sources
        assert cjk.search(r["zh"]) and not cjk.search(r["en"]), r["id"]
        assert "```" not in r["en"] + r["zh"] and not r["en"].endswith(":")
    counts = re.search(r"\*\*total\*\* \|(?: \|)* \*\*(\d+)\*\*", sources)
    assert counts and int(counts.group(1)) == len(rows)
    assert len({r["en"] for r in rows}) == len(rows)


ROWS = [{"id": f"m{i}", "en": f"english note {i}", "zh": f"中文笔记 {i}", "project": "p",
         "split": "s", "repo": "acme/x", "section": {"en": f"Section {i // 2}",
                                                     "zh": f"章节 {i // 2}"}}
        for i in range(4)]


def test_text_queries_never_hold_the_memory_they_look_for(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORY_LAYER_HOME", str(tmp_path))
    plan = _load("multilingual").plan(ROWS, "text")
    asked: dict[str, list] = {}
    for _, texts, runs in plan:
        stored = {mid: text for mid, text, _ in texts}
        for label, queries in runs:
            for (target,), query, _ in queries:
                assert stored[target] != query  # its translation, never itself
                assert {query, stored[target]} == {ROWS[int(target[1])]["en"],
                                                   ROWS[int(target[1])]["zh"]}
                asked.setdefault(label, []).append(target)
    # Both mixed stores together ask for every memory once in each language.
    assert sorted(asked["mixed, zh query"]) == sorted(asked["mixed, en query"]) == [
        "m0", "m1", "m2", "m3"]
    assert sorted(asked["zh->en"]) == ["m0", "m1", "m2", "m3"]


def test_section_headings_are_the_questions_of_a_guide_set(monkeypatch, tmp_path):
    monkeypatch.setenv("MEMORY_LAYER_HOME", str(tmp_path))
    bench = _load("multilingual")
    assert bench.questions(ROWS, "zh") == [(("m0", "m1"), "章节 0", "s"),
                                           (("m2", "m3"), "章节 1", "s")]
    ceiling = dict((label, q) for _, _, runs in bench.plan(ROWS, "question", ceiling=True)
                   for label, q in runs)
    assert ceiling["en->en"] == [(("m0", "m1"), "Section 0", "s"), (("m2", "m3"), "Section 1", "s")]
    with pytest.raises(ValueError, match="--ceiling needs --query-kind question"):
        bench.plan(ROWS, "text", ceiling=True)
