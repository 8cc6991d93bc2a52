# Shared by hooks/run, hooks/bootstrap and bin/memory-layer (sourced, never executed).
# shellcheck shell=sh disable=SC2034  # ML_* are read by the scripts that source this.
#
# It answers one question the same way for all three: which interpreter has
# memory_layer installed for this copy of the plugin. POSIX sh only, because
# hooks run under whatever /bin/sh the machine has (dash, bash, busybox ash).
#
# Installs live in the plugin data directory, one venv per install key:
#   ${CLAUDE_PLUGIN_DATA}/venv-<key>/bin/python
# One per key, not a single venv rebuilt on every update, because Claude Code
# keeps running sessions on the previous plugin version (for up to 7 days);
# with a single venv two sessions on different versions would rebuild it back
# and forth, and a long-running MCP server would see its files replaced.

ML_KEY_FILE=.memory-layer-key
ML_USED_FILE=.last-used

# The install key: a checksum of the files that decide what gets installed.
# pyproject.toml carries the dependencies, plugin.json the version, so a plugin
# update gets a new key and a new venv. cksum is POSIX, unlike sha256sum.
ml_key() {
    _ml_sum=$(cat "$1/pyproject.toml" "$1/.claude-plugin/plugin.json" 2>/dev/null | cksum)
    printf '%s-%s\n' "${_ml_sum%% *}" "${_ml_sum##* }"
}

ml_log_file() {
    printf '%s\n' "${MEMORY_LAYER_HOME:-$HOME/.memory-layer}/logs/hooks.log"
}

# Append one line to hooks.log. Logging must never break a hook, so every
# failure here is swallowed.
ml_log() {
    _ml_log=$(ml_log_file)
    [ -d "${_ml_log%/*}" ] || (umask 077 && mkdir -p "${_ml_log%/*}") 2>/dev/null
    printf '%s launcher[%s] %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$$" "$*" \
        >>"$_ml_log" 2>/dev/null || :
}

# True when VENV is a finished install: the marker is written only after pip
# succeeded, and the directory only gets its venv-<key> name after that.
ml_venv_done() {
    [ -x "$1/bin/python" ] && [ -f "$1/$ML_KEY_FILE" ]
}

# True when DATA holds the finished install for KEY.
ml_venv_ok() {
    ml_venv_done "$1/venv-$2" || return 1
    _ml_have=
    IFS= read -r _ml_have <"$1/venv-$2/$ML_KEY_FILE" || [ -n "$_ml_have" ] || return 1
    [ "$_ml_have" = "$2" ]
}

# The plugin data directories to look in. Hooks and the MCP server get
# CLAUDE_PLUGIN_DATA from Claude Code; the Bash tool does not, so the
# SessionStart launcher exports MEMORY_LAYER_PLUGIN_DATA through CLAUDE_ENV_FILE,
# and as a last resort every data directory this plugin can have is tried (one
# per marketplace name, e.g. memory-layer-memory-layer). The key check keeps a
# foreign or outdated venv from being picked.
ml_data_dirs() {
    [ -n "${CLAUDE_PLUGIN_DATA:-}" ] && printf '%s\n' "$CLAUDE_PLUGIN_DATA"
    [ -n "${MEMORY_LAYER_PLUGIN_DATA:-}" ] && printf '%s\n' "$MEMORY_LAYER_PLUGIN_DATA"
    for _ml_dir in "${CLAUDE_CONFIG_DIR:-$HOME/.claude}"/plugins/data/memory-layer-*; do
        [ -d "$_ml_dir" ] && printf '%s\n' "$_ml_dir"
    done
    return 0
}

# The most recently used finished venv in DATA, whatever its key (empty if none).
# -nt is not in POSIX but dash, bash, ash and zsh have it.
# shellcheck disable=SC3013
ml_newest_venv() {
    _ml_best=
    for _ml_venv in "$1"/venv-*; do
        ml_venv_done "$_ml_venv" || continue
        if [ -z "$_ml_best" ] || [ "$_ml_venv/$ML_USED_FILE" -nt "$_ml_best/$ML_USED_FILE" ]; then
            _ml_best=$_ml_venv
        fi
    done
    printf '%s\n' "$_ml_best"
}

# A `memory-layer` on PATH that is not this plugin's own bin/memory-layer.
# MEMORY_LAYER_VIA_PLUGIN is set before exec'ing one, so a second copy of this
# plugin (another version, another scope) found on PATH cannot loop back here.
ml_path_cli() {
    [ -z "${MEMORY_LAYER_VIA_PLUGIN:-}" ] || return 1
    _ml_ifs=$IFS
    IFS=:
    for _ml_dir in $PATH; do
        IFS=$_ml_ifs
        _ml_cand=${_ml_dir:-.}/memory-layer
        # -ef is not in POSIX but dash, bash, ash and zsh have it; where it is
        # missing the MEMORY_LAYER_VIA_PLUGIN guard still stops the loop.
        # shellcheck disable=SC3013
        if [ -f "$_ml_cand" ] && [ -x "$_ml_cand" ] && ! [ "$_ml_cand" -ef "$1/bin/memory-layer" ]; then
            printf '%s\n' "$_ml_cand"
            return 0
        fi
    done
    IFS=$_ml_ifs
    return 1
}

# Resolve, in order: $MEMORY_LAYER_PYTHON; the venv for this plugin's key in a
# plugin data directory; a `memory-layer` already on PATH; last, a venv built
# for another plugin version (the caller starts the install of ours, and the
# other one keeps memory working meanwhile instead of going dark for the
# minute or two an install takes).
# Sets ML_PYTHON or ML_CLI (exactly one) and returns 0. ML_VENV is the venv
# directory used (empty for MEMORY_LAYER_PYTHON or a CLI); ML_STALE is the data
# directory still missing our install, or empty. Returns 1 with ML_ERROR set
# when MEMORY_LAYER_PYTHON is set but unusable, empty when nothing is installed.
ml_resolve() {
    ML_PYTHON=
    ML_CLI=
    ML_ERROR=
    ML_STALE=
    ML_VENV=
    if [ -n "${MEMORY_LAYER_PYTHON:-}" ]; then
        if [ -x "$MEMORY_LAYER_PYTHON" ] && [ -f "$MEMORY_LAYER_PYTHON" ]; then
            ML_PYTHON=$MEMORY_LAYER_PYTHON
            return 0
        fi
        ML_ERROR="MEMORY_LAYER_PYTHON=$MEMORY_LAYER_PYTHON is not an executable file; point it at the python of an environment where memory-layer is installed, or unset it"
        return 1
    fi
    _ml_key=$(ml_key "$1")
    _ml_dirs=$(ml_data_dirs)
    _ml_other=
    _ml_other_data=
    _ml_ifs=$IFS
    IFS='
'
    for _ml_data in $_ml_dirs; do
        if ml_venv_ok "$_ml_data" "$_ml_key"; then
            IFS=$_ml_ifs
            ML_VENV=$_ml_data/venv-$_ml_key
            ML_PYTHON=$ML_VENV/bin/python
            return 0
        fi
        if [ -z "$_ml_other" ]; then
            _ml_other=$(ml_newest_venv "$_ml_data")
            _ml_other_data=$_ml_data
        fi
    done
    IFS=$_ml_ifs
    if ML_CLI=$(ml_path_cli "$1"); then
        return 0
    fi
    ML_CLI=
    if [ -n "$_ml_other" ]; then
        ML_VENV=$_ml_other
        ML_PYTHON=$_ml_other/bin/python
        ML_STALE=$_ml_other_data
        return 0
    fi
    return 1
}
