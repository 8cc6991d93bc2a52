"""hooks/run and bin/memory-layer, run as Claude Code runs them: real subprocesses.

The Python side is replaced by small shell scripts that record their argv,
stdin and environment, so these tests check the launcher alone: which
interpreter it picks, that stdin and stdout pass through untouched, that it
always exits 0, and that a first run starts the installer detached.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HOOK_COMMANDS = {
    event: group["hooks"][0]["command"]
    for event, groups in json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"].items()
    for group in groups
}
# A payload with non-ASCII text, quotes and a large body: stdin must arrive byte for byte.
PAYLOAD = json.dumps(
    {
        "session_id": "abc123",
        "hook_event_name": "PostToolUse",
        "cwd": "/home/u/proj with space",
        "tool_name": "Bash",
        "tool_input": {"command": "echo 'héllo' \"$HOME\""},
        "tool_response": {"stdout": "x" * 200_000, "stderr": "", "interrupted": False},
    }
).encode()

RECORDER = """#!/bin/sh
# Stands in for python / memory-layer: records what it was given.
printf '%s\\n' "$@" > "{out}/argv"
cat > "{out}/stdin"
printf '%s' "${{PYTHONSAFEPATH:-}}" > "{out}/safepath"
printf '%s' "${{MEMORY_LAYER_VIA_PLUGIN:-}}" > "{out}/via"
echo "context from the hook"
echo "a warning on stderr" >&2
exit "${{FAKE_EXIT:-0}}"
"""

SLOW_BASE_PYTHON = """#!/bin/sh
# A base interpreter whose `-m venv` takes 20 s: stands in for a slow install.
case "$1" in
    -c) exit 0 ;;
esac
echo $$ > "{out}/sleeper.pid"
sleep 20
echo finished > "{out}/sleeper.done"
exit 1
"""


def write_script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def copy_plugin(tmp_path: Path) -> Path:
    """A copy of the plugin's launcher files, so tests never touch the repository."""
    root = tmp_path / "plugin root"  # a space, as in real install paths on macOS
    for relative in ("hooks", "bin", ".claude-plugin"):
        shutil.copytree(REPO / relative, root / relative)
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def isolated_env(tmp_path: Path, user_home: Path) -> dict[str, str]:
    """No usable python anywhere: no MEMORY_LAYER_PYTHON, no data dir, no CLI on PATH."""
    base = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("MEMORY_LAYER_", "CLAUDE_"))
    }
    base.update(
        PATH="/usr/bin:/bin",
        HOME=str(tmp_path / "home"),
        MEMORY_LAYER_HOME=str(user_home),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude-config"),
    )
    return base


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


@pytest.fixture
def kill_later() -> Iterator[list[int]]:
    """Pids of detached installers a test started; ended at teardown with their children.

    The bootstrap runs in a process group of its own (setsid), so ending that
    group ends the installer, the fake python and its sleep, and nothing else.
    """
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != os.getpgid(0):
                os.killpg(group, signal.SIGTERM)
            else:
                os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def run_hook(
    plugin: Path, event: str, env: dict[str, str], stdin: bytes = PAYLOAD
) -> subprocess.CompletedProcess[bytes]:
    """Spawn the command from hooks.json the way Claude Code does: through a shell."""
    command = HOOK_COMMANDS[event].replace("${CLAUDE_PLUGIN_ROOT}", str(plugin))
    env = {**env, "CLAUDE_PLUGIN_ROOT": str(plugin)}
    return subprocess.run(
        ["/bin/sh", "-c", command], input=stdin, capture_output=True, env=env, timeout=60
    )


def hooks_log(env: dict[str, str]) -> str:
    path = Path(env["MEMORY_LAYER_HOME"]) / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def plugin_key(root: Path) -> str:
    """The install key (venv-<key>), computed independently of hooks/lib.sh."""
    data = (root / "pyproject.toml").read_bytes() + (
        root / ".claude-plugin" / "plugin.json"
    ).read_bytes()
    crc, size = subprocess.run(
        ["cksum"], input=data, capture_output=True, check=True
    ).stdout.split()
    return f"{crc.decode()}-{size.decode()}"


def wait_for(path: Path) -> None:
    """Wait for a detached process to show up; generous, this is not a speed check."""
    for _ in range(300):
        if path.exists() and path.read_text().strip():
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# the resolved python gets stdin, argv and the exit status --------------------


@pytest.mark.parametrize("event", sorted(HOOK_COMMANDS))
def test_stdin_and_stdout_pass_through_for_every_event(
    plugin: Path, out: Path, env: dict[str, str], event: str
) -> None:
    python = write_script(out.parent / "bin" / "python", RECORDER.format(out=out))
    result = run_hook(plugin, event, {**env, "MEMORY_LAYER_PYTHON": str(python)})

    assert result.returncode == 0
    assert result.stdout == b"context from the hook\n"
    assert (out / "argv").read_text().split("\n")[:-1] == ["-m", "memory_layer.hooks", event]
    assert (out / "stdin").read_bytes() == PAYLOAD
    # The project cwd must never shadow the installed package.
    assert (out / "safepath").read_text() == "1"
    # The hook's stderr goes to the log, not to Claude Code.
    assert result.stderr == b""
    assert "a warning on stderr" in hooks_log(env)


def test_a_crashing_hook_fails_open_and_is_logged(
    plugin: Path, out: Path, env: dict[str, str]
) -> None:
    python = write_script(out.parent / "bin" / "python", RECORDER.format(out=out))
    result = run_hook(
        plugin, "UserPromptSubmit", {**env, "MEMORY_LAYER_PYTHON": str(python), "FAKE_EXIT": "3"}
    )

    assert result.returncode == 0
    log = hooks_log(env)
    assert "UserPromptSubmit" in log and "exited with status 3" in log
    assert "a warning on stderr" in log


def test_an_unknown_event_is_refused_without_running_python(
    plugin: Path, out: Path, env: dict[str, str]
) -> None:
    python = write_script(out.parent / "bin" / "python", RECORDER.format(out=out))
    result = subprocess.run(
        [str(plugin / "hooks" / "run"), "PreToolUse"],
        input=PAYLOAD,
        capture_output=True,
        env={**env, "MEMORY_LAYER_PYTHON": str(python)},
    )

    assert result.returncode == 0
    assert result.stdout == b""
    assert not (out / "argv").exists()
    assert "unsupported event 'PreToolUse'" in hooks_log(env)


def test_an_unusable_memory_layer_python_is_reported(plugin: Path, env: dict[str, str]) -> None:
    result = run_hook(plugin, "SessionStart", {**env, "MEMORY_LAYER_PYTHON": "/nonexistent/python"})

    assert result.returncode == 0
    assert b"MEMORY_LAYER_PYTHON=/nonexistent/python" in result.stdout
    assert "is not an executable file" in hooks_log(env)


def test_sigterm_from_a_hook_timeout_reaches_the_python_child(
    plugin: Path, out: Path, env: dict[str, str]
) -> None:
    python = write_script(
        out.parent / "bin" / "python",
        f'#!/bin/sh\necho $$ > "{out}/child.pid"\nexec sleep 30\n',
    )
    proc = subprocess.Popen(
        [str(plugin / "hooks" / "run"), "Stop"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**env, "MEMORY_LAYER_PYTHON": str(python)},
    )
    wait_for(out / "child.pid")
    child = int((out / "child.pid").read_text())

    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=20)

    assert proc.returncode == 0
    # The child is gone too, so nothing keeps Claude Code's stdout pipe open.
    for _ in range(200):
        if not alive(child):
            break
        time.sleep(0.05)
    assert not alive(child)
    assert "exited with status 143" in hooks_log(env)


# which install is used ------------------------------------------------------


def make_venv(data: Path, out: Path, key: str, script: str = RECORDER) -> Path:
    """A finished install for ``key``, as hooks/bootstrap leaves it."""
    python = write_script(data / f"venv-{key}" / "bin" / "python", script.format(out=out))
    (data / f"venv-{key}" / ".memory-layer-key").write_text(key + "\n")
    return python


def test_the_plugin_venv_for_this_version_is_used(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "plugin-data"
    make_venv(data, out, plugin_key(plugin))

    result = run_hook(plugin, "Stop", {**env, "CLAUDE_PLUGIN_DATA": str(data)})

    assert result.returncode == 0
    assert result.stdout == b"context from the hook\n"
    assert (out / "argv").read_text().split() == ["-m", "memory_layer.hooks", "Stop"]


def test_another_versions_venv_serves_while_ours_is_installed(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path, kill_later: list[int]
) -> None:
    data = tmp_path / "plugin-data"
    make_venv(data, out, "1234-5678")  # the install of an older plugin version
    write_script(tmp_path / "base-python", SLOW_BASE_PYTHON.format(out=out))

    result = run_hook(
        plugin,
        "SessionStart",
        {
            **env,
            "CLAUDE_PLUGIN_DATA": str(data),
            "MEMORY_LAYER_BOOTSTRAP_PYTHON": str(tmp_path / "base-python"),
        },
    )
    wait_for(out / "sleeper.pid")
    kill_later.append(int((out / "sleeper.pid").read_text()))

    assert result.returncode == 0
    # The old install answered, and nothing was added to its output (it may be JSON).
    assert (out / "argv").read_text().split() == ["-m", "memory_layer.hooks", "SessionStart"]
    assert result.stdout == b"context from the hook\n"
    assert "no install for this plugin version yet" in hooks_log(env)


def test_two_plugin_versions_in_use_each_keep_their_own_venv(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A session still on the old version must not rebuild the new one's install.

    Claude Code keeps an old plugin version running in open sessions after an
    update; both versions share one data directory.
    """
    old_plugin = tmp_path / "old plugin"
    shutil.copytree(plugin, old_plugin)
    manifest = old_plugin / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"version": "', '"version": "0.0.9-'))
    data = tmp_path / "plugin-data"
    make_venv(data, out, plugin_key(plugin))
    make_venv(data, out / "old", plugin_key(old_plugin))
    (out / "old").mkdir()
    env = {**env, "CLAUDE_PLUGIN_DATA": str(data)}

    for root, argv in ((plugin, out / "argv"), (old_plugin, out / "old" / "argv")):
        result = run_hook(root, "SessionStart", env)
        assert result.returncode == 0
        assert argv.read_text().split() == ["-m", "memory_layer.hooks", "SessionStart"]
    assert plugin_key(plugin) != plugin_key(old_plugin)
    assert not (data / "bootstrap.log").exists()  # nothing was (re)installed


def test_another_versions_venv_loses_to_a_memory_layer_on_path(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "plugin-data"
    make_venv(data, out, "1234-5678", "#!/bin/sh\nexit 99\n")
    write_script(tmp_path / "user-bin" / "memory-layer", RECORDER.format(out=out))

    result = run_hook(
        plugin,
        "Stop",
        {**env, "PATH": f"{tmp_path / 'user-bin'}:{env['PATH']}", "CLAUDE_PLUGIN_DATA": str(data)},
    )

    assert result.returncode == 0
    assert (out / "argv").read_text().split() == ["hook", "Stop"]
    assert not (data / "bootstrap.log").exists()


def test_a_memory_layer_on_path_is_used_when_there_is_no_venv(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path
) -> None:
    cli_dir = tmp_path / "user-bin"
    write_script(cli_dir / "memory-layer", RECORDER.format(out=out))
    path = f"{plugin / 'bin'}:{cli_dir}:{env['PATH']}"  # the plugin's own shim comes first

    result = run_hook(
        plugin, "PreCompact", {**env, "PATH": path, "CLAUDE_PLUGIN_DATA": str(tmp_path / "d")}
    )

    assert result.returncode == 0
    assert result.stdout == b"context from the hook\n"
    assert (out / "argv").read_text().split() == ["hook", "PreCompact"]
    assert (out / "stdin").read_bytes() == PAYLOAD
    assert (out / "via").read_text() == "1"


# first run: the detached bootstrap ----------------------------------------


def test_first_session_starts_the_install_detached_and_returns(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path, kill_later: list[int]
) -> None:
    data = tmp_path / "plugin-data"
    write_script(tmp_path / "base-python", SLOW_BASE_PYTHON.format(out=out))
    # The plugin's own bin/memory-layer on PATH must not be mistaken for an install.
    env = {
        **env,
        "PATH": f"{plugin / 'bin'}:{env['PATH']}",
        "CLAUDE_PLUGIN_DATA": str(data),
        "MEMORY_LAYER_BOOTSTRAP_PYTHON": str(tmp_path / "base-python"),
    }

    # subprocess.run returns only once the hook exited AND its stdout/stderr
    # pipes closed: the detached installer holds neither.
    result = run_hook(plugin, "SessionStart", env)
    wait_for(out / "sleeper.pid")
    sleeper = int((out / "sleeper.pid").read_text())
    kill_later.append(sleeper)

    assert result.returncode == 0
    assert result.stdout.decode().count("\n") == 1
    assert "being installed in the background" in result.stdout.decode()
    assert str(data / "bootstrap.log") in result.stdout.decode()
    # The hook is done while the 20 s installer is still working.
    assert alive(sleeper) and not (out / "sleeper.done").exists()
    # It runs in a session of its own, so a terminal hangup does not kill it.
    assert os.getsid(sleeper) != os.getsid(0)
    assert (data / "bootstrap.lock").is_dir()
    assert "started" in hooks_log(env)


def test_other_events_start_the_install_quietly(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path, kill_later: list[int]
) -> None:
    data = tmp_path / "plugin-data"
    write_script(tmp_path / "base-python", SLOW_BASE_PYTHON.format(out=out))
    env = {
        **env,
        "CLAUDE_PLUGIN_DATA": str(data),
        "MEMORY_LAYER_BOOTSTRAP_PYTHON": str(tmp_path / "base-python"),
    }

    result = run_hook(plugin, "UserPromptSubmit", env)
    wait_for(out / "sleeper.pid")
    kill_later.append(int((out / "sleeper.pid").read_text()))

    assert result.returncode == 0
    assert result.stdout == b""  # plain stdout would be injected into the prompt


def test_a_failed_install_is_retried_at_session_start_only(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path, kill_later: list[int]
) -> None:
    data = tmp_path / "plugin-data"
    data.mkdir()
    (data / "bootstrap.failed").write_text("2026-01-01T00:00:00Z\n")
    write_script(tmp_path / "base-python", SLOW_BASE_PYTHON.format(out=out))
    env = {
        **env,
        "CLAUDE_PLUGIN_DATA": str(data),
        "MEMORY_LAYER_BOOTSTRAP_PYTHON": str(tmp_path / "base-python"),
    }

    # A tool call must not rerun a failing pip install every time.
    quiet = run_hook(plugin, "PostToolUse", env)
    assert quiet.returncode == 0 and quiet.stdout == b""
    assert not (data / "bootstrap.log").exists()

    retry = run_hook(plugin, "SessionStart", env)
    wait_for(out / "sleeper.pid")
    kill_later.append(int((out / "sleeper.pid").read_text()))
    assert retry.returncode == 0
    assert b"last background install failed" in retry.stdout


def test_session_start_exports_the_data_dir_for_the_bash_tool(
    plugin: Path, out: Path, env: dict[str, str], tmp_path: Path
) -> None:
    data = tmp_path / "plugin-data"
    make_venv(data, out, plugin_key(plugin))
    env_file = tmp_path / "claude-env.sh"
    env_file.write_text("export OTHER=1\n")

    result = run_hook(
        plugin,
        "SessionStart",
        {**env, "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_ENV_FILE": str(env_file)},
    )

    assert result.returncode == 0
    assert env_file.read_text() == f"export OTHER=1\nexport MEMORY_LAYER_PLUGIN_DATA='{data}'\n"


def test_without_a_data_dir_nothing_is_installed(plugin: Path, env: dict[str, str]) -> None:
    result = run_hook(plugin, "SessionStart", env)

    assert result.returncode == 0
    assert b"memory-layer is not installed" in result.stdout
    assert "CLAUDE_PLUGIN_DATA is unset" in hooks_log(env)


def test_an_unwritable_data_dir_is_reported_not_installed_into(
    plugin: Path, env: dict[str, str], tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a data dir below a regular file can never be created

    result = run_hook(plugin, "SessionStart", {**env, "CLAUDE_PLUGIN_DATA": str(blocker / "data")})

    assert result.returncode == 0
    assert b"cannot install itself" in result.stdout
    assert "cannot write to CLAUDE_PLUGIN_DATA" in hooks_log(env)


def test_a_closed_stdin_still_runs_the_hook_and_exits_0(
    plugin: Path, out: Path, env: dict[str, str]
) -> None:
    python = write_script(out.parent / "bin" / "python", RECORDER.format(out=out))
    result = subprocess.run(
        ["/bin/sh", "-c", '"$0" Stop <&-', str(plugin / "hooks" / "run")],
        capture_output=True,
        env={**env, "MEMORY_LAYER_PYTHON": str(python)},
    )

    assert result.returncode == 0
    assert (out / "argv").read_text().split() == ["-m", "memory_layer.hooks", "Stop"]
    assert (out / "stdin").read_bytes() == b""
