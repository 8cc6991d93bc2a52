"""Query intent detection: which categories a query is asking about.

A category boost applies only when the query's intent matches the category, so
"why does pytest fail with ImportError" lifts troubleshooting, gotcha and
workaround memories, while "what command runs the tests" lifts command memories.

Rules (each intent is a set of cue patterns, matched case-insensitively as words):

| intent        | cues (examples)                                              | boosted categories                  |
|---------------|--------------------------------------------------------------|-------------------------------------|
| error         | error, exception, fail, crash, broken, traceback, refused,   | troubleshooting, gotcha, workaround |
|               | timeout, "doesn't work", can't, FooError, ECONNREFUSED, 404, |                                     |
|               | flaky, intermittent, workaround                              |                                     |
| caution       | gotcha, pitfall, careful, caveat, watch out, trap, surprising| gotcha                              |
| decision      | why, decide, decision, chose, choice, instead of, vs, reason | decision                            |
| convention    | convention, style, naming, name, format, standard, should we | convention, pattern                 |
| pattern       | pattern, best practice, idiom, approach, how do we, usually  | pattern, convention                 |
| architecture  | architecture, design, component, service, layer, module, flow| architecture                        |
| command       | command, run, build, test, deploy, install, start, cli, flag | command                             |
| preference    | prefer, preference, favourite, like to, rather               | preference                          |

A query may carry several intents; the boost used is the one of the memory's own
category if any intent names it, else 1.0.
"""

from __future__ import annotations

import re

_INTENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "error": (
        (
            r"errors?",
            r"exceptions?",
            r"fail(s|ed|ing|ure|ures)?",
            r"crash(es|ed|ing)?",
            r"broken",
            r"break(s|ing)?",
            r"bugs?",
            r"traceback",
            r"stack ?trace",
            r"refused",
            r"denied",
            r"time ?outs?",
            r"timed out",
            r"panic(s|ked)?",
            r"segfault",
            r"does(n't| not) work",
            r"not working",
            r"won't",
            r"can't",
            r"cannot",
            r"unable",
            r"fix(es|ed|ing)?",
            r"issues?",
            r"problems?",
            r"wrong",
            r"warnings?",
            r"hangs?",
            r"[45]\d\d",
            r"exit code",
            r"missing",
            r"no module",
            r"not found",
            r"undefined",
            r"null",
            r"flak(y|iness)",
            r"intermittent(ly)?",
            r"workarounds?",
            r"work around",
        ),
        ("troubleshooting", "gotcha", "workaround"),
    ),
    "caution": (
        (
            r"gotchas?",
            r"pitfalls?",
            r"careful",
            r"caveats?",
            r"watch out",
            r"traps?",
            r"surpris(e|ing|ingly)",
            r"tricky",
            r"beware",
            r"avoid",
        ),
        ("gotcha",),
    ),
    "decision": (
        (
            r"why",
            r"decid(e|ed|ing)",
            r"decisions?",
            r"chose",
            r"choos(e|ing)",
            r"choice",
            r"instead of",
            r"vs\.?",
            r"versus",
            r"reasons?",
            r"rationale",
            r"trade-?offs?",
            r"picked",
            r"went with",
            r"alternatives?",
        ),
        ("decision",),
    ),
    "convention": (
        (
            r"conventions?",
            r"style",
            r"naming",
            r"name[sd]?",
            r"format(ting|ted)?",
            r"standards?",
            r"should (we|i)",
            r"rules?",
            r"lint(ing|er)?",
            r"guidelines?",
        ),
        ("convention", "pattern"),
    ),
    "pattern": (
        (
            r"patterns?",
            r"best practices?",
            r"idioms?",
            r"idiomatic",
            r"approach",
            r"how do we",
            r"usually",
            r"recommended",
            r"structure[ds]?",
        ),
        ("pattern", "convention"),
    ),
    "architecture": (
        (
            r"architecture",
            r"design(ed)?",
            r"components?",
            r"services?",
            r"layers?",
            r"modules?",
            r"flows?",
            r"diagram",
            r"talks? to",
            r"communicat(e|es|ion)",
            r"schema",
            r"system",
            r"where does",
            r"how does .+ work",
        ),
        ("architecture",),
    ),
    "command": (
        (
            r"commands?",
            r"run(s|ning)?",
            r"build(s|ing)?",
            r"tests?",
            r"deploy(s|ing)?",
            r"install(s|ing)?",
            r"start(s|ing)?",
            r"cli",
            r"flags?",
            r"scripts?",
            r"invoke",
            r"execute",
            r"make",
            r"migrat(e|ion|ions)",
            r"lint",
        ),
        ("command",),
    ),
    "preference": (
        (r"prefer(s|red|ence|ences)?", r"favou?rite", r"like to", r"rather", r"wants?"),
        ("preference",),
    ),
}

_COMPILED = {
    name: (re.compile(r"(?<![\w-])(?:" + "|".join(cues) + r")(?![\w-])", re.IGNORECASE), cats)
    for name, (cues, cats) in _INTENTS.items()
}
# Error codes and exception class names are case-sensitive signals.
_CASE_SENSITIVE = re.compile(r"(?<![\w-])(?:\w+(?:Error|Exception)|E[A-Z]{4,})(?![\w-])")


def detect_intents(query: str) -> dict[str, str]:
    """Map each detected intent to the cue that triggered it."""
    found: dict[str, str] = {}
    for name, (pattern, _) in _COMPILED.items():
        if name == "error":
            match = _CASE_SENSITIVE.search(query)
            if match:
                found[name] = match.group(0)
                continue
        match = pattern.search(query)
        if match:
            found[name] = match.group(0)
    return found


def boosted_categories(intents: dict[str, str]) -> dict[str, str]:
    """Category -> the reason it is boosted for these intents."""
    out: dict[str, str] = {}
    for name, cue in intents.items():
        for category in _COMPILED[name][1]:
            out.setdefault(category, f"{name} intent ('{cue}')")
    return out
