"""hooks/bootstrap, with a fake base interpreter (MEMORY_LAYER_BOOTSTRAP_PYTHON).

The fake `python -m venv` makes a venv whose `python -m pip install` records its
arguments and succeeds or fails on demand, so the install logic (lock, marker,
swap, failure marker) is tested in milliseconds. A real install is slow and
needs the network; it is done by hand (docs/plugin.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# `-c` answers the version check; `-m venv DIR` creates DIR/bin/python, itself a
# fake that records `-m pip install ...` and answers `-c 'import memory_layer'`.
FAKE_BASE_PYTHON = """#!/bin/sh
case "$1" in
    -c) exit "${{FAKE_TOO_OLD:-0}}" ;;
esac
[ "$1 $2" = "-m venv" ] || exit 2
echo venv >> "{out}/calls"
mkdir -p "$3/bin"
cat > "$3/bin/python" <<'EOF'
#!/bin/sh
if [ "$1 $2 $3" = "-m pip install" ]; then
    shift 3
    printf '%s\\n' "$@" > "{out}/pip-args"
    for last in "$@"; do :; done
    [ -f "$last/pyproject.toml" ] && echo staged > "{out}/pip-saw-pyproject"
    exit "${{FAKE_PIP_EXIT:-0}}"
fi
[ "$1" = "-c" ] && exit 0
echo "$@" >> "{out}/venv-calls"
exit 0
EOF
chmod +x "$3/bin/python"
"""


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "plugin"
    for relative in ("hooks", "bin", ".claude-plugin"):
        shutil.copytree(REPO / relative, root / relative)
    shutil.copy2(REPO / "pyproject.toml", root / "pyproject.toml")
    (root / "memory_layer").mkdir()
    (root / "memory_layer" / "__init__.py").write_text("")
    return root


@pytest.fixture
def out(tmp_path: Path) -> Path:
    path = tmp_path / "out"
    path.mkdir()
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "plugin-data"


@pytest.fixture
def env(tmp_path: Path, out: Path, data: Path, user_home: Path) -> dict[str, str]:
    base = tmp_path / "base-python"
    base.write_text(FAKE_BASE_PYTHON.format(out=out))
    base.chmod(0o755)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_LAYER_", "CLAUDE_"))}
    return {
        **clean,
        "HOME": str(tmp_path / "home"),
        "MEMORY_LAYER_HOME": str(user_home),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "CLAUDE_PLUGIN_DATA": str(data),
        "MEMORY_LAYER_BOOTSTRAP_PYTHON": str(base),
    }


def bootstrap(plugin: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(plugin / "hooks" / "bootstrap")], capture_output=True, text=True, env=env, timeout=60
    )


def plugin_key(root: Path) -> str:
    """The install key (venv-<key>), computed independently of hooks/lib.sh."""
    data = (root / "pyproject.toml").read_bytes() + (
        root / ".claude-plugin" / "plugin.json"
    ).read_bytes()
    crc, size = subprocess.run(
        ["cksum"], input=data, capture_output=True, check=True
    ).stdout.split()
    return f"{crc.decode()}-{size.decode()}"


def installed(data: Path, plugin: Path) -> Path:
    return data / f"venv-{plugin_key(plugin)}"


def old_install(data: Path, key: str, days_unused: float) -> Path:
    venv = data / f"venv-{key}"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("#!/bin/sh\n")
    (venv / "bin" / "python").chmod(0o755)
    (venv / ".memory-layer-key").write_text(key + "\n")
    used = venv / ".last-used"
    used.write_text("")
    stamp = time.time() - days_unused * 86400
    os.utime(used, (stamp, stamp))
    return venv


def leftovers(data: Path) -> list[str]:
    return sorted(
        p.name for p in data.iterdir() if p.name.startswith(("venv.", "src.", "bootstrap.lock"))
    )


def test_installs_into_the_data_dir_and_writes_the_marker(
    plugin: Path, env: dict[str, str], data: Path, out: Path
) -> None:
    result = bootstrap(plugin, {**env, "MEMORY_LAYER_PIP_ARGS": "--index-url http://mirror/simple"})

    assert result.returncode == 0, result.stdout + result.stderr
    venv = installed(data, plugin)
    assert os.access(venv / "bin" / "python", os.X_OK)
    assert (venv / ".memory-layer-key").read_text().strip() == plugin_key(plugin)
    assert (venv / ".last-used").exists()
    pip_args = (out / "pip-args").read_text().split("\n")[:-1]
    assert pip_args[:4] == [
        "--disable-pip-version-check",
        "--no-input",
        "--index-url",
        "http://mirror/simple",
    ]
    # pip builds a staged copy of the plugin, never the plugin directory itself.
    assert pip_args[-1] != str(plugin) and (out / "pip-saw-pyproject").exists()
    assert leftovers(data) == []
    assert not (data / "bootstrap.failed").exists()
    assert "done in" in result.stdout
    assert not (out / "venv-calls").exists()  # a first install has no engine to stop


def test_the_installed_venv_is_what_the_launcher_then_runs(
    plugin: Path, env: dict[str, str], data: Path, out: Path
) -> None:
    assert bootstrap(plugin, env).returncode == 0
    # Swap the fake venv python for a recorder to see the launcher pick it.
    python = installed(data, plugin) / "bin" / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{out}/hook-argv"\n')

    result = subprocess.run(
        [str(plugin / "hooks" / "run"), "SessionEnd"], input=b"{}", capture_output=True, env=env
    )

    assert result.returncode == 0
    assert (out / "hook-argv").read_text().split() == ["-m", "memory_layer.hooks", "SessionEnd"]


def test_a_failed_pip_install_leaves_no_marker_and_releases_the_lock(
    plugin: Path, env: dict[str, str], data: Path
) -> None:
    result = bootstrap(plugin, {**env, "FAKE_PIP_EXIT": "1"})

    assert result.returncode == 1
    assert not list(data.glob("venv-*"))
    assert (data / "bootstrap.failed").exists()
    assert leftovers(data) == []
    assert "FAILED: pip install failed" in result.stdout


def test_a_plugin_update_installs_beside_the_previous_version(
    plugin: Path, env: dict[str, str], data: Path, out: Path
) -> None:
    previous = old_install(data, "1111-2222", days_unused=1)

    result = bootstrap(plugin, env)

    assert result.returncode == 0, result.stdout
    assert (installed(data, plugin) / ".memory-layer-key").read_text().strip() == plugin_key(plugin)
    # A session still on the previous version keeps its install.
    assert (previous / "bin" / "python").exists()
    assert leftovers(data) == []
    # The warm engine may run the previous version's code: stopped, to restart from ours.
    assert (out / "venv-calls").read_text() == "-m memory_layer engine stop\n"


def test_installs_unused_for_more_than_a_week_are_removed(
    plugin: Path, env: dict[str, str], data: Path
) -> None:
    recent = old_install(data, "1111-2222", days_unused=6)
    forgotten = old_install(data, "3333-4444", days_unused=9)

    result = bootstrap(plugin, env)

    assert result.returncode == 0, result.stdout
    assert recent.exists()
    assert not forgotten.exists()
    assert f"removed {forgotten}" in result.stdout


def test_an_up_to_date_venv_is_left_alone(
    plugin: Path, env: dict[str, str], data: Path, out: Path
) -> None:
    assert bootstrap(plugin, env).returncode == 0
    (out / "calls").unlink()

    result = bootstrap(plugin, env)

    assert result.returncode == 0
    assert "is already installed" in result.stdout
    assert not (out / "calls").exists()


def test_a_live_lock_makes_a_second_install_step_aside(
    plugin: Path, env: dict[str, str], data: Path, out: Path
) -> None:
    lock = data / "bootstrap.lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text(f"{os.getpid()}\n")  # this test process: certainly alive

    result = bootstrap(plugin, env)

    assert result.returncode == 0
    assert "another install" in result.stdout
    assert not (out / "calls").exists()
    assert (lock / "pid").read_text().strip() == str(os.getpid())


def test_a_stale_lock_is_recovered(plugin: Path, env: dict[str, str], data: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    lock = data / "bootstrap.lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text(f"{dead.pid}\n")

    result = bootstrap(plugin, env)

    assert result.returncode == 0, result.stdout
    assert f"removed a stale lock (owner pid {dead.pid} is gone)" in result.stdout
    assert (installed(data, plugin) / ".memory-layer-key").exists()
    assert leftovers(data) == []


def test_a_lock_older_than_the_limit_is_stale_even_if_its_pid_is_reused(
    plugin: Path, env: dict[str, str], data: Path
) -> None:
    lock = data / "bootstrap.lock"
    lock.mkdir(parents=True)
    (lock / "pid").write_text(f"{os.getpid()}\n")
    os.utime(lock, (1_000_000_000, 1_000_000_000))  # 2001

    result = bootstrap(plugin, env)

    assert result.returncode == 0, result.stdout
    assert "older than 60 minutes" in result.stdout


def test_a_too_old_base_python_is_refused(plugin: Path, env: dict[str, str], data: Path) -> None:
    result = bootstrap(plugin, {**env, "FAKE_TOO_OLD": "1"})

    assert result.returncode == 1
    assert "is not a Python 3.11 or newer" in result.stdout
    assert not list(data.glob("venv-*"))


def test_without_a_data_dir_it_says_what_is_missing(plugin: Path, env: dict[str, str]) -> None:
    env = {k: v for k, v in env.items() if k != "CLAUDE_PLUGIN_DATA"}

    result = bootstrap(plugin, env)

    assert result.returncode == 1
    assert "CLAUDE_PLUGIN_DATA is not set" in result.stderr


def test_leftovers_of_a_killed_install_are_removed(
    plugin: Path, env: dict[str, str], data: Path
) -> None:
    for name in ("venv.new.4242", "src.4242"):
        (data / name / "bin").mkdir(parents=True)

    result = bootstrap(plugin, env)

    assert result.returncode == 0, result.stdout
    assert leftovers(data) == []
