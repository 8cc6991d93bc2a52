"""Findings in prose: root causes, gotchas, the assistant's explanations of a cause or a
change, a user's correction, and findings labelled as such ("Found a real bug: …").

Each extractor fires only on an explicit phrasing and something concrete named in it,
and refuses progress reports ("I've committed …"): see ``extract`` for the rationale.
"""

from __future__ import annotations

import re

from memory_layer.capture.candidate import Candidate
from memory_layer.capture.classify import count_words, is_rule_verb
from memory_layer.capture.guards import (
    CONCRETE,
    DEAD_END,
    FILLER,
    LEAD_IN,
    MIN_BODY_WORDS,
    NARRATION,
    PRONOUN_START,
    TRANSIENT,
    Extractor,
    finish,
    first_word,
    usable,
    with_reason,
)

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
        or bool(PRONOUN_START.match(body) and count_words(body) < 8)
        or bool(_NOT_ABOUT_PROJECT.match(body))
    )


def diagnosis(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    # Only the past tense counts.  "The problem is that …" is a diagnosis
    # still being tested (agents state dead-end hypotheses this way) or, from
    # the user, a description of the task; "the root cause was …" is said
    # once the cause is known.
    s = sentences[i]
    if not usable(s) or DEAD_END.search(s):
        return None, 0
    m = _ROOT_CAUSE.match(s)
    if m:
        body = m.group("body")
        if _too_thin(body):
            return None, 0
        text, used = s, 0
        if i + 1 < len(sentences) and _FIX_NEXT.match(sentences[i + 1]):
            if usable(sentences[i + 1]):
                text, used = f"{s.rstrip('.')}. {sentences[i + 1]}", 1
        text = finish(text)
        if not text:
            return None, 0
        return Candidate(text, "troubleshooting", 0.7, "diagnosis.root_cause", s), used
    m = _TURNS_OUT.match(s)
    if m:
        body = m.group("body")
        if _too_thin(body):
            return None, 0
        text = finish(body)
        if not text:
            return None, 0
        category = "troubleshooting" if _TROUBLE_WORDS.search(body) else "gotcha"
        return Candidate(text, category, 0.65, "diagnosis.turns_out", s), 0
    return None, 0


def gotcha(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not usable(s):
        return None, 0
    m = _GOTCHA_LABEL.match(s) or _NOTE_THAT.match(s)
    if m:
        body = m.group("body")
        if m.re is _NOTE_THAT and (not _CONSTRAINT.search(body) or _FIRST_PERSON.match(body)):
            return None, 0
        if count_words(body) < MIN_BODY_WORDS or PRONOUN_START.match(body):
            return None, 0
        if NARRATION.search(body):
            return None, 0  # "Heads up: Q3 is already done and committed" is a status
        text, used = with_reason(sentences, i, body)
        text = finish(text)
        if not text:
            return None, 0
        confidence = 0.7 if m.re is _GOTCHA_LABEL else 0.6
        return Candidate(text, "gotcha", confidence, "gotcha", s), used
    if _ONLY_WORKS.search(s) and not _FIRST_PERSON.match(s) and not PRONOUN_START.match(s):
        text = finish(s)
        if text:
            return Candidate(text, "gotcha", 0.6, "gotcha.only_works", s), 0
    return None, 0


_FIX_LABEL = re.compile(r"bug|issue|problem|cause|fix|culprit", re.IGNORECASE)


# The assistant explaining why something broke: "… mutes the track before unpublishing
# it, which was causing black frames".  Only with something concrete named in it.
_CAUSE = re.compile(
    r"\b(?:which|that) (?:was|were|is|are) (?:causing|the cause of|what caused)\b|"
    r"\b(?:was|were) causing\b|\b(?:that'?s|that is|which is|which was) why\b",
    re.IGNORECASE,
)


def cause(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not usable(s) or not _CAUSE.search(s) or not CONCRETE.search(s):
        return None, 0
    if NARRATION.search(s.split(",")[0]) or count_words(s) < 8:
        return None, 0
    text = finish(s)
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


def change_report(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not usable(s) or _NOT_DONE.search(s) or NARRATION.search(s):
        return None, 0
    changed = _CHANGE.search(s)
    if not changed or not _CHANGE_REASON.search(s) or not CONCRETE.search(s):
        return None, 0
    text = finish(s)
    if not text:
        return None, 0
    return Candidate(text, "gotcha", 0.6, "finding.change", s), 0


# A user correcting a fact: "the keyed URL is path-based on rpc.ankr.com (not a ?apikey=
# query string)".  The contrast and a concrete name make it a fact worth keeping.
_CONTRAST = re.compile(r"\(not (?:a |an |the )?[^)]{3,80}\)|,\s*not (?:a|an|the|via|in|on)\s", re.I)


def correction(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not usable(s) or not _CONTRAST.search(s) or not CONCRETE.search(s):
        return None, 0
    if count_words(s) < 8 or _NOT_ABOUT_PROJECT.match(s):
        return None, 0
    text = finish(s)
    if not text:
        return None, 0
    category = "convention" if is_rule_verb(first_word(s)) else "gotcha"
    if _DEFERRED.search(s):
        category = "decision"  # "… deferred (not implemented) because …": a choice made
    return Candidate(text, category, 0.6, "instruction.correction", s), 0


# Something left out on purpose, with why: "Oracle staleness check deferred (not
# implemented) because it requires on-chain RPC lookups …" (bastion-agentique/bastion).
_DEFERRED = re.compile(
    r"\b(?:deferred|postponed|left out|skipped|dropped|out of scope)\b.*\b(?:because|since)\b",
    re.IGNORECASE,
)


# The same scope decision without the "(not …)" a correction needs: "Rate limiting was
# postponed to v2 since the API is only reachable from the VPN", "Multi-currency support is
# out of scope for v1 because the provider only settles in USD". Said as done (a
# participle, "out of scope"), with a reason; never a plan or offer of the speaker ("I'll
# defer the refactor until you review"), a reason that is the person spoken to ("because
# you want to review it first"), or an event put off by an outage ("the deploy was
# postponed because the CI runner was down").
_SCOPED_OUT = re.compile(
    r"\b(?:deferred|postponed|descoped|de-scoped|left out|(?:out of|not in) (?:the )?scope)\b"
    r".*?\b(?P<reason>because|since|due to|given that|as (?:it|they|this|that|we|our|the))\b",
    re.IGNORECASE,
)
_SPEAKER_PLAN = re.compile(
    r"\b(?:i|we)(?:'ll|'d|\s+(?:will|would|can|could|should|might|am going to|are going to))\b"
    r"|\blet'?s\b|\blet me\b",
    re.IGNORECASE,
)
_ABOUT_LISTENER = re.compile(r"\b(?:you|your|you'(?:re|ve|d|ll))\b", re.IGNORECASE)
_OUTAGE = re.compile(
    r"\b(?:was|were|is|are|went) (?:down|offline|unavailable|unreachable|flaky|red|failing|busy)\b"
    r"|\btimed out\b|\bran out of\b|\b(?:sick|holiday|vacation|ooo)\b",
    re.IGNORECASE,
)


def deferral(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    scoped = _SCOPED_OUT.search(s)
    if not scoped or not usable(s) or not CONCRETE.search(s) or count_words(s) < 8:
        return None, 0
    if TRANSIENT.search(s) or NARRATION.search(s) or _SPEAKER_PLAN.search(s):
        return None, 0
    reason = s[scoped.start("reason") :]
    if _ABOUT_LISTENER.search(reason) or _OUTAGE.search(reason):
        return None, 0
    text = finish(s)
    if not text:
        return None, 0
    return Candidate(text, "decision", 0.6, "finding.deferral", s), 0


# Noise the session established as harmless: "The `@react-native-async-storage` warnings
# are harmless — they're from MetaMask SDK's optional dependency and don't affect the
# build." (yashpunmiya/Solsmile). A later session must not chase them again.
# Only warnings and deprecation notices: a verdict on errors, failed requests or
# vulnerabilities ("the `401 Unauthorized` errors are false positives") teaches every later
# session to ignore what may be the next real failure, and a verdict bound to one run ("the
# errors above", "passed on retry", "the container was still starting") holds for that run
# only (``TRANSIENT``).
# Room between the noise's name and the verdict: "warnings from `urllib3` about … are".
HARMLESS_REACH = 60
_HARMLESS = re.compile(
    rf"\b(?:warnings?|deprecations?|deprecation warnings?|notices?|[A-Z]\w*Warning)\b"
    rf"[^.;]{{0,{HARMLESS_REACH}}}?\b(?:(?:is|are)\s+(?:(?:all|just|only|completely)\s+)?"
    r"(?:harmless|benign|expected and harmless|safe to ignore|(?:a )?false positives?)|"
    r"can (?:be )?safely (?:be )?ignored)\b",
    re.IGNORECASE,
)
_NOT_NOISE = re.compile(
    r"\b(?:errors?|exceptions?|failures?|failed|fails|crash\w*|vulnerabilit\w*|cve|"
    r"security|audit|unauthori[sz]ed|forbidden|refused|\d{3} [A-Z]\w+)\b",
    re.IGNORECASE,
)
# A verdict needs a subject and a predicate: fewer words is "These warnings are harmless".
MIN_HARMLESS_WORDS = 6
_HARMLESS_WORD = re.compile(r"harmless|benign|ignored|false positive", re.IGNORECASE)


def harmless(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not _HARMLESS_WORD.search(s):
        return None, 0  # cheap test first: this runs on every assistant sentence
    m = _HARMLESS.search(s)
    # The noise must be named before it is called harmless: "That warning … is harmless
    # here" says which one only to someone who saw it.
    if not usable(s) or not m or not CONCRETE.search(s[: m.end()]):
        return None, 0
    if _NOT_NOISE.search(s) or TRANSIENT.search(s):
        return None, 0
    if NARRATION.search(s.split("—")[0]) or count_words(s) < MIN_HARMLESS_WORDS:
        return None, 0
    text = finish(s)
    if not text:
        return None, 0
    return Candidate(text, "gotcha", 0.6, "finding.harmless", s), 0


def labelled_finding(raw: list[str]) -> Extractor:
    """A finding the assistant labels as one ("Found a real bug: …", "Worth flagging:
    …"): kept when it states a constraint or a failure and is not a progress report."""

    def run(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
        m = LEAD_IN.match(FILLER.sub("", raw[i]).strip())
        # "Finding: `test_login` fails on main right now": a state, not a lesson.
        if not m or not usable(sentences[i]) or TRANSIENT.search(sentences[i]):
            return None, 0
        body = sentences[i]
        if count_words(body) < MIN_BODY_WORDS + 1 or NARRATION.search(body):
            return None, 0
        fix = bool(_FIX_LABEL.search(m.group("label")))  # "found a bug:" is a finding as such
        if not fix and not (_CONSTRAINT.search(body) or _TROUBLE_WORDS.search(body)):
            return None, 0
        text = finish(body)
        if not text:
            return None, 0
        category = "troubleshooting" if fix else "gotcha"
        return Candidate(text, category, 0.6, "finding.labelled", raw[i]), 0

    return run
