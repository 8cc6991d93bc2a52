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
from collections.abc import Iterable

from memory_layer.capture.answers import user_words
from memory_layer.capture.candidate import Candidate, Turn, dedupe
from memory_layer.capture.cjk import cjk_candidate
from memory_layer.capture.classify import (
    ENVIRONMENT,
    STYLE,
    count_words,
    instruction_category,
    is_rule_verb,
)
from memory_layer.capture.findings import (
    cause,
    change_report,
    correction,
    deferral,
    diagnosis,
    gotcha,
    harmless,
    labelled_finding,
)
from memory_layer.capture.guards import (
    CONCRETE,
    FILLER,
    MIN_BODY_WORDS,
    NARRATION,
    REPORTED,
    TRANSIENT,
    Extractor,
    finish,
    first_word,
    inside_quotes,
    strip_filler,
    usable,
    with_reason,
)
from memory_layer.capture.notes import written_notes
from memory_layer.capture.prose import prose_sentences
from memory_layer.capture.provenance import RELAYED, ToolText
from memory_layer.capture.recipes import contradicted, same_command, stated_command, stated_keys
from memory_layer.capture.reversal import replaced_term
from memory_layer.capture.sections import decision_lists
from memory_layer.capture.transcript import Entry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memory_layer.capture.learned import Judge

__all__ = [
    "Turn",
    "extract",
    "extract_from_entries",
    "observe_tool_text",
    "prose_sentences",
    "turns",
]


# --- extractors -------------------------------------------------------------
# Each takes (sentences, index) and returns (candidate or None, extra sentences
# consumed).  They receive sentences with filler already stripped.

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
# A spec's emphatic rules: "Do NOT use SELFDESTRUCT anywhere (PolkaVM forbids it).", "DO
# verify contract on Blockscout after deployment." (the user's hackathon brief in
# yashpunmiya/Solsmile).  Case-sensitive on purpose: the capitals are what make it a rule;
# a lower-case "don't push yet" in a prompt is usually a one-off request. Capitals are
# also how prompts shout one-off requests ("Do NOT commit anything yet", "DO NOT push to
# main until the demo is over"), so a sentence bound to this moment or change
# (``TRANSIENT``, ``_ONE_OFF``) or to a sequence of steps (``_STEPS``) is refused, and the
# rest is trusted less than an explicit always/never: below SessionStart's bar unless an
# explicit lasting scope makes it a standing rule (``_STANDING``).
_EMPHATIC = re.compile(r"^(?:(?:Do|DO) NOT|DON'?T|DO)\s+(?P<body>[a-z][\w-]*\b.+)")
_STEPS = re.compile(r"\b(?:first|then|afterwards|next|tell me|show me|let me know)\b", re.I)
# Bound to this task, file or moment in words ``TRANSIENT`` leaves to context (a prose
# rule may say "here" of the project; shouted at the agent it means this spot): "DO NOT
# touch the auth module in this task", "Do NOT commit anything before I review the diff",
# "DO NOT run the migrations on staging again", "Do NOT commit the changes you just made".
_ONE_OFF = re.compile(
    r"\b(?:in this (?:task|file|iteration|pass|release|step|function|module|folder|script|"
    r"round|turn|conversation|chat)|after this step|again|here|for now|(?:you|i|we) just|"
    r"(?:before|until|till|after|while|when) (?:i|i'm|i've|i'll|we're|we've)|"
    r"while (?:the|a|an) [\w-]+ (?:is|are) being)\b",
    re.IGNORECASE,
)
# Only an explicit lasting scope makes a shouted rule a standing one: "Do NOT use
# SELFDESTRUCT anywhere", "DO verify contract on Blockscout after deployment", "… in
# production", "… before every release". A reason ("because the demo is running", "since
# I'm testing"), a quantifier ("any of the files I opened", "all the tests") or an aside
# in parentheses ("(I'm reviewing the diff)") is how one-off requests are shouted too.
_STANDING = re.compile(
    r"\b(?:anywhere|ever|whenever|always|never|every time|each time|"
    r"(?:before|after|on|for|in|with) (?:every|each) [\w-]+|in (?:production|prod)|"
    r"production builds?|in (?:this|the|our) (?:repo|repository|project|codebase)|"
    r"(?:before|after) (?:deploying|deployment|committing|merging|pushing|releasing))\b",
    re.IGNORECASE,
)
# Capitals alone: kept and recalled on a matching prompt, but not injected into every
# session (session_start_min_confidence 0.7). With a lasting scope: injected, still below
# the explicit "always"/"never"/"remember" rules (0.9).
EMPHATIC_CONFIDENCE = 0.65
EMPHATIC_STANDING_CONFIDENCE = 0.8
# "never do that again": the rule is in the previous turn, not in this sentence.
_VAGUE = re.compile(r"^\w+\s+(?:it|that|this|them|those|so)\b", re.IGNORECASE)
_PREFER = re.compile(
    r"^(?:i\s+(?:really\s+)?prefer|i'?d rather|prefer)\s+(?P<body>.+)", re.IGNORECASE
)
# The rest of a preference, said next: "prefer ruby, … . no rails wrapper either way".
_CONTINUES = re.compile(r"^(?:no|not|never|don'?t|do not|avoid)\s+\w", re.IGNORECASE)


def _instruction(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    s = sentences[i]
    if not usable(s):
        return None, 0
    m = _REMEMBER.match(s)
    if m:
        body = m.group("body")
        if count_words(body) < MIN_BODY_WORDS:
            return None, 0
        text, used = with_reason(sentences, i, body)
        text = finish(text)
        if not text:
            return None, 0
        pair = _USE_NOT.match(FILLER.sub("", body))
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
        text, used = with_reason(sentences, i, s)
        text = finish(text)
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
        text, used = with_reason(sentences, i, m.group("body"))
        text = finish(text)
        if not text:
            return None, 0
        return Candidate(text, instruction_category(text), 0.9, "instruction.from_now_on", s), used
    m = _ALWAYS_NEVER.search(s)
    if (
        m
        and count_words(m.group("body")) >= 2
        and is_rule_verb(first_word(m.group("body")))
        and not (_VAGUE.match(m.group("body")) and count_words(m.group("body")) < 8)
        and not inside_quotes(s, m.start("kw"))
    ):
        if REPORTED.search(s[: m.start("kw")]):
            return None, 0
        text, used = with_reason(sentences, i, s)
        text = finish(text)
        if not text:
            return None, 0
        extractor = "instruction." + m.group("kw").lower().split()[0].replace("'", "")
        return Candidate(text, instruction_category(text), 0.9, extractor, s), used
    return _emphatic(sentences, i) if _EMPHATIC.match(s) else _preference(sentences, i)


def _emphatic(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    """A capitalised DO / Do NOT rule (``_EMPHATIC``), unless bound to the moment."""
    s = sentences[i]
    m = _EMPHATIC.match(s)
    if (
        not m
        or count_words(m.group("body")) < MIN_BODY_WORDS
        or not is_rule_verb(first_word(m.group("body")))
        or _VAGUE.match(m.group("body"))
        or TRANSIENT.search(s)
        or _STEPS.search(s)
        or _ONE_OFF.search(s)
    ):
        return None, 0
    text, used = with_reason(sentences, i, s)
    text = finish(text)
    if not text:
        return None, 0
    standing = _STANDING.search(s)  # the reason kept in ``text`` is no scope
    confidence = EMPHATIC_STANDING_CONFIDENCE if standing else EMPHATIC_CONFIDENCE
    return Candidate(text, instruction_category(text), confidence, "instruction.emphatic", s), used


def _preference(sentences: list[str], i: int) -> tuple[Candidate | None, int]:
    """"I prefer …" with what follows it ("… . no rails wrapper either way")."""
    s = sentences[i]
    m = _PREFER.match(s)
    if not m or count_words(m.group("body")) < MIN_BODY_WORDS:
        return None, 0
    text, used = with_reason(sentences, i, s)
    nxt = sentences[i + 1] if i + 1 < len(sentences) else ""
    if not used and _CONTINUES.match(nxt) and usable(nxt):
        text, used = f"{text.rstrip('.')}. {nxt[0].upper()}{nxt[1:]}", 1
    text = finish(text)
    if not text:
        return None, 0
    category = "coding_style" if STYLE.search(text) else "preference"
    return Candidate(text, category, 0.85, "instruction.prefer", s), used


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
        if not usable(s):
            return None, 0
        m = _DECISION.match(s) or (_LETS.match(s) if role == "user" else None)
        reversal = None if m else _REVERSAL.match(s)
        m = m or reversal
        if not m or count_words(m.group("rest")) < 1:
            return None, 0
        if reversal and (NARRATION.search(s) or _EDIT_REPORT.match(s) or not CONCRETE.search(s)):
            return None, 0
        text, used = s, 0
        explained = re.search(_REASON, m.group("rest"), re.IGNORECASE)
        if not explained and not reversal and not _ALTERNATIVE.search(m.group("rest")):
            text, used = with_reason(sentences, i, s)
            if not used:
                return None, 0  # a decision without its reason is not worth keeping
        text = finish(text)
        if not text:
            return None, 0
        return Candidate(text, "decision", confidence, "decision", s), used

    return run


def _extractors(role: str) -> list[Extractor]:
    if role == "user":
        return [_instruction, _decision("user"), diagnosis, gotcha, correction, deferral]
    return [
        _decision("assistant"),
        diagnosis,
        gotcha,
        cause,
        change_report,
        harmless,
        stated_command,
        deferral,
    ]


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
    return dedupe(_extract_sentences(prose_sentences(text), role, source))


def _extract_sentences(raw: list[str], role: str, source: str) -> list[Candidate]:
    """The rule extractors over one message's prose sentences (``prose_sentences``)."""
    sentences = [strip_filler(s) for s in raw]
    extractors = _extractors(role) + [_cjk(role)]
    if role == "assistant":
        extractors.append(labelled_finding(raw))
    found: list[Candidate] = []
    i = 0
    while i < len(sentences):
        step = 1
        for run in extractors:
            cand, used = run(sentences, i)
            if cand is not None:
                if source:
                    cand = cand.replace(source=source)
                found.append(cand)
                step += used
                break
        i += step
    return found


_COMMAND_TEXT = re.compile(r"^\s*(?:<command-|<local-command-|Caveat: |\[Request interrupted)")


def turns(entries: Iterable[Entry]) -> list[tuple[Entry, Turn | None]]:
    """Every entry with what the rules propose from it (None: not prose: tool results,
    sidechain and meta lines, system lines). Skips subagent (sidechain) lines, whose
    "user" turns were written by the main agent, Claude Code's own meta lines (hook
    notices, skill bodies), slash-command echoes, summaries and system lines."""
    out: list[tuple[Entry, Turn | None]] = []
    for entry in entries:
        if not _conversational(entry):
            out.append((entry, None))
            continue
        role = "assistant" if entry.is_compact_summary else entry.role
        if entry.is_tool_result or role not in ("user", "assistant"):
            out.append((entry, None))
            continue
        sentences: list[str] = []
        proposed: list[Candidate] = []
        for text in entry.texts:
            if role == "user" and _COMMAND_TEXT.match(text):
                continue
            raw = prose_sentences(text)
            sentences += raw
            proposed += dedupe(_extract_sentences(raw, role, entry.uuid))
            if role == "assistant":
                proposed += decision_lists(text, entry.uuid)
        if role == "assistant":
            proposed += written_notes(entry.tool_uses, entry.uuid)
        speaker = "compact" if entry.is_compact_summary else role
        out.append((entry, Turn(speaker, entry.uuid, tuple(sentences), tuple(proposed))))
    return out


def _conversational(entry: Entry) -> bool:
    return not (entry.is_sidechain or entry.is_meta) and entry.type in ("user", "assistant")


def extract_from_entries(
    entries: Iterable[Entry],
    tools: ToolText | None = None,
    judge: Judge | None = None,
) -> list[Candidate]:
    """Run the extractors over a transcript's user prompts and assistant prose.

    Tool results are not read as prose (``turns``), except the user's own words Claude
    Code stores in them (a rejected call's reason, AskUserQuestion's answers). A
    compaction summary is read as the assistant's account (it is the model's summary,
    never the user's words).  An assistant candidate whose sentence repeats what a tool
    returned earlier is marked ``relayed``: earlier in the batch, or before it when
    ``tools`` carries the session's window (which this extends). ``judge``
    (``capture.learned``, where an embedder is loaded): the learned classifier drops weak
    rule candidates and admits sentences the rules missed; without it, the rules alone
    decide.
    """
    found: list[Candidate] = []
    if tools is None:
        tools = ToolText()
    read_entries = list(entries)
    read = turns(read_entries)
    judged = judge.review([t for _e, t in read if t is not None]) if judge else None
    tool_names: dict[str, str] = {}  # tool_use id -> tool, to know whose result is whose
    at = 0
    for entry, turn in read:
        if not _conversational(entry):
            continue
        tool_names.update((use.id, use.name) for use in entry.tool_uses)
        if turn is None:
            if entry.is_tool_result:
                # A rejected call's reason and AskUserQuestion's answers are the user's
                # words; the rest is tool output, even when stored as a bare string.
                said = user_words(entry, tool_names)
                _add_tool_text(tools, entry, skip=frozenset(said))
                typed = [
                    c
                    for texts in said.values()
                    for t in texts
                    for c in extract(t, "user", entry.uuid)
                ]
                found += _mark("user", typed, tools, check_relay=True)
            continue
        proposed = list(turn.proposed) if judged is None else judged[at]
        at += 1
        found += _mark("user" if turn.role == "user" else "assistant", proposed, tools)
    keys = stated_keys(found)
    if keys:  # what the session's own output said of the commands the assistant states
        from memory_layer.capture.signals import events_from_entries

        found = contradicted(found, events_from_entries(read_entries, same_command(keys)))
    return dedupe(found)


def _mark(
    role: str, proposed: list[Candidate], tools: ToolText, *, check_relay: bool = False
) -> list[Candidate]:
    """The assistant's candidates that repeat tool text become ``relayed`` (and the
    user's words found inside tool results, ``check_relay``: an AskUserQuestion option
    the assistant worded from a fetched page); the user's own rules learn what they
    replace."""
    marked: list[Candidate] = []
    for cand in proposed:
        if (role == "assistant" or check_relay) and tools.relays_any(cand.evidence or cand.text):
            cand = cand.replace(origin=RELAYED)
        elif role == "user" and cand.category in _RULE_CATEGORIES:
            cand = cand.replace(replaces=replaced_term(cand.text))
        marked.append(cand)
    return marked


# Rules a user may reverse later ("use Vitest instead of Jest" after "always use Jest").
_RULE_CATEGORIES = frozenset(
    {"tool_preference", "convention", "decision", "preference", "coding_style", "command"}
)


def _add_tool_text(tools: ToolText, entry: Entry, skip: frozenset[str] = frozenset()) -> None:
    """Hash what the tools returned (``skip``: tool_use ids whose result held the user's
    own words). Untruncated: a planted line deep in a long file read must be recognised
    when the assistant repeats it. Bash output usually sits both in the tool_result and
    in toolUseResult.stdout; the same text is hashed once."""
    seen: set[str] = set()
    for result in entry.tool_results:
        seen.add(result.relay_text)
        if result.tool_use_id not in skip:
            tools.add(result.relay_text)
    out = entry.tool_output
    if out is not None and not skip:  # the line-level copy belongs to the skipped result
        for part in out.full_parts:
            if part not in seen:
                tools.add(part)
    if not entry.tool_results:
        tools.add(entry.text)  # a result stored as a bare string in content


def observe_tool_text(entries: Iterable[Entry], tools: ToolText) -> None:
    """Add what tools returned in ``entries`` to the session's window without
    extracting anything: with capture off the window still follows the session, so
    turning capture back on does not trust the assistant repeating text read meanwhile."""
    for entry in entries:
        # The same lines extract_from_entries reads tool text from.
        if entry.is_tool_result and not (entry.is_sidechain or entry.is_meta):
            _add_tool_text(tools, entry)
