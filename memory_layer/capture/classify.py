"""Word lists that decide a candidate's category and whether a rule has a verb."""

from __future__ import annotations

import re

__all__ = ["ENVIRONMENT", "STYLE", "count_words", "instruction_category", "is_rule_verb"]

# A rule's "always"/"never" is followed by what to do.  Requiring a verb from
# this list drops "Always the same error", "Never seen this", "Always happy to
# help": recall is traded for precision on purpose.
_RULE_VERBS = frozenset(
    """add amend annotate answer approve ask assume avoid await backport block branch build
    bump bundle bypass cache call catch change check clean close comment commit compare
    configure convert copy create declare decode default delete depend deploy disable do
    document double downgrade download drop edit enable encode escape exclude explain export
    expose extract fall fetch filter follow force format gate generate go guard handle
    hard-code hardcode ignore import include inline install invent keep label leave link lint load
    lock log make mention merge migrate mock modify move mutate name open parse pass persist
    pin prefer prefix print publish pull push put query quote raise read rebase refactor
    regenerate release rely remove rename reply reset respond restart retry return reuse
    review rewrite run sanitize save seed send serialize set share show sign silence skip
    sort specify split squash start stick stop store suppress tag target test throw touch
    truncate trust type unlink unlock update upgrade upload use validate verify wait wrap
    write""".split()
)


def is_rule_verb(word: str) -> bool:
    # "rerun", "re-run", "recheck": a re- prefix keeps the verb a verb.
    return word in _RULE_VERBS or (word.startswith("re") and word[2:].lstrip("-") in _RULE_VERBS)


def count_words(text: str) -> int:
    return len(re.findall(r"[\w`'-]+", text))


_TOOLS = frozenset(
    """pip pipx uv poetry pdm conda hatch pytest unittest nose tox nox ruff black isort flake8
    pylint mypy pyright npm pnpm yarn bun deno node npx jest vitest mocha cypress playwright
    eslint prettier biome tsc webpack vite esbuild rollup docker podman kubectl helm terraform
    make just cmake bazel cargo rustup clippy go gofmt golangci-lint gradle maven mvn git gh rg
    ripgrep grep fd find sed awk curl wget httpie requests httpx aiohttp sqlite sqlite3 postgres
    postgresql mysql redis sqlalchemy alembic django flask fastapi celery react vue svelte redux
    zustand tailwind brew apt nix virtualenv venv pyenv nvm loguru structlog pydantic attrs
    dataclasses argparse click typer sqlc gorm chi gin echo logging print pre-commit""".split()
)
STYLE = re.compile(
    r"\b(?:indent\w*|tabs|spaces|snake_case|camel ?case|pascal ?case|kebab-case|naming|"
    r"type hints?|type annotations?|annotat\w+|docstrings?|comments?|line length|f-strings?|"
    r"single quotes|double quotes|semicolons?|trailing commas?|import order|imports|"
    r"early returns?|guard clauses?|arrow functions?|formatting|variable names?)\b",
    re.IGNORECASE,
)
ENVIRONMENT = re.compile(
    r"\b(?:staging|production|prod|localhost|port \d+|env(?:ironment)? var\w*|vpn|cluster|"
    r"server|host|region|python \d|node \d|machine|ci runner|read-only)\b",
    re.IGNORECASE,
)


def _is_tool(phrase: str) -> bool:
    phrase = phrase.strip().strip("`'\".,;:!").lower()
    first = phrase.split()[0] if phrase.split() else ""
    return first in _TOOLS or phrase in _TOOLS or "`" in phrase


def instruction_category(text: str, tool_a: str = "", tool_b: str = "") -> str:
    if STYLE.search(text):
        return "coding_style"
    if tool_a and (_is_tool(tool_a) or _is_tool(tool_b)):
        return "tool_preference"
    m = re.search(r"\b(?:always|never|only) use\s+(?:the\s+)?(`[^`]+`|[\w.-]+)", text, re.I)
    if m and _is_tool(m.group(1)) and count_words(text) <= 12:
        return "tool_preference"
    return "convention"
