"""Shell command vocabulary: normalising, keying and classifying commands.

Used by ``signals`` to decide whether two commands are "the same attempt"
(``python -m pytest tests/`` and ``pytest tests/ -q`` are) and which
successful commands are worth remembering as the project's build, test, lint,
format or type-check command.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Sequence

from memory_layer.lazyre import LazyPattern

__all__ = [
    "command_key",
    "command_kind",
    "is_trivial",
    "normalise_command",
    "one_off_command",
    "similar",
    "strip_tail",
]

_CD_PREFIX = LazyPattern(
    r"^\s*(?:(?:cd|pushd|source|\.)\s+(?:\"[^\"]*\"|'[^']*'|\S+)|export\s+\w+=\S*|"
    r"nvm\s+use(?:\s+\S+)?|(?:conda|mamba)\s+activate\s+\S+)\s*(?:&&|;)\s*"
)
_WRAPPER_PREFIX = LazyPattern(r"^\s*(?:time|timeout\s+(?:-\S+\s+)*\d+[smh]?)\s+")
# Where one run's output was put aside to read afterwards: a temporary directory or a log
# file (``> /tmp/x.log``, ``2> /tmp/err.txt``, ``&> build.log``), like ``| tee /tmp/…``.
_SCRATCH_FILE = (
    r"(?:['\"]?(?:/tmp/|/var/tmp/|\$\{?TMPDIR\}?/?|%TEMP%|\$env:TEMP)[^\s;&|]*"
    r"|[^\s;&|]+\.(?:log|out|txt))"
)
_TRAILING = LazyPattern(
    rf"\s*(?:&>>?\s*{_SCRATCH_FILE}|\d?>>?\s*{_SCRATCH_FILE}|"
    r"\d?>&\d|\d?>\s*/dev/null|\|\s*(?:tail|head|less|more|cat|grep|tee)\b[^|;&]*|"
    r";\s*echo\b[^|;&]*|&&\s*echo\b[^|;&]*|\|\|\s*(?:true|echo\b[^|;&]*)|\s+&)\s*$"
)


def strip_tail(command: str) -> str:
    """``command`` without what only shapes this run's output (``2>&1 | tail -20``,
    ``; echo``, ``|| true``), its ``cd x &&`` kept: how a person would state it."""
    cmd = command.strip()
    while True:
        new = _TRAILING.sub("", cmd).strip()
        if new == cmd:
            return cmd
        cmd = new


def normalise_command(command: str) -> str:
    """Strip what varies between runs: ``cd x &&``, ``source env &&``, ``| tail``,
    ``2>&1``, ``; echo``."""
    cmd = command.strip()
    while True:
        new = _CD_PREFIX.sub("", cmd)
        new = _WRAPPER_PREFIX.sub("", new)
        new = _TRAILING.sub("", new).strip()
        if new == cmd:
            return re.sub(r"[ \t]+", " ", cmd)
        cmd = new


_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pdm", "run"),
    ("pipenv", "run"),
    ("hatch", "run"),
    ("pnpm", "exec"),
    ("bundle", "exec"),
    ("npm", "exec"),
    ("yarn", "exec"),
}
_SINGLE_RUNNERS = {"sudo", "npx", "bunx", "env", "nice", "command", "exec", "xvfb-run"}
_SUBCOMMAND_TOOLS = frozenset(
    """git npm pnpm yarn bun deno cargo go docker podman kubectl helm terraform uv pip pip3
    poetry pdm make gradle gradlew mvn mvnw dotnet bundle rails mix swift bazel ruff biome
    cmake brew apt apt-get conda npx alembic""".split()
)


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


@functools.lru_cache(maxsize=2048)
def _program_tokens(command: str) -> tuple[str, ...]:
    """Tokens of the first pipeline stage with wrappers and env assignments removed.

    Cached: the same few commands are compared against each other many times
    when a session's event log is scanned.
    """
    first = re.split(r"\s(?:&&|\|\||\||;)\s", normalise_command(command), maxsplit=1)[0]
    toks = _tokens(first)
    while toks:
        head = os.path.basename(toks[0])
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", toks[0]) or head in _SINGLE_RUNNERS:
            toks = toks[1:]
        elif len(toks) > 1 and (head, toks[1]) in _RUNNERS:
            toks = toks[2:]
        elif re.match(r"^python(?:\d(?:\.\d+)?)?$", head) and len(toks) > 2 and toks[1] == "-m":
            toks = toks[2:]
        else:
            break
    if toks:
        toks[0] = os.path.basename(toks[0])
    return tuple(toks)


# Options whose value is a separate token: ``pnpm --filter web build`` runs
# the ``build`` script, not a ``web`` subcommand.
_VALUE_OPTIONS = frozenset(
    {
        "--filter",
        "-F",
        "-C",
        "--dir",
        "--prefix",
        "--workspace",
        "--cwd",
        "-p",
        "--package",
        "--manifest-path",
        "-f",
        "--file",
        "--project-directory",
    }
)


def _positional(args: Sequence[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for tok in args:
        if skip:
            skip = False
        elif tok.startswith("-"):
            skip = tok in _VALUE_OPTIONS
        else:
            out.append(tok)
    return out


def command_key(command: str) -> str:
    """Program plus subcommand: ``pytest``, ``git commit``, ``npm run build``."""
    toks = _program_tokens(command)
    if not toks:
        return ""
    prog = toks[0]
    args = _positional(toks[1:])
    if prog in _SUBCOMMAND_TOOLS and args:
        if prog in ("npm", "pnpm", "yarn", "bun") and args[0] == "run" and len(args) > 1:
            return f"{prog} run {args[1]}"
        return f"{prog} {args[0]}"
    if re.match(r"^(?:python\d?(?:\.\d+)?|node|ruby|perl|bash|sh)$", prog) and args:
        return f"{prog} {args[0]}"
    return prog


def _targets(command: str) -> set[str]:
    """Arguments that name files or directories (``tests/test_db.py``, ``src/``)."""
    toks = _program_tokens(command)[1:]
    return {
        t.rstrip("/")
        for t in toks
        if not t.startswith("-") and ("/" in t or re.search(r"\.\w{1,5}$", t))
    }


_TRIVIAL = frozenset(
    """ls ll la cat cd pwd echo printf head tail less more wc which type whereis file stat tree
    du df ps top htop env printenv clear history man true false sleep date whoami id uname
    grep rg ag fd find sed awk sort uniq diff cmp jq yq open xdg-open""".split()
)
_TRIVIAL_GIT = frozenset(
    {"status", "log", "diff", "show", "branch", "remote", "blame", "rev-parse"}
)


def is_trivial(command: str) -> bool:
    toks = _program_tokens(command)
    if not toks:
        return True
    if toks[0] == "git":
        args = [t for t in toks[1:] if not t.startswith("-")]
        return not args or args[0] in _TRIVIAL_GIT
    return toks[0] in _TRIVIAL


def similar(a: str, b: str) -> bool:
    """Same attempt: same program and subcommand, or the same program on the same file.

    The program must match even for a shared target, otherwise ``cat app.py``
    or ``git add app.py`` would count as a successful retry of ``python app.py``.
    """
    key = command_key(a)
    if key and key == command_key(b):
        return True
    prog_a, prog_b = _program_tokens(a)[:1], _program_tokens(b)[:1]
    return (
        bool(prog_a) and prog_a == prog_b and not is_trivial(a) and bool(_targets(a) & _targets(b))
    )


_KIND_BY_PROGRAM = {
    **dict.fromkeys(
        "pytest tox nox jest vitest mocha rspec phpunit ctest ava karma unittest".split(), "test"
    ),
    **dict.fromkeys(
        "flake8 pylint eslint golangci-lint shellcheck hadolint stylelint rubocop ruff".split(),
        "lint",
    ),
    **dict.fromkeys("black isort prettier gofmt rustfmt clang-format".split(), "format"),
    **dict.fromkeys("mypy pyright tsc pytype".split(), "typecheck"),
    **dict.fromkeys("ninja webpack".split(), "build"),
}
_KIND_BY_KEY = {
    "ruff format": "format",
    "ruff check": "lint",
    "biome check": "lint",
    "biome lint": "lint",
    "biome format": "format",
    "cargo test": "test",
    "cargo clippy": "lint",
    "cargo fmt": "format",
    "cargo build": "build",
    "cargo check": "build",
    "go test": "test",
    "go vet": "lint",
    "go fmt": "format",
    "go build": "build",
    "docker build": "build",
    "podman build": "build",
    "dotnet test": "test",
    "dotnet build": "build",
    "bazel test": "test",
    "bazel build": "build",
    "swift test": "test",
    "swift build": "build",
    "mix test": "test",
    "deno test": "test",
    "deno lint": "lint",
    "deno fmt": "format",
    "uv build": "build",
    "poetry build": "build",
    "cmake --build": "build",
}
_SCRIPT_KINDS = [
    ("typecheck", LazyPattern(r"type-?check|tsc|types|mypy|pyright")),
    ("test", LazyPattern(r"^(?:test|check)\b|test|spec|e2e")),
    ("lint", LazyPattern(r"lint")),
    ("format", LazyPattern(r"fmt|format|prettier")),
    ("build", LazyPattern(r"^(?:build|compile|all|dist|bundle|package|assemble)\b")),
]


def _script_kind(name: str) -> str:
    for kind, pattern in _SCRIPT_KINDS:
        if pattern.search(name):
            return kind
    return ""


def command_kind(command: str) -> str:
    """``test``/``lint``/``format``/``typecheck``/``build``, or ``""`` for other commands."""
    toks = _program_tokens(command)
    if not toks:
        return ""
    prog = toks[0]
    key = command_key(command)
    args = _positional(toks[1:])
    if prog == "cmake" and "--build" in toks:
        return "build"
    if key in _KIND_BY_KEY:
        return _KIND_BY_KEY[key]
    if prog == "docker" and args[:2] == ["compose", "build"]:
        return "build"
    if prog in ("npm", "pnpm", "yarn", "bun") and args:
        script = args[1] if args[0] == "run" and len(args) > 1 else args[0]
        if script in ("install", "add", "remove", "i", "ci", "exec", "dlx", "run"):
            return ""
        return _script_kind(script)
    if prog in ("make", "just", "gradle", "gradlew", "mvn", "mvnw", "rake"):
        if not args:
            return "build" if prog == "make" else ""
        return _script_kind(args[0]) or (
            "build" if args[0] in ("install", "verify", "jar", "war") and prog != "make" else ""
        )
    if prog == "unittest" or (prog == "build" and "-m" not in toks):
        return "test" if prog == "unittest" else "build"
    return _KIND_BY_PROGRAM.get(prog, "")


# A test command naming one source file: `tests/test_api.py`, `src/app.test.ts`, `x_test.go`.
_SINGLE_FILE = LazyPattern(r"\s\S+\.(py|ts|tsx|js|jsx|mjs|go|rs|rb|java|kt|php|cs|swift)(\s|$)")
# One test or one selection: `pytest tests/test_api.py::test_login`, `pytest -k broken`.
_ONE_TEST = LazyPattern(r"::|\s-k\s|\n")
# An image built to try something, not the project's build: `docker build -t myapp:test .`.
_THROWAWAY_TAG = LazyPattern(
    r"\s(?:-t|--tag)[\s=]+\S+:(?:test|tmp|temp|debug|scratch|wip|try|local)\b"
)

# Flags that make a run about this moment rather than the project's command: rerun the
# last failures (``pytest --lf``), stop in the debugger (``--pdb``), watch or open a UI,
# fake a migration (``manage.py migrate --fake``).
_ONE_RUN_FLAGS = frozenset(
    """--pdb --trace --lf --last-failed --ff --failed-first --sw --stepwise --inspect
    --inspect-brk --fake --fake-initial --watch --watchAll --ui""".split()
)
# ... and, on a test command, flags that pick some tests or change the snapshots:
# ``jest -t "name"``, ``pytest -k=name``, ``go test -run TestX``, ``mocha --grep x``,
# ``dotnet test --filter Name``, ``jest -u``.
_ONE_TEST_FLAGS = frozenset(
    """-k -t -g -run --grep --testNamePattern --test-name-pattern --filter --deselect
    --only-failures --onlyFailures --findRelatedTests --testPathPattern -u
    --updateSnapshot --update-snapshots --debug""".split()
)
# The package managers' own --filter picks a workspace package, not tests
# (``pnpm --filter web test`` is a monorepo's test command).
_WORKSPACE_TOOLS = frozenset({"pnpm", "yarn", "npm", "bun", "turbo", "nx"})
_FILE_LINE = LazyPattern(r"\.\w{1,5}:\d+$")  # ``rspec spec/models/user_spec.rb:42``


def _single_run(cmd: str) -> bool:
    """Whether a flag or target of ``cmd`` makes it about this run (see the flag sets)."""
    toks = _program_tokens(cmd)
    flags = {tok.split("=", 1)[0] for tok in toks[1:] if tok.startswith("-")}
    if flags & _ONE_RUN_FLAGS:
        return True
    if command_kind(cmd) != "test":
        return False
    if toks and toks[0] in _WORKSPACE_TOOLS:
        flags.discard("--filter")
    return bool(flags & _ONE_TEST_FLAGS) or any(_FILE_LINE.search(tok) for tok in toks[1:])


# What is left of a command after normalising that still chains another one:
# `rubocop 2>&1 | tail -10; echo "---"; git status --short` is a one-off, while
# `ruff check . && ruff format --check .` chains two checks and is the project's command.
_CHAIN = LazyPattern(r"\s*(?:&&|\|\||\||;)\s*")


def _one_off_chain(cmd: str) -> bool:
    stages = [part for part in _CHAIN.split(cmd) if part.strip()]
    return len(stages) > 1 and not all(
        command_kind(stage) and not is_trivial(stage) for stage in stages
    )


def one_off_command(cmd: str) -> bool:
    """Whether a (normalised) command is too specific to be the project's command: one
    test (``::``, ``-k``, ``jest -t "name"``), a single-run flag (``pytest --lf``,
    ``--pdb``, ``manage.py migrate --fake``), a check aimed at source files (``pytest
    tests/test_api.py``, ``rubocop app/models/user.rb``), a throwaway image tag, or a
    chain ending in other commands (``…; git status --short``). The one noise filter of
    the commands observed (``signals.command_candidates``) and those the assistant states
    (``recipes``)."""
    if _ONE_TEST.search(cmd) or _THROWAWAY_TAG.search(cmd) or _one_off_chain(cmd):
        return True
    if _single_run(cmd):
        return True
    return bool(command_kind(cmd)) and bool(_SINGLE_FILE.search(cmd))
