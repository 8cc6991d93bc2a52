"""bin/memory-layer and the real package behind the plugin, run as Claude Code runs them.

The shim is what the Bash tool and the MCP server start; the last tests drive
hooks.json's commands and .mcp.json's server with the real memory_layer package,
where the launcher's fail-open would otherwise hide a crashing hook.
Helpers come from test_plugin_launcher.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_plugin_launcher import (
    HOOK_COMMANDS,
    RECORDER,
    REPO,
    copy_plugin,
    hooks_log,
    isolated_env,
    make_venv,
    plugin_key,
    write_script,
)


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return copy_plugin(tmp_path)


@pytest.fixture
def out(tmp_path: Path) -> Path:
    path = tmp_path / "out"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path: Path, user_home: Path) -> dict[str, str]:
    return isolated_env(tmp_path, user_home)


# bin/memory-layer -------------------------------------------------------------


def test_bin_shim_execs_the_resolved_python(plugin: Path, out: Path, env: dict[str, str]) -> None:
    python = write_script(out.parent / "bin" / "python", RECORDER.format(out=out))
    result = subprocess.run(
        [str(plugin / "bin" / "memory-layer"), "recall", "it's a query", "--json"],
        input=b"stdin for the cli",
        capture_output=True,
        env={**env, "MEMORY_LAYER_PYTHON": str(python), "FAKE_EXIT": "4"},
    )

    # exec: the CLI's own output and exit status, unchanged.
    assert result.returncode == 4
    assert result.stdout == b"context from the hook\n"
    assert (out / "argv").read_text().split("\n")[:-1] == [
        "-m",
        "memory_layer",
        "recall",
        "it's a query",
        "--json",
    ]
    assert (out / "stdin").read_bytes() == b"stdin for the cli"


def test_bin_shim_finds_the_venv_from_the_bash_tool(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """The Bash tool has no CLAUDE_PLUGIN_DATA; the data dirs under ~/.claude are searched."""
    data = Path(env["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / "memory-layer-memory-layer"
    make_venv(data, out, plugin_key(plugin))
    # Another marketplace's copy with a stale marker must be skipped.
    other = Path(env["CLAUDE_CONFIG_DIR"]) / "plugins" / "data" / "memory-layer-aaa"
    make_venv(other, out, "1-2", "#!/bin/sh\nexit 99\n")

    result = subprocess.run(
        [str(plugin / "bin" / "memory-layer"), "stats"], capture_output=True, env=env
    )

    assert result.returncode == 0
    assert (out / "argv").read_text().split() == ["-m", "memory_layer", "stats"]


def test_bin_shim_explains_a_missing_install(plugin: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [str(plugin / "bin" / "memory-layer"), "stats"],
        capture_output=True,
        env={**env, "PATH": f"{plugin / 'bin'}:{env['PATH']}"},
    )

    assert result.returncode == 1
    assert result.stdout == b""
    message = result.stderr.decode()
    assert "not installed" in message
    assert "MEMORY_LAYER_PYTHON" in message and "PATH" in message
    # The hint installs this project from the plugin's own source tree, never the PyPI
    # name memory-layer (an unrelated package with the same module name).
    assert f'pipx install "{plugin.resolve()}"' in message
    assert "pipx install memory-layer" not in " ".join(message.split())


# the real hook module behind the launcher -----------------------------------

SESSION = {
    "session_id": "plugin-e2e",
    "transcript_path": "",
    "permission_mode": "default",
}
REAL_EVENTS: list[tuple[str, dict[str, object]]] = [
    ("SessionStart", {"source": "startup"}),
    ("UserPromptSubmit", {"prompt": "how do I run the integration tests?"}),
    ("TaskCreated", {"task_id": "1", "task_subject": "Run the integration tests"}),
    (
        "PostToolUseFailure",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest tests/integration"},
            "tool_use_id": "t1",
            "error": "Exit code 1\nconnection refused",
            "is_interrupt": False,
        },
    ),
    (
        "PostToolUse",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "docker compose up -d db && pytest tests/integration"},
            "tool_use_id": "t2",
            "tool_response": {"stdout": "5 passed", "stderr": "", "interrupted": False},
        },
    ),
    ("TaskCompleted", {"task_id": "1", "task_subject": "Run the integration tests"}),
    ("Stop", {"stop_hook_active": False, "last_assistant_message": "The tests pass now."}),
    ("SubagentStop", {"stop_hook_active": False, "last_assistant_message": "Done."}),
    ("PreCompact", {"trigger": "manual", "custom_instructions": ""}),
    ("SessionEnd", {"reason": "other"}),
]


def test_every_event_runs_the_real_hook_module_without_failing(
    out: Path, env: dict[str, str], tmp_path: Path, user_home: Path
) -> None:
    """hooks.json → hooks/run → `python -m memory_layer.hooks`, with the real package.

    The launcher hides failures from Claude Code (fail-open), so this is where a
    crashing hook would otherwise go unnoticed: the log must show no failure.
    """
    user_home.mkdir(parents=True, exist_ok=True)
    # No warm engine: the test must not leave a server running.
    (user_home / "config.yaml").write_text("engine:\n  enabled: false\n")
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {
        **env,
        "MEMORY_LAYER_PYTHON": sys.executable,
        "CLAUDE_PROJECT_DIR": str(project),
        "HF_HUB_OFFLINE": "1",
    }
    remembered = subprocess.run(
        [
            str(REPO / "bin" / "memory-layer"),
            "remember",
            "Start the db with docker compose up -d db before the integration tests",
            "--category",
            "command",
        ],
        capture_output=True,
        env=env,
        cwd=project,
    )
    assert remembered.returncode == 0, remembered.stderr

    outputs = {}
    for event, fields in REAL_EVENTS:
        payload = json.dumps(
            {**SESSION, "hook_event_name": event, "cwd": str(project), **fields}
        ).encode()
        command = HOOK_COMMANDS[event].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO))
        result = subprocess.run(
            ["/bin/sh", "-c", command],
            input=payload,
            capture_output=True,
            env=env,
            cwd=project,
            timeout=120,
        )
        assert result.returncode == 0, event
        outputs[event] = result.stdout.decode()

    log = hooks_log(env)
    assert "exited with status" not in log, log
    assert "Traceback" not in log, log
    # What /remember stored reaches the next session as context, in the JSON form.
    start = json.loads(outputs["SessionStart"])
    context = start["hookSpecificOutput"]["additionalContext"]
    assert "docker compose up -d db" in context
    for text in outputs.values():
        if text.strip():
            json.loads(text)  # anything a hook prints must be the JSON Claude Code parses


def test_the_mcp_server_from_mcp_json_answers_through_the_shim(
    env: dict[str, str], tmp_path: Path
) -> None:
    """.mcp.json → bin/memory-layer mcp: the shim must add nothing to the stdio protocol."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    server = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["memory-layer"]
    params = StdioServerParameters(
        command=server["command"].replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)),
        args=server["args"],
        env={**env, "MEMORY_LAYER_PYTHON": sys.executable, "HF_HUB_OFFLINE": "1"},
        cwd=str(tmp_path),
    )

    async def list_tools() -> list[str]:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [tool.name for tool in (await session.list_tools()).tools]

    names = anyio.run(list_tools)

    assert "search" in names
