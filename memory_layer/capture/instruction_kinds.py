"""Which of the 16 categories an instruction-file item belongs to.

Decided from the item's own words first (a command, a style rule, a "never"), then
from the heading it sits under ("Architecture", "Troubleshooting"), which is how the
file's authors grouped it; an item that only describes the project is ``context``.
"""

from __future__ import annotations

import re

from memory_layer.capture.classify import STYLE, instruction_category

__all__ = ["category_for", "has_command", "is_shell_command"]

# Programs whose name starts a command line in instruction files.
_PROGRAMS = frozenset(
    """make just uv uvx pip pip3 pipx poetry pdm hatch tox nox pytest python python3 ruff
    mypy pyright black isort pre-commit npm npx pnpm yarn bun bunx deno node tsc jest vitest
    eslint prettier hereby turbo nx lerna cargo rustup rustc go gofmt golangci-lint mvn
    gradle gradlew ./gradlew ./mvnw dotnet docker docker-compose podman kubectl helm
    terraform tofu git gh bazel bazelisk cmake ninja meson bundle rake rails mix elixir
    composer php flutter dart swift xcodebuild brew apt apt-get sudo cd export source
    ./bin ./scripts scripts/ ansible ansible-test pulumi grafana-cli yarnpkg corepack""".split()
)
_COMMAND_SPAN = re.compile(r"`([^`]+)`")
# A command memory says what the command does: "Run tests: `make test`".
_COMMAND_LEAD = re.compile(
    r"^(?:to\s+)?(?:run|build|install|lint|format|test|type-?check|serve|start|generate|"
    r"regenerate|update|sync|refresh|check|preview|deploy|release|clean|compile|bootstrap|"
    r"set ?up|accept|review|create|submit|debug|benchmark|profile|watch)\b",
    re.I,
)
_RULE = re.compile(
    r"\b(?:must|always|never|do not|don't|should|shall|avoid|prefer|required?|only|"
    r"make sure|ensure|remember to|keep|please)\b",
    re.I,
)
_GOTCHA = re.compile(
    r"\b(?:never manually|will (?:break|fail)|breaks?|silently|careful|pitfall|gotcha|"
    r"caveat|beware|otherwise|or else|won'?t work|does(?:n'?t| not) work)\b",
    re.I,
)
# Heading words, in the order they are tried, with the category they stand for.
_SECTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), category)
    for pattern, category in (
        (
            r"troubleshoot|debugg|known (?:issues|problems)|faq|common (?:errors|problems)",
            "troubleshooting",
        ),
        (r"gotcha|pitfall|caveat|warning|constraint|don'?ts|limitation", "gotcha"),
        (r"workaround|hack", "workaround"),
        (r"decision|rationale|adr\b|why\b", "decision"),
        (r"todo|roadmap|open (?:items|questions)|future work", "todo"),
        (r"command|scripts|tasks|running|build instructions|how to run|make targets", "command"),
        (r"dependenc|packages?\b|librar|requirements|third.party", "dependency"),
        (r"environment|setup|set up|prerequisite|install|toolchain|platform|config", "environment"),
        (r"style|format|naming|lint|typing|type hints|docstring", "coding_style"),
        (
            r"architecture|structure|layout|component|module|design|layer|codebase|overview of",
            "architecture",
        ),
        (r"pattern|recipe|how to|common tasks|best practice|example", "pattern"),
        (r"preference", "preference"),
        (r"tool|stack", "tool_preference"),
        (
            r"convention|guideline|rule|standard|workflow|pull request|commit|contribut|"
            r"testing|tests|review|process|policy|security|documentation|important",
            "convention",
        ),
        (r"overview|about|context|project|introduction|background|key facts|glossary", "context"),
    )
)


def is_shell_command(text: str) -> bool:
    """Whether ``text`` reads as a command line: it starts with a known program (or a
    path to a script) and is one line."""
    text = text.strip()
    if not text or "\n" in text or len(text) > 300:
        return False
    first = text.split()[0].lower()
    return (
        first in _PROGRAMS
        or first.startswith(("./", "bin/", "scripts/"))
        or any(first.startswith(p + "/") for p in ("./bin", "./scripts"))
    )


def has_command(text: str) -> bool:
    return any(is_shell_command(span) for span in _COMMAND_SPAN.findall(text))


# Imperatives instruction files use that the capture word list leaves out.
_IMPERATIVES = frozenset(
    "provide adhere suggest implement encourage consider prefer replace ensure define "
    "mark wrap place put treat limit reference describe explain".split()
)
_TERM = re.compile(r"^((?:`[^`]+`|[\w./-]+(?: [\w./()-]+){0,3})):\s+")


def _imperative(body: str) -> bool:
    from memory_layer.capture.classify import is_rule_verb

    first = (re.findall(r"[A-Za-z'-]+", body) or [""])[0].lower()
    return is_rule_verb(first) or first in _IMPERATIVES


def category_for(text: str, section: str = "", label: str = "") -> str:
    """The category of one item, under ``section`` (its heading path) and ``label`` (a
    bold line above it, if any). A leading "Term:" counts as a heading of its own
    ("Prerequisites: Go 1.13+")."""
    term = _TERM.match(text)
    heading = f"{section} {label} {term.group(1) if term else ''}".strip()
    body = re.sub(r"`[^`]*`", " ", text[term.end() :] if term else text)
    if has_command(text) and (_COMMAND_LEAD.match(text) or not _RULE.search(body)):
        return "command"
    if _GOTCHA.search(body):
        return "gotcha"
    for pattern, category in _SECTIONS[:5]:  # headings that say what kind of lesson it is
        if pattern.search(heading):
            return category
    if _RULE.search(body) or _imperative(body):
        if STYLE.search(body):
            return "coding_style"
        return instruction_category(body)
    for pattern, category in _SECTIONS[5:]:
        if pattern.search(heading):
            return category
    return "context"
