"""The plugin's static files match what Claude Code accepts and what the launcher and CLI offer.

The rules mirror Claude Code's own manifest schemas (plugin.json, marketplace.json,
hooks.json, userConfig options, command/skill frontmatter), so a typo fails here
instead of making Claude Code silently skip the plugin or a hook.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = "${CLAUDE_PLUGIN_ROOT}/hooks/run"

# Every hook event Claude Code knows (hooks reference, 2.1.240).
CLAUDE_CODE_EVENTS = {
    "Setup",
    "SessionStart",
    "InstructionsLoaded",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "MessageDisplay",
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "Stop",
    "StopFailure",
    "TeammateIdle",
    "ConfigChange",
    "CwdChanged",
    "DirectoryAdded",
    "FileChanged",
    "WorktreeCreate",
    "WorktreeRemove",
    "PreCompact",
    "PostCompact",
    "Elicitation",
    "ElicitationResult",
    "SessionEnd",
}
# What the plugin registers, and the events `python -m memory_layer.hooks` handles.
REGISTERED = {
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "SessionEnd",
    "TaskCreated",
    "TaskCompleted",
}
CAPTURE_TOOLS = {"Bash", "PowerShell", "Edit", "Write", "MultiEdit", "TaskCreate", "TaskUpdate"}

USER_CONFIG_KEYS = {
    "type",
    "title",
    "description",
    "required",
    "default",
    "multiple",
    "sensitive",
    "min",
    "max",
}
HOOK_HANDLER_KEYS = {"type", "command", "args", "timeout", "async", "shell", "if", "statusMessage"}
FRONTMATTER_KEYS = {
    "name",
    "description",
    "argument-hint",
    "allowed-tools",
    "model",
    "disable-model-invocation",
    "user-invocable",
    "context",
    "agent",
    "hooks",
    "paths",
    "when_to_use",
}
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
# Claude Code refuses marketplace names that impersonate official ones.
BLOCKED_MARKETPLACE = re.compile(
    r"(?:official[^a-z0-9]*(anthropic|claude)|(?:anthropic|claude)[^a-z0-9]*official"
    r"|^(?:anthropic|claude)[^a-z0-9]*(marketplace|plugins|official))",
    re.IGNORECASE,
)


def load(relative: str) -> Any:
    return json.loads((ROOT / relative).read_text(encoding="utf-8"))


def frontmatter(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path} must start with a '---' frontmatter block"
    head, sep, body = text[4:].partition("\n---\n")
    assert sep, f"{path}: frontmatter is not closed with '---'"
    meta = yaml.safe_load(head)
    assert isinstance(meta, dict), f"{path}: frontmatter must be a YAML mapping"
    return meta, body


def command_files() -> list[Path]:
    return sorted((ROOT / "commands").glob("*.md"))


def skill_files() -> list[Path]:
    return sorted((ROOT / "skills").glob("*/SKILL.md"))


# plugin.json ---------------------------------------------------------------


def test_plugin_manifest_metadata() -> None:
    manifest = load(".claude-plugin/plugin.json")
    assert manifest["name"] == "memory-layer"
    assert KEBAB.match(manifest["name"])
    assert re.match(r"^\d+\.\d+\.\d+", manifest["version"])
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert manifest["version"] == pyproject["project"]["version"], (
        "plugin.json and pyproject.toml must ship the same version: the plugin version "
        "decides when users get an update, the package version what they get"
    )
    assert manifest["license"] == "Apache-2.0"
    assert manifest["author"]["name"].strip()
    assert manifest["description"].strip()
    assert all(isinstance(k, str) and k for k in manifest["keywords"])


def test_plugin_manifest_paths_are_plugin_relative() -> None:
    manifest = load(".claude-plugin/plugin.json")
    for field in (
        "skills",
        "commands",
        "agents",
        "hooks",
        "mcpServers",
        "outputStyles",
        "lspServers",
    ):
        values = manifest.get(field, [])
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str):
                assert value.startswith("./"), f"{field}: {value!r} must start with ./"
                assert ".." not in value, f"{field}: {value!r} must stay inside the plugin"
                assert (ROOT / value).exists(), f"{field}: {value!r} does not exist"


def test_user_config_options_have_the_shape_claude_code_requires() -> None:
    options = load(".claude-plugin/plugin.json")["userConfig"]
    assert {"dashboard_port", "inject_limit"} <= set(options)
    for key, option in options.items():
        assert re.match(r"^[A-Za-z_]\w*$", key), f"{key}: becomes CLAUDE_PLUGIN_OPTION_<KEY>"
        assert set(option) <= USER_CONFIG_KEYS, f"{key}: unknown keys fail validation"
        assert option["type"] in {"string", "number", "boolean", "directory", "file"}
        assert option["title"].strip() and option["description"].strip()
        default = option.get("default")
        if option["type"] == "number":
            assert isinstance(default, int | float) and not isinstance(default, bool)
            assert option.get("min", default) <= default <= option.get("max", default)
        elif option["type"] == "boolean":
            assert isinstance(default, bool)
    port = options["dashboard_port"]
    assert port["default"] == 8080
    assert port["min"] >= 1024 and port["max"] == 65535


# marketplace.json ----------------------------------------------------------


def test_marketplace_lists_this_plugin() -> None:
    market = load(".claude-plugin/marketplace.json")
    assert market["name"] == "memory-layer"
    assert " " not in market["name"] and not BLOCKED_MARKETPLACE.search(market["name"])
    assert market["owner"]["name"].strip()
    assert len(market["plugins"]) == 1
    entry = market["plugins"][0]
    assert entry["name"] == "memory-layer"
    source = entry["source"]
    assert isinstance(source, str) and source.startswith("./") and ".." not in source
    plugin_dir = (ROOT / source).resolve()
    manifest = plugin_dir / ".claude-plugin" / "plugin.json"
    assert manifest.is_file(), f"source {source!r} must hold .claude-plugin/plugin.json"
    # An entry name that differs from the manifest name breaks `/plugin install`.
    assert json.loads(manifest.read_text(encoding="utf-8"))["name"] == entry["name"]
    # plugin.json silently wins over a marketplace version; keep a single source of truth.
    assert "version" not in entry


# hooks.json ----------------------------------------------------------------


def hook_handlers() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    config = load("hooks/hooks.json")
    assert set(config) <= {"description", "hooks"}
    found = []
    for event, groups in config["hooks"].items():
        assert isinstance(groups, list) and groups, event
        for group in groups:
            assert set(group) <= {"matcher", "hooks"}, event
            for handler in group["hooks"]:
                found.append((event, group, handler))
    return found


def test_hooks_register_exactly_the_supported_events() -> None:
    events = set(load("hooks/hooks.json")["hooks"])
    assert events <= CLAUDE_CODE_EVENTS, f"not Claude Code events: {events - CLAUDE_CODE_EVENTS}"
    assert events == REGISTERED


def test_every_hook_runs_the_launcher_for_its_own_event() -> None:
    launcher = ROOT / "hooks" / "run"
    assert launcher.is_file() and os.access(launcher, os.X_OK)
    for event, _group, handler in hook_handlers():
        assert set(handler) <= HOOK_HANDLER_KEYS, (event, handler)
        assert handler["type"] == "command"
        # Quoted so a plugin root with spaces stays one word.
        assert shlex.split(handler["command"]) == [LAUNCHER, event], handler["command"]
        assert handler["command"].startswith(f'"{LAUNCHER}" ')
        timeout = handler["timeout"]
        assert isinstance(timeout, int | float) and timeout > 0, event
        assert isinstance(handler.get("async", False), bool)


def test_hook_timeouts_fit_claude_codes_budgets() -> None:
    timeouts = {event: handler["timeout"] for event, _g, handler in hook_handlers()}
    # SessionEnd hooks share 1.5 s in total; plugin timeouts cannot raise it.
    assert timeouts["SessionEnd"] <= 1.5
    # UserPromptSubmit output is dropped after 30 s.
    assert timeouts["UserPromptSubmit"] < 30
    # Timeouts are seconds; values in the thousands mean someone wrote milliseconds.
    assert max(timeouts.values()) <= 120


def test_hook_matchers_are_valid_and_cover_what_we_capture() -> None:
    matchers: dict[str, str] = {}
    for event, group, handler in hook_handlers():
        if "matcher" in group:
            re.compile(group["matcher"])
            matchers[event] = group["matcher"]
        if event in {"PostToolUse", "PostToolUseFailure"}:
            assert handler.get("async") is True, f"{event} capture must not block the session"
    assert set(matchers["SessionStart"].split("|")) == {"startup", "resume", "clear", "compact"}
    for event in ("PostToolUse", "PostToolUseFailure"):
        assert set(matchers[event].split("|")) == CAPTURE_TOOLS
    # Claude Code reads names joined by '|' as exact names; keep them plain words.
    for matcher in matchers.values():
        assert all(re.fullmatch(r"[A-Za-z]+", name) for name in matcher.split("|")), matcher


def test_plugin_scripts_are_executable() -> None:
    for relative in ("hooks/run", "hooks/bootstrap", "bin/memory-layer"):
        path = ROOT / relative
        assert path.is_file() and os.access(path, os.X_OK), relative
        assert path.read_text(encoding="utf-8").startswith("#!/bin/sh\n"), relative


# .mcp.json -----------------------------------------------------------------


def test_mcp_server_starts_through_the_bin_shim() -> None:
    servers = load(".mcp.json")["mcpServers"]
    assert servers == {
        "memory-layer": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/memory-layer", "args": ["mcp"]}
    }
    command = Path(servers["memory-layer"]["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(ROOT)))
    assert command.is_file() and os.access(command, os.X_OK)


# commands and skills -------------------------------------------------------


def test_command_and_skill_files_exist() -> None:
    names = {path.stem for path in command_files()}
    assert names == {"remember", "recall", "forget", "outcome", "memories", "review"}
    assert [path.parent.name for path in skill_files()] == ["memory-layer"]


@pytest.mark.parametrize("path", command_files(), ids=lambda p: p.name)
def test_command_frontmatter(path: Path) -> None:
    meta, body = frontmatter(path)
    assert set(meta) <= FRONTMATTER_KEYS, set(meta) - FRONTMATTER_KEYS
    assert isinstance(meta["description"], str) and 0 < len(meta["description"]) <= 1536
    assert isinstance(meta["argument-hint"], str) and meta["argument-hint"].strip()
    # The commands may run memory-layer and nothing else.
    assert meta["allowed-tools"] == "Bash(memory-layer:*)"
    assert "$ARGUMENTS" in body


@pytest.mark.parametrize("path", skill_files(), ids=lambda p: p.parent.name)
def test_skill_frontmatter(path: Path) -> None:
    meta, body = frontmatter(path)
    assert set(meta) <= FRONTMATTER_KEYS, set(meta) - FRONTMATTER_KEYS
    assert meta["name"] == path.parent.name and KEBAB.match(meta["name"])
    assert isinstance(meta["description"], str) and 0 < len(meta["description"]) <= 1536
    assert body.strip()


def cli_invocations(text: str) -> list[list[str]]:
    """Every `memory-layer ...` command written in backticks, as argv lists."""
    found = []
    for snippet in re.findall(r"`(memory-layer [^`]+)`", text):
        # Drop placeholders and optional parts; keep subcommand and --flags.
        words = re.sub(r"\[[^\]]*\]|<[^>]*>|'[^']*'", " ", snippet).split()
        found.append(words[1:])
    return found


@pytest.mark.parametrize(
    "path", command_files() + skill_files(), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_documented_cli_calls_exist(path: Path) -> None:
    """Each subcommand and --flag the instructions tell the agent to use is real."""
    from memory_layer.cli import cli

    calls = cli_invocations(path.read_text(encoding="utf-8"))
    assert calls, f"{path} never says which memory-layer command to run"
    for argv in calls:
        command: click.Command = cli
        name = "memory-layer"
        words = list(argv)
        # Descend through groups (`review accept`) to the command that gets the flags.
        while isinstance(command, click.Group) and words and not words[0].startswith("-"):
            sub = words.pop(0)
            assert sub in command.commands, f"{path.name}: `{name} {sub}` is not a CLI command"
            command = command.commands[sub]
            name = f"{name} {sub}"
        flags = {"--help", "-h"} | {
            opt
            for param in command.params
            if isinstance(param, click.Option)
            for opt in param.opts + param.secondary_opts
        }
        for word in words:
            if word.startswith("-"):
                assert word in flags, f"{path.name}: `{name}` has no {word}"


# The README's and docs/plugin.md's way to add a development checkout as a marketplace.
CLEAN_CLONE = 'git clone --depth 1 "file://$PWD" ~/.local/share/memory-layer-plugin'
# The plugin's own files are well under this; a development .venv is over 500 MB.
PLUGIN_COPY_MAX_BYTES = 20 * 1024 * 1024


def test_the_documented_clean_clone_leaves_the_dev_venv_behind(tmp_path: Path) -> None:
    """Claude Code copies a local marketplace whole; the clone the docs tell you to add
    instead holds the plugin and none of a checkout's .venv, caches or builds."""
    import subprocess

    for doc in ("README.md", "docs/plugin.md"):
        assert CLEAN_CLONE in (ROOT / doc).read_text(encoding="utf-8"), doc
    home = tmp_path / "home"
    home.mkdir()
    result = subprocess.run(
        ["bash", "-c", CLEAN_CLONE],
        cwd=ROOT,
        env={**os.environ, "HOME": str(home), "PWD": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    clone = home / ".local/share/memory-layer-plugin"
    for part in (".claude-plugin/plugin.json", ".claude-plugin/marketplace.json",
                 "hooks/hooks.json", "bin/memory-layer", "pyproject.toml"):
        assert (clone / part).is_file(), part
    assert not (clone / ".venv").exists()
    size = sum(p.stat().st_size for p in clone.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert size < PLUGIN_COPY_MAX_BYTES
