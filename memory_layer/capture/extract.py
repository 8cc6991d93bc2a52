"""Rule-based extraction of memories from user and assistant prose.

Precision matters more than recall here: a wrong memory is injected into
future sessions and costs more than a missed one (claude-mem stores dead-end
hypotheses as facts, see docs/peers.md).  So every extractor

* looks only at prose: code blocks, quoted lines, tool output, system
  reminders and command tags are removed first;
* fires only on explicit phrasings ("remember that", "we decided … because",
  "the root cause was") at the start of a clause;
* refuses questions, hedges ("maybe", "might", "I think"), hypotheticals and
  temporary instructions ("for now");
* returns a self-contained sentence (filler stripped, the reason kept) of
  bounded length.

Instructions are only taken from the user: when the assistant says "always"
it is describing code, not setting a rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from memory_layer.capture.candidate import Candidate, dedupe
from memory_layer.capture.cjk import cjk_candidate
from memory_layer.capture.classify import (
    ENVIRONMENT,
    STYLE,
    count_words,
    instruction_category,
    is_rule_verb,
)
from memory_layer.capture.notes import written_notes
from memory_layer.capture.prose import prose_sentences
from memory_layer.capture.provenance import RELAYED, ToolText
from memory_layer.capture.reversal import replaced_term
from memory_layer.capture.transcript import Entry

__all__ = ["extract", "extract_from_entries", "prose_sentences"]

MIN_CHARS = 12
MAX_CHARS = 400
MIN_BODY_WORDS = 3

# --- shared guards ----------------------------------------------------------

_FILLER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|alright|all right|right|well|hmm+|oh|also|and|but|btw|"
    r"by the way|fyi|actually|anyway|great|cool|nice|perfect|thanks|thank you|"
    r"one more thing|one thing|hey|hi|yeah|yes|yep|please|just|ah|ps|"
    r"also note|quick note|important)\b[\s,:;.!\-–—]*"
    # "No, …" answers; "no rails wrapper either way" is a rule and keeps its "no".
    r"|(?:no|nope)\b\s*[,:;.!\-–—][\s,:;.!\-–—]*)+",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"\?(?:[\s\"')\]]|$)")
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|possibly|probably|likely|presumably|not sure|unsure|"
    r"wonder|what if|should we|could we|would it|do we|shall we|i guess|i think|"
    r"i suspect|i believe|i suppose|seems?|appears? to|could be|may be|hypothetically|"
    r"let'?s say|suppose|imagine|for now|this time|temporarily|for the moment|"
    r"not always|almost always|never mind|nevermind|if only|kidding)\b",
    re.IGNORECASE,
)
# Reported speech: the rule belongs to someone else ("the docs say …").
_REPORTED = re.compile(
    r"\b(?:says?|said|saying|claims?|according to|the docs|the readme|the error|"
    r"the message|the log|the output|prints?|printed|warns?)\b",
    re.IGNORECASE,
)
_PRONOUN_START = re.compile(r"^(?:it|this|that|they|these|those|he|she)\b", re.IGNORECASE)
_DEAD_END = re.compile(
    r"\b(?:wasn'?t it|was not it|not the (?:issue|problem|cause|culprit)|red herring|"
    r"unrelated|false alarm)\b",
    re.IGNORECASE,
)


# A label in front of the rule or finding: "Note: …", "One more thing to keep in mind:
# …", "Found a real bug: …", "One detail worth flagging before you review: …".  The
# label hides the rule from the patterns below, so it is cut off (and remembered: a
# labelled finding of the assistant is a candidate by itself, see ``_finding``).
_LEAD_IN = re.compile(
    r"^(?:(?:one more thing|one thing|something|also|and)\s+)?"
    r"(?P<label>(?:(?:one |a |another )?(?:detail|thing|point|gotcha) )?"
    r"(?:to keep in mind|to remember|worth (?:noting|flagging|knowing|remembering)"
    r"(?: before you \w+)?)|note|nb|ps|reminder|tip|rule|fyi|important|"
    r"key (?:finding|point|takeaway|insight)|takeaway|lesson(?: learned)?|"
    r"found (?:a|the|one) (?:real |actual |subtle )?(?:bug|issue|problem|cause)|"
    r"(?:the )?(?:root cause|real cause|actual cause|fix|catch|trick|culprit))\s*:\s*"
    r"(?P<body>\S.*)",
    re.IGNORECASE,
)


def _strip_filler(sentence: str) -> str:
    sentence = _FILLER.sub("", sentence).strip()
    m = _LEAD_IN.match(sentence)
    return m.group("body").strip() if m else sentence


def _inside_quotes(sentence: str, pos: int) -> bool:
    """True when ``pos`` falls inside a "double-quoted" or “curly-quoted” span."""
    for m in re.finditer(r"\"[^\"]*\"|“[^”]*”", sentence):
        if m.start() < pos < m.end():
            return True
    return False


def _finish(text: str) -> str | None:
    """Tidy a candidate sentence; ``None`` if it is out of bounds."""
    text = re.sub(r"\s+", " ", text).strip().rstrip(",;:–—-").strip()
    if not text:
        return None
    if text[0].islower():
        text = text[0].upper() + text[1:]
    if text[-1] not in ".!`)\"'":
        text += "."
    if not MIN_CHARS <= len(text) <= MAX_CHARS:
        return None
    return text


def _first_word(text: str) -> str:
    m = re.match(r"[`'\"]?([A-Za-z]+)", text)
    return m.group(1).lower() if m else ""


def _usable(sentence: str) -> bool:
    return not (_QUESTION.search(sentence) or _HEDGE.search(sentence))


# A following sentence that gives the reason belongs to the memory.
_REASON_NEXT = re.compile(
    r"^(?:because|since|that'?s because|this is because|the reason (?:is|was)|"
    r"otherwise|it'?s because|that way)\b",
    re.IGNORECASE,
)


def _with_reason(sentences: list[str], i: int, text: str) -> tuple[str, int]:
    """Append sentence ``i+1`` when it states the reason; returns (text, consumed)."""
    if i + 1 < len(sentences):
        nxt = _strip_filler(sentences[i + 1])
        if _REASON_NEXT.match(nxt) and _usable(nxt):
            return f"{text.rstrip('.')}. {nxt}", 1
    return text, 0


# --- extractors -------------------------------------------------------------
# Each takes (sentences, index) and returns (candidate or None, extra sentences
# consumed).  They receive sentences with filler already stripped.

Extractor = Callable[[list[str], int], tuple[Candidate | None, int]]

# "always"/"never" counts at the start of the sentence or of a clause after
# punctuation; "… and never got it working" is narration, not a rule.
_CLAUSE = r"(?:^|[,;:–—]\s*)"
# "we always squash-merge" is a rule; "you always forget …" is a complaint.
_SUBJECT = (
    r"(?:we\s+(?:should\s+|must\s+|need to\s+)?|you\s+(?:should|must|need to)\s+|"
    r"make sure (?:to|you|we)\s+)?"
)
_ALWAYS_NEVER = re.compile(
    _CLAUSE + _SUBJECT + r"(?P<kw>always|never|don'?t ever|do not ever)\s+(?P<body>.+)",
    re.IGNORECASE,
)
_REMEMBER = re.compile(
    r"^(?:(?:please\s+)?remember|keep in mind|don'?t forget|note for (?:the )?future|"
    r"for future reference)(?:\s+that\b|\s*[:,\-–—])\s*(?P<body>.+)",
    re.IGNORECASE,
)
_FROM_NOW_ON = re.compile(
    r"^(?:from now on|going forward|in (?:the )?future|in this (?:repo|project|codebase))"
    r"\s*,?\s*(?P<body>.+)",
    re.IGNORECASE,
)
_USE_NOT = re.compile(
    r"^(?:we\s+(?:use|go with|stick with|standardi[sz]e on)|use|i'?d rather use)\s+"
    r"(?P<a>[^,;]+?),?\s+(?:not|instead of|rather than|over)\s+(?P<b>[^,;.]+)"
    r"|^(?:we\s+prefer|i\s+(?:really\s+)?prefer|prefer)\s+"
    r"(?P<pa>[^,;]+?),?\s+(?:over|to|rather than|instead of)\s+(?P<pb>[^,;.]+)",
    re.IGNORECASE,
)
# "never do that again": the rule is in the previous turn, not in this sentence.
_VAGUE = re.compile(r"^\w+\s+(?:it|that|this|them|those|so)\b", re.IGNORECASE)
_PREFER = re.compile(
    r"^(?:i\s+(?:really\s+)?prefer|i'?d rather|prefer)\s+(?P<body>.+)", re.IGNORECASE
)
# The rest of a preference, said next: "prefer ruby, … . no rails wrapper either way".
_CONTINUES = re.compile(r"^(?:no|not|never|don'?t|do not|avoid)\s+\w", re.IGNORECASE)


def _instruction(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not _usable(s):
        return None, 0
    m = _REMEMBER.match(s)
    if m:
        body = m.group("body")
        if count_words(body) < MIN_BODY_WORDS:
            return None, 0
        text, used = _with_reason(sentences, i, body)
        text = _finish(text)
        if not text:
            return None, 0
        pair = _USE_NOT.match(_FILLER.sub("", body))
        if pair:
            category = instruction_category(
                text, pair.group("a") or pair.group("pa"), pair.group("b") or pair.group("pb")
            )
        else:
            category = instruction_category(text)
        if category == "convention" and ENVIRONMENT.search(text):
            category = "environment"
        return Candidate(text, category, 0.9, "instruction.remember", s), used
    m = _USE_NOT.match(s)
    if m and count_words(m.group("a") or m.group("pa")) <= 5:
        text, used = _with_reason(sentences, i, s)
        text = _finish(text)
        if not text:
            return None, 0
        category = instruction_category(
            text, m.group("a") or m.group("pa"), m.group("b") or m.group("pb")
        )
        if category == "convention" and s.lower().startswith(("i prefer", "prefer", "i'd rather")):
            category = "preference"
        return Candidate(text, category, 0.9, "instruction.prefer", s), used
    m = _FROM_NOW_ON.match(s)
    if m and count_words(m.group("body")) >= MIN_BODY_WORDS:
        text, used = _with_reason(sentences, i, m.group("body"))
        text = _finish(text)
        if not text:
            return None, 0
        return Candidate(text, instruction_category(text), 0.9, "instruction.from_now_on", s), used
    m = _ALWAYS_NEVER.search(s)
    if (
        m
        and count_words(m.group("body")) >= 2
        and is_rule_verb(_first_word(m.group("body")))
        and not (_VAGUE.match(m.group("body")) and count_words(m.group("body")) < 8)
        and not _inside_quotes(s, m.start("kw"))
    ):
        if _REPORTED.search(s[: m.start("kw")]):
            return None, 0
        text, used = _with_reason(sentences, i, s)
        text = _finish(text)
        if not text:
            return None, 0
        extractor = "instruction." + m.group("kw").lower().split()[0].replace("'", "")
        return Candidate(text, instruction_category(text), 0.9, extractor, s), used
    m = _PREFER.match(s)
    if m and count_words(m.group("body")) >= MIN_BODY_WORDS:
        text, used = _with_reason(sentences, i, s)
        nxt = sentences[i + 1] if i + 1 < len(sentences) else ""
        if not used and _CONTINUES.match(nxt) and _usable(nxt):
            text, used = f"{text.rstrip('.')}. {nxt[0].upper()}{nxt[1:]}", 1
        text = _finish(text)
        if not text:
            return None, 0
        category = "coding_style" if STYLE.search(text) else "preference"
        return Candidate(text, category, 0.85, "instruction.prefer", s), used
    return None, 0


_REASON = (
    r"\b(?:because|since|so that|given that|due to|in order to|as it|as they|as we|to avoid|"
    r"so (?:we|you|it|nobody|no one) (?:don'?t|do not|can|won'?t|never|no longer))\b"
)
# A decision that names what it was chosen over needs no separate reason: "we decided to
# use Vitest instead of Jest" already says what not to do.
_ALTERNATIVE = re.compile(r"\b(?:instead of|rather than|in place of)\b|,\s*not\s+\w", re.I)
_DECISION = re.compile(
    r"^(?:(?:we|i|the team)(?:'ve| have)?\s+(?:finally\s+)?"
    r"(?:decided(?:\s+to|\s+on|\s+against)?|chose|chosen|went with|opted (?:for|to)|"
    r"settled on|agreed (?:to|on)|picked)\b"
    r"|(?:we|i)(?:'re| are)\s+going\s+with\b|decision\s*:)"
    r"(?P<rest>.+)",
    re.IGNORECASE,
)
# A reversal names the decision it replaces: "Fundy moves to a separate repository
# (supersedes ADR-018's monorepo decision)".  A reversal is exactly what a later session
# must not get wrong, so it needs no separate reason.
_REVERSAL = re.compile(
    r"^(?P<rest>.{12,}?\b(?:supersed(?:es|ed|ing)|replac(?:es|ed|ing) (?:the |our |its )?"
    r"(?:earlier|previous|old|original) (?:decision|plan|approach|choice)|revers(?:es|ed|ing) "
    r"(?:the |our )?(?:earlier |previous )?decision)\b.*)",
    re.IGNORECASE,
)
# "docs/adr/0018-….md now marks …": a report of an edit, about a file, not a decision.
_EDIT_REPORT = re.compile(r"^`?[\w./-]+\.(?:md|py|ts|tsx|js|rb|go|rs|json|ya?ml|toml)\b", re.I)
_LETS = re.compile(
    r"^let'?s\s+(?:use|go with|stick with|switch to|keep|move to)\b(?P<rest>.+)", re.IGNORECASE
)


def _decision(role: str) -> Extractor:
    confidence = 0.75 if role == "user" else 0.65

    def run(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
        s = sentences[i]
        if not _usable(s):
            return None, 0
        m = _DECISION.match(s) or (_LETS.match(s) if role == "user" else None)
        reversal = None if m else _REVERSAL.match(s)
        m = m or reversal
        if not m or count_words(m.group("rest")) < 1:
            return None, 0
        if reversal and (_NARRATION.search(s) or _EDIT_REPORT.match(s) or not _CONCRETE.search(s)):
            return None, 0
        text, used = s, 0
        explained = re.search(_REASON, m.group("rest"), re.IGNORECASE)
        if not explained and not reversal and not _ALTERNATIVE.search(m.group("rest")):
            text, used = _with_reason(sentences, i, s)
            if not used:
                return None, 0  # a decision without its reason is not worth keeping
        text = _finish(text)
        if not text:
            return None, 0
        return Candidate(text, "decision", confidence, "decision", s), used

    return run


_ROOT_CAUSE = re.compile(
    r"^(?:the\s+)?(?:(?:actual|real|underlying)\s+)?"
    r"(?:root cause|issue|problem|bug|culprit|cause of (?:the|this) \w+)"
    r"\s+(?:was|turned out to be)(?:\s+that)?\s+(?P<body>.+)",
    re.IGNORECASE,
)
_TURNS_OUT = re.compile(r"^(?:it\s+)?turn(?:s|ed) out(?:\s+that)?,?\s+(?P<body>.+)", re.IGNORECASE)
_FIX_NEXT = re.compile(
    r"^(?:the fix (?:was|is)|i fixed (?:it|this) by|fixed (?:it|this) by|the solution (?:was|is)|"
    r"(?:adding|setting|pinning|installing|using|switching to|running)\b.+\bfix(?:es|ed)\b)",
    re.IGNORECASE,
)
_TROUBLE_WORDS = re.compile(
    r"\b(?:caus\w+|fail\w*|broke\w*|crash\w*|error\w*|bug|flak\w+|hang\w*|timeout|"
    r"exception|wrong|leak\w*|missing|stale)\b",
    re.IGNORECASE,
)
_GOTCHA_LABEL = re.compile(
    r"^(?:gotcha|watch out|careful|caveat|pitfall|heads up|footgun)\s*[:!–—-]\s*(?P<body>.+)",
    re.IGNORECASE,
)
_NOTE_THAT = re.compile(r"^(?:note|beware|be aware)\s+that\s+(?P<body>.+)", re.IGNORECASE)
_CONSTRAINT = re.compile(
    r"\b(?:only|must|requires?|unless|won'?t|doesn'?t|does not|"
    r"cannot|can'?t|isn'?t supported|not supported|silently|by default|otherwise|never)\b"
    r"|,\s+not\s",
    re.IGNORECASE,
)
_ONLY_WORKS = re.compile(
    r"\b(?:only works|only runs|only applies|is only (?:read|loaded|applied))\s+"
    r"(?:if|when|with|after|on|for)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"^(?:i|i'(?:ve|ll|m)|we'(?:ve|ll)|let me)\b", re.IGNORECASE)


# Causes about the conversation itself ("the issue was that I misread …",
# "the problem is that you haven't told me …") and bare existence counts
# ("there are 3 call sites") are not knowledge about the project.
_NOT_ABOUT_PROJECT = re.compile(
    r"^(?:i|i'm|i've|you|you're|you've|my|your|there (?:is|are|was|were) (?:\d+|only|no)\b)\b",
    re.IGNORECASE,
)


def _too_thin(body: str) -> bool:
    return (
        count_words(body) < MIN_BODY_WORDS
        or bool(_PRONOUN_START.match(body) and count_words(body) < 8)
        or bool(_NOT_ABOUT_PROJECT.match(body))
    )


def _diagnosis(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    # Only the past tense counts.  "The problem is that …" is a diagnosis
    # still being tested (agents state dead-end hypotheses this way) or, from
    # the user, a description of the task; "the root cause was …" is said
    # once the cause is known.
    s = sentences[i]
    if not _usable(s) or _DEAD_END.search(s):
        return None, 0
    m = _ROOT_CAUSE.match(s)
    if m:
        body = m.group("body")
        if _too_thin(body):
            return None, 0
        text, used = s, 0
        if i + 1 < len(sentences) and _FIX_NEXT.match(sentences[i + 1]):
            if _usable(sentences[i + 1]):
                text, used = f"{s.rstrip('.')}. {sentences[i + 1]}", 1
        text = _finish(text)
        if not text:
            return None, 0
        return Candidate(text, "troubleshooting", 0.7, "diagnosis.root_cause", s), used
    m = _TURNS_OUT.match(s)
    if m:
        body = m.group("body")
        if _too_thin(body):
            return None, 0
        text = _finish(body)
        if not text:
            return None, 0
        category = "troubleshooting" if _TROUBLE_WORDS.search(body) else "gotcha"
        return Candidate(text, category, 0.65, "diagnosis.turns_out", s), 0
    return None, 0


def _gotcha(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not _usable(s):
        return None, 0
    m = _GOTCHA_LABEL.match(s) or _NOTE_THAT.match(s)
    if m:
        body = m.group("body")
        if m.re is _NOTE_THAT and (not _CONSTRAINT.search(body) or _FIRST_PERSON.match(body)):
            return None, 0
        if count_words(body) < MIN_BODY_WORDS or _PRONOUN_START.match(body):
            return None, 0
        if _NARRATION.search(body):
            return None, 0  # "Heads up: Q3 is already done and committed" is a status
        text, used = _with_reason(sentences, i, body)
        text = _finish(text)
        if not text:
            return None, 0
        confidence = 0.7 if m.re is _GOTCHA_LABEL else 0.6
        return Candidate(text, "gotcha", confidence, "gotcha", s), used
    if _ONLY_WORKS.search(s) and not _FIRST_PERSON.match(s) and not _PRONOUN_START.match(s):
        text = _finish(s)
        if text:
            return Candidate(text, "gotcha", 0.6, "gotcha.only_works", s), 0
    return None, 0


# What the assistant did, not what it learned: progress reports are no lessons.
_NARRATION = re.compile(
    r"\b(?:i|i'(?:ve|ll|m|d)|we'(?:ve|ll)|let me|already (?:done|committed|pushed|merged)|"
    r"(?:is|are|was|were) (?:done|committed|pushed|merged|pending)|the task list|"
    r"commit `?[0-9a-f]{7,}`?)\b",
    re.IGNORECASE,
)
_FIX_LABEL = re.compile(r"bug|issue|problem|cause|fix|culprit", re.IGNORECASE)


# The assistant explaining why something broke: "… mutes the track before unpublishing
# it, which was causing black frames".  Only with something concrete named in it.
_CAUSE = re.compile(
    r"\b(?:which|that) (?:was|were|is|are) (?:causing|the cause of|what caused)\b|"
    r"\b(?:was|were) causing\b|\b(?:that'?s|that is|which is|which was) why\b",
    re.IGNORECASE,
)
_CONCRETE = re.compile(r"`[^`]+`|\b[\w.-]+/[\w./-]+|\b[A-Za-z]+[A-Z_][\w]*\b|--?[a-z][\w-]+")


def _cause(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not _usable(s) or not _CAUSE.search(s) or not _CONCRETE.search(s):
        return None, 0
    if _NARRATION.search(s.split(",")[0]) or count_words(s) < 8:
        return None, 0
    text = _finish(s)
    if not text:
        return None, 0
    return Candidate(text, "troubleshooting", 0.6, "diagnosis.cause", s), 0


# The assistant reporting a change together with why: "Replaced the LiveKit `<Chat>`
# component (which injected its own dark-themed UI) with a custom chat built on the
# `useChat` hook", "rounding: switched from `format('%.2f')` (half-up) to integer
# truncation (matches Etherscan)". The reason is what makes it a lesson; without one
# it is a progress report.
_CHANGE = re.compile(
    r"\b(?:replaced|swapped)\b.{3,160}?\bwith\b"
    r"|\bswitch(?:ed|ing)?\s+(?:from\b.{3,160}?\bto\b|to\b)"
    r"|\b(?:used|uses|using|went with)\b.{3,80}?\binstead of\b",
    re.IGNORECASE,
)
_CHANGE_REASON = re.compile(
    r"\((?:which|that|it|they|matches|matching|because|since|so)\b[^)]{6,}\)"
    r"|\bto match\b|\bbecause\b|\bsince\b|\bso that\b"
    r"|\s[—–-]\s(?:this|it|which|that|because|so)\b",
    re.IGNORECASE,
)
# A plan or an offer is no report of a change ("Now replace …", "If you'd rather …").
_NOT_DONE = re.compile(r"^(?:now|next|then|if|when|once|to)\b|\b(?:will|would|could)\b", re.I)


def _change(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not _usable(s) or _NOT_DONE.search(s) or _NARRATION.search(s):
        return None, 0
    change = _CHANGE.search(s)
    if not change or not _CHANGE_REASON.search(s) or not _CONCRETE.search(s):
        return None, 0
    text = _finish(s)
    if not text:
        return None, 0
    return Candidate(text, "gotcha", 0.6, "finding.change", s), 0


# A user correcting a fact: "the keyed URL is path-based on rpc.ankr.com (not a ?apikey=
# query string)".  The contrast and a concrete name make it a fact worth keeping.
_CONTRAST = re.compile(r"\(not (?:a |an |the )?[^)]{3,80}\)|,\s*not (?:a|an|the|via|in|on)\s", re.I)


def _correction(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not _usable(s) or not _CONTRAST.search(s) or not _CONCRETE.search(s):
        return None, 0
    if count_words(s) < 8 or _NOT_ABOUT_PROJECT.match(s):
        return None, 0
    text = _finish(s)
    if not text:
        return None, 0
    category = "convention" if is_rule_verb(_first_word(s)) else "gotcha"
    return Candidate(text, category, 0.6, "instruction.correction", s), 0


def _finding(raw: list[str]) -> Extractor:
    """A finding the assistant labels as one ("Found a real bug: …", "Worth flagging:
    …"): kept when it states a constraint or a failure and is not a progress report."""

    def run(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
        m = _LEAD_IN.match(_FILLER.sub("", raw[i]).strip())
        if not m or not _usable(sentences[i]):
            return None, 0
        body = sentences[i]
        if count_words(body) < MIN_BODY_WORDS + 1 or _NARRATION.search(body):
            return None, 0
        fix = bool(_FIX_LABEL.search(m.group("label")))  # "found a bug:" is a finding as such
        if not fix and not (_CONSTRAINT.search(body) or _TROUBLE_WORDS.search(body)):
            return None, 0
        text = _finish(body)
        if not text:
            return None, 0
        category = "troubleshooting" if fix else "gotcha"
        return Candidate(text, category, 0.6, "finding.labelled", raw[i]), 0

    return run


def _extractors(role: str) -> list[Extractor]:
    if role == "user":
        return [_instruction, _decision("user"), _diagnosis, _gotcha, _correction]
    return [_decision("assistant"), _diagnosis, _gotcha, _cause, _change]


def _cjk(role: str) -> Extractor:
    def run(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
        found = cjk_candidate(sentences[i], role)
        if found is None:
            return None, 0
        text, category, confidence, extractor = found
        return Candidate(text, category, confidence, extractor, sentences[i]), 0

    return run


def extract(text: str, role: str = "user", source: str = "") -> list[Candidate]:
    """Extract candidate memories from one message's text.

    ``role`` is ``"user"`` or ``"assistant"``; instructions are only taken
    from the user.  Results are de-duplicated by normalised text.
    """
    raw = prose_sentences(text)
    sentences = [_strip_filler(s) for s in raw]
    extractors = _extractors(role) + [_cjk(role)]
    if role == "assistant":
        extractors.append(_finding(raw))
    found: list[Candidate] = []
    i = 0
    while i < len(sentences):
        step = 1
        for run in extractors:
            cand, used = run(sentences, i)
            if cand is not None:
                if source:
                    cand = replace(cand, source=source)
                found.append(cand)
                step += used
                break
        i += step
    return dedupe(found)


_COMMAND_TEXT = re.compile(r"^\s*(?:<command-|<local-command-|Caveat: |\[Request interrupted)")


def extract_from_entries(
    entries: Iterable[Entry], tools: ToolText | None = None
) -> list[Candidate]:
    """Run the extractors over a transcript's user prompts and assistant prose.

    Skips subagent (sidechain) lines, whose "user" turns were written by the
    main agent, Claude Code's own meta lines (hook notices, skill bodies),
    slash-command echoes, tool results, summaries and system lines.  A
    compaction summary is read as the assistant's account (it is the model's
    summary, never the user's words).  An assistant candidate whose sentence
    repeats what a tool returned earlier is marked ``relayed``: earlier in the batch,
    or before it when ``tools`` carries the session's window (which this extends).
    """
    found: list[Candidate] = []
    if tools is None:
        tools = ToolText()
    for entry in entries:
        if entry.is_sidechain or entry.is_meta or entry.type not in ("user", "assistant"):
            continue
        if entry.is_tool_result:
            _add_tool_text(tools, entry)
            continue  # tool output, even when stored as a bare string
        role = "assistant" if entry.is_compact_summary else entry.role
        if role not in ("user", "assistant"):
            continue
        proposed: list[Candidate] = []
        for text in entry.texts:
            if role == "user" and _COMMAND_TEXT.match(text):
                continue
            proposed += extract(text, role, entry.uuid)
        if role == "assistant":
            proposed += written_notes(entry.tool_uses, entry.uuid)
        for cand in proposed:
            if role == "assistant" and tools.relays(cand.evidence or cand.text):
                cand = replace(cand, origin=RELAYED)
            elif role == "user" and cand.category in _RULE_CATEGORIES:
                cand = replace(cand, replaces=replaced_term(cand.text))
            found.append(cand)
    return dedupe(found)


# Rules a user may reverse later ("use Vitest instead of Jest" after "always use Jest").
_RULE_CATEGORIES = frozenset(
    {"tool_preference", "convention", "decision", "preference", "coding_style", "command"}
)


def _add_tool_text(tools: ToolText, entry: Entry) -> None:
    for result in entry.tool_results:
        tools.add(result.text)
    out = entry.tool_output
    if out is not None:
        for part in (out.stdout, out.stderr, out.error):
            tools.add(part)
    if not entry.tool_results:
        tools.add(entry.text)  # a result stored as a bare string in content
