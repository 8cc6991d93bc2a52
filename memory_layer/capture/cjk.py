"""Rules for Chinese and Japanese prose, where the English phrasings never match.

The same kinds of lesson as ``extract`` (standing rules, preferences, decisions with
their reason, root causes, constraints the assistant found), keyed on the words these
languages use for them: 以后/今后 ("from now on"), 总是/务必 ("always"), 记住
("remember"), 决定 ("decided"), 根本原因/问题在于 ("the root cause"), 需要在/必须先
("must be … first"); 今後/必ず/覚えておいて/原因は/必要があります in Japanese.

The bar is the English one: no questions, no hedges (可能/也许/たぶん/かもしれ),
no plans of the assistant ("让我…", "我现在…", "まず…"), a decision needs its
reason, and an assistant constraint must name something concrete (a `code` span,
a path or an identifier) to be worth keeping.
"""

from __future__ import annotations

import re

__all__ = ["CJK", "cjk_candidate", "is_cjk"]

CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
MIN_CJK_CHARS = 8  # shorter than this says too little ("以后都这样")
MAX_CHARS = 300
# A cause needs room to name both sides: "…ため、…になります" in fewer characters is
# a remark, not a finding.
MIN_CAUSE_CJK_CHARS = 20

_QUESTION = re.compile(r"[?？吗嗎呢]\s*$|^(?:是否|能否|要不要|是不是)|ですか|でしょうか")
_HEDGE = re.compile(
    r"可能|也许|也許|或许|大概|好像|似乎|不确定|不確定|我觉得|我覺得|我认为|我猜|"
    r"たぶん|多分|かもしれ|と思う|と思います|でしょう|らしい|ようです|みたい"
)
# The assistant saying what it is about to do, not what it learned.
_PLAN = re.compile(
    r"^(?:让我|讓我|我来|我來|我会|我會|我先|我现在|我現在|现在|現在|接下来|接下來|先|首先|"
    r"然后|然後|下一步|好的|好，|明白|收到|了解|まず|次に|では|それでは|これから|確認し|"
    r"見てみ|調べ)"
)
_REASON = re.compile(r"因为|因為|由于|由於|所以|为了|為了|否则|否則|ため|ので|から[、，,]|なぜなら")
# "because" in the assistant's account of how something behaves (not "in order to").
_BECAUSE = re.compile(r"因为|因為|由于|由於|所以|(?<!の)ため[、，,に]?|ので")

_FROM_NOW_ON = re.compile(
    r"^(?:请|請|你)?(?:以后|以後|今后|今後|往后|往後|从现在开始|從現在開始|从现在起|從現在起|"
    r"从今天(?:开始|起)|從今天(?:開始|起)|之后都|之後都|"
    r"每次|任何时候|任何時候|これから(?:は)?|次から|今度から|常に|毎回)"
)
_ALWAYS = re.compile(
    r"^(?:我们|我們|请|請|你)?(?:总是|總是|一律|务必|務必|永远|永遠|绝对不要|絕對不要|"
    r"千万不要|千萬不要|一定不要|不许|不許|禁止|必ず|絶対に|決して)"
)
_REMEMBER = re.compile(r"^(?:请|請)?(?:记住|記住|记得|記得|别忘了|別忘了|覚えておいて|忘れないで)")
# "I hope from now on …", "I want questions asked this way": a standing preference.
_PREFER = re.compile(
    r"(?:我希望|我想要|我更喜欢|我更喜歡|我偏好|希望你).{0,60}(?:以后|以後|今后|今後|一直|都这样|都這樣|每次)"
    r"|好み(?:は|です)"
)
_DECISION = re.compile(
    r"^(?:我们|我們|我)?(?:决定|決定|选择了|選擇了|选用|選用|采用|採用)"
    r"|ことにし(?:た|ました)|に決め(?:た|ました)"
)
# A rule scoped to every case: "如果使用kachaka都要直接docker pip 引入kachaka sdk" ("any
# project that uses kachaka must pip-install its SDK", sigmarobotics/vlm-service).
# The rule must open its clause with the condition that scopes it (如果使用/凡是 "whenever
# … is used"): "所有文件都要改一下" ("change all the files") and "把这些改完之后都要跑一下测试"
# ("after these changes, run the tests") are one-off tasks.
EVERY_CASE_REACH = 40  # characters between the condition and 都要 ("must, in every case")
_EVERY_CASE = re.compile(
    r"(?:^|[，,；;。]\s*)(?:如果(?:使用|用|是)|只要(?:使用|用|是)|凡是|任何(?:使用|用)?)"
    rf".{{0,{EVERY_CASE_REACH}}}?(?:都要|都必須|都必须|一律|都得|都需要)"
)
# What holds for now, today, this time or this change only: 现在/今天/这次/暂时 ("now /
# today / this time / temporarily"), 这些 ("these"), 这个PR ("this PR").
_TRANSIENT = re.compile(
    r"现在|現在|目前|今天|今日|明天|这次|這次|这回|這回|暂时|暫時|刚才|剛才|马上|馬上|"
    r"这些|這些|(?:这个|這個)\s*(?:PR|pr|bug|分支|提交|commit|文件|檔案|改动|改動)|"
    r"给我看|給我看|发给我|發給我|告诉我|告訴我|今は|今日は|今回|とりあえず"
)
# "From now on / from today on" (从现在开始, 從今天起) names the moment a rule starts, not
# the moment it is for: its 现在/今天 is no transient word.
_SINCE_NOW = re.compile(r"[从從](?:现在|現在|今天|今日)(?:开始|開始|起)")
# "现在我们用pnpm，不用npm了" ("we use pnpm now, not npm any more"): a "now" set against
# what is no longer done is a change of practice, not a request for this moment.
_NOW = re.compile(r"现在|現在")
_NO_LONGER = re.compile(r"不再|不用[^，。,；;]{0,20}了|不要再用|不再使用")


def _transient(sentence: str) -> bool:
    """Whether the sentence holds for now, today or this change only (``_TRANSIENT``),
    leaving out the "now" of "from now on" and of "now X, no longer Y"."""
    text = _SINCE_NOW.sub("", sentence)
    if _NO_LONGER.search(text):
        text = _NOW.sub("", text)
    return bool(_TRANSIENT.search(text))


# The user fixing the design (sigmarobotics/vlm-service): a requirement ("另外，影片分析也是
# 必要部分"), the point of it ("所以重點是應該把V1 加上dict schema"), an approach refused with
# why ("這個切分會有問題，因為…").
_REQUIRED = re.compile(
    r"(?:也是|是|為|为)(?:必要|必需|必須|必须)(?:的|部分|功能)|也是(?:需要|必要)的\W*$"
)
_THE_POINT = re.compile(r"^(?:所以|因此)?(?:重點|重点|關鍵|关键)(?:是|在於|在于)(?:應該|应该|要)")
_REFUSED = re.compile(r"(?:會有問題|会有问题|行不通|不可行|不適合|不适合|不合適|不合适)")
# "這裡頭要注意一個點，isng analysis 是我們要用pydantic 給模型的，但token 是他們本來就會回的":
# the user pointing out a constraint.
_MIND = re.compile(r"^(?:這裡頭|这里头|這裡|这里|這邊|这边)?(?:要|需要)注意(?:一個點|一个点|一點|一点|的是)")
_ROOT_CAUSE = re.compile(
    r"(?:根本原因|根因|真正的原因|问题在于|問題在於|原因是|原因在于|原因在於|"
    r"根本原因は|原因は|問題は).{4,}"
)
_CONSTRAINT = re.compile(
    r"需要在|必须在|必須在|只能在|只能用|需要先|必须先|必須先|需要启用|需要啟用|不支持|不支援|"
    r"不能在|无法在|無法在|才能|必要があります|必要です|しかできない|できません|サポートされていない"
)
# Something concrete: a `code` span, a path, a flag or an identifier. Not any English
# word in the sentence: "take-home" is no flag, "bot/CI" or "SPACE/DORA" no path.
_CONCRETE = re.compile(
    r"`[^`]+`"
    # a path: two separators, a file extension, or rooted (./, ~/, /)
    r"|[\w.-]+/[\w.-]+/[\w./-]*|[\w.-]*/[\w-]+\.[A-Za-z]{1,5}\b|(?<![\w])(?:\.{1,2}|~)?/[\w-]+/"
    r"|[\w.-]+/(?=[\s，。、）)]|$)"
    r"|(?<![\w-])--?[a-z][\w-]+"  # a flag, not the "-home" of "take-home"
    r"|\b[A-Za-z]\w*[_.]\w+|\b[a-z]+[A-Z]\w*"  # snake_case, module.attr, camelCase
)


def is_cjk(sentence: str) -> bool:
    return len(CJK.findall(sentence)) >= MIN_CJK_CHARS


def _finish(sentence: str) -> str | None:
    text = re.sub(r"\s+", " ", sentence).strip().strip("-*•>").strip()
    if not text or len(text) > MAX_CHARS:
        return None
    return text if text[-1] in "。！!.)）`" else text + "。"


def cjk_candidate(sentence: str, role: str) -> tuple[str, str, float, str] | None:
    """``(text, category, confidence, extractor)`` for one CJK sentence, or ``None``."""
    if not is_cjk(sentence) or _QUESTION.search(sentence) or _HEDGE.search(sentence):
        return None
    if role == "user" and _transient(sentence):
        return None  # a request for this moment, not a rule
    text = _finish(sentence)
    if text is None:
        return None
    if role == "user":
        if _REMEMBER.match(sentence) or _FROM_NOW_ON.match(sentence) or _ALWAYS.match(sentence):
            return text, "convention", 0.85, "cjk.instruction"
        if _PREFER.search(sentence):
            return text, "preference", 0.8, "cjk.prefer"
        if _EVERY_CASE.search(sentence):
            return text, "convention", 0.75, "cjk.every_case"
        if _MIND.match(sentence):
            return text, "gotcha", 0.7, "cjk.mind"
        if (
            _REQUIRED.search(sentence)
            or _THE_POINT.match(sentence)
            or (_REFUSED.search(sentence) and _REASON.search(sentence))
        ):
            return text, "decision", 0.7, "cjk.design"
    if _DECISION.search(sentence) and _REASON.search(sentence):
        return text, "decision", 0.75 if role == "user" else 0.65, "cjk.decision"
    if role != "assistant" or _PLAN.match(sentence):
        return None
    if _ROOT_CAUSE.search(sentence):
        return text, "troubleshooting", 0.65, "cjk.root_cause"
    if _CONSTRAINT.search(sentence) and _CONCRETE.search(sentence):
        return text, "gotcha", 0.6, "cjk.constraint"
    if _BECAUSE.search(sentence) and _CONCRETE.search(sentence) and is_long(sentence):
        # "`settle_vault` は複数デモをバッチで束ねるため、…水増しになります": how the
        # project behaves and why, about something named.
        return text, "gotcha", 0.6, "cjk.cause"
    return None


def is_long(sentence: str) -> bool:
    return len(CJK.findall(sentence)) >= MIN_CAUSE_CJK_CHARS
