"""config.yaml: defaults, loading and dotted-key editing.

The file holds only what the user changed; everything else comes from ``DEFAULTS``.
Every value is validated against the type (and range) of its default
(``config.validation``), so a typo or an empty value is reported with the key and
how to fix it instead of surfacing later as a crash in a hook.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping

from memory_layer.errors import ConfigError
from memory_layer.paths import config_path, run_dir

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memory_layer.config.validation import CHOICES as CHOICES
    from memory_layer.config.validation import KIND_NAMES as KIND_NAMES
    from memory_layer.config.validation import RANGES as RANGES
    from memory_layer.config.validation import coerce as coerce
    from memory_layer.config.validation import unknown_key as unknown_key
    from memory_layer.config.validation import validate_tree as validate_tree
    from memory_layer.config.validation import value_range as value_range

# yaml is imported only when config.yaml changed since it was last parsed: importing
# it and compiling its regexes cost a hook ~20 ms. The parsed, validated overrides
# are kept in run/config-cache.json together with the exact text they came from.
CACHE_NAME = "config-cache.json"

DEFAULTS: dict[str, Any] = {
    "weights": {
        "similarity": 0.35,
        "outcome": 0.25,
        "recency": 0.15,
        "frequency": 0.15,
        "confidence": 0.10,
    },
    # Applied only when the query's intent matches the category (see retrieval/intent.py).
    "boosts": {
        "troubleshooting": 1.5,
        "gotcha": 1.4,
        "decision": 1.4,
        "pattern": 1.3,
        "convention": 1.3,
        "architecture": 1.2,
        "command": 1.2,
        "workaround": 1.1,
        "preference": 1.0,
    },
    "recency": {"half_life_days": 30.0},
    # frequency = log(1 + uses) / log(1 + saturation_uses), capped at 1.
    "frequency": {"saturation_uses": 20},
    "retrieval": {
        # Scale of keyword evidence inside the noisy-OR similarity (scoring.fuse); 0 = vectors only.
        "keyword_weight": 1.0,
        # Scale of vector evidence inside the same noisy-OR; 0 = keywords only.
        "vector_weight": 1.0,
        "candidates": 50,
        # Results with less similarity than this are dropped: no evidence, no result.
        "min_similarity": 0.02,
        # Results with less than this share of the best result's similarity rank after the rest.
        "relative_floor": 0.3,
        # Relevance first: results within this much similarity of the best remaining one
        # form a band, ordered by the full blend (priors, boosts); bands rank in order of
        # similarity (scoring.rank_in_bands). 1 or more: the plain blend order.
        "relevance_band": 0.1,
        # Query words found in more than this share of the searched memories are left out
        # of the query's embedding (they still count for keywords); 1 keeps every word.
        "vector_common_share": 0.2,
        # A turn of a conversation (a memory with a thread) whose predecessor matches the
        # query gets this share of the predecessor's similarity when that is more than
        # its own: the reply to the question a query repeats (retrieval/threads.py,
        # chosen on LoCoMo conversations 0-4 from 0.5-0.9, benchmarks/RESULTS.md). 0: off.
        "thread_share": 0.8,
        "default_limit": 8,
        # "Nothing matches": recall returns nothing when the verifier gives the store less
        # than this probability of answering the query (retrieval/answerable.py, measured
        # in benchmarks/RESULTS.md). 0 always answers.
        "min_answer": 0.1,
    },
    "embedding": {
        "enabled": True,
        # minilm (English, all-MiniLM-L6-v2 int8), multilingual (Chinese <-> English:
        # USE + multilingual-e5 + MiniLM on a gloss, the `multilingual` extra) or
        # use-multilingual (16 languages); all ship in PyPI packages (embedders.py).
        # After a change, `memory-layer index --force` re-embeds the stored memories.
        "model": "minilm",
        # Empty: the selected model's files from its PyPI package. Set only for a
        # fastembed model named by its id (e.g. BAAI/bge-small-en-v1.5).
        "model_path": "",
        "threads": 2,
    },
    # Claude Code hooks (memory_layer/hooks/, docs/hooks.md).
    "hooks": {
        "enabled": True,
        # Per-prompt injection (UserPromptSubmit): at most this many memories, each above
        # the relevance floor. The floor was measured on realistic prompts (docs/hooks.md).
        "inject_limit": 5,
        "min_cosine": 0.4,  # with embeddings: the memory's cosine to the prompt
        "min_keyword": 0.25,  # keyword-only: BM25 relative to the best hit x term coverage
        "min_terms": 2,  # keyword-only: distinct prompt words found in the memory
        "min_score": 0.3,  # and the blended score
        # The verifier's probability that the store answers the prompt at all, stricter
        # than retrieval.min_answer: the hook speaks unasked (retrieval/answerable.py).
        "min_answer": 0.6,
        "max_prompt_chars": 2000,  # the prompt's head is the query; the rest adds noise
        # SessionStart block: memories worth knowing without a query.
        "session_start_tokens": 1200,  # budget, estimated at 4 characters per token
        "session_start_limit": 20,
        # The bar a memory clears before SessionStart shows it (api/session_start.py):
        # an automatic capture nobody vouched for, never reinforced nor credited, needs
        # this confidence and this quality (the blend without similarity).
        "session_start_min_confidence": 0.7,
        "session_start_min_quality": 0.4,
        "item_chars": 400,  # longer memories are cut in injected blocks
        # Capture from tool events and transcripts.
        "capture": True,
        "min_capture_confidence": 0.5,
        # The learned capture classifier (capture/learned.py) where a transcript is read
        # with the engine's model: off by default. On real transcripts it moved precision
        # and recall within noise (all 38: 0.603/0.171 -> 0.636/0.183; the held-out ones
        # 0.385 -> 0.312 and 0.286 -> 0.400 at the same recall) for +3.1 s of engine CPU
        # per Stop at p50 on this 2-core machine: not worth it for every user yet.
        "capture_classifier": False,
        "transcript_max_bytes": 8388608,  # per hook run; the rest is read next time
        # The same, when a hook does the work in its own process (no engine): Claude Code
        # waits for Stop, and 8 MB of transcript took ~8 s there.
        "in_process_transcript_max_bytes": 1048576,
        # Projects (ids from `memory-layer project`, or directories; fnmatch patterns) where
        # hooks do nothing. A .memory-layer-ignore file at the repository root does the same.
        "ignore_projects": [],
        # Optional LLM extraction (docs/hooks.md): off unless turned on. When a session
        # ends, the engine sends its new transcript prose (cleaned) to `claude -p` once,
        # at most max_calls_per_day times a day; every call and its cost is logged.
        "llm": {
            "enabled": False,
            "command": "claude",
            "model": "claude-haiku-4-5",
            "max_calls_per_day": 20,
            "max_input_chars": 12000,
            "min_input_chars": 400,
            "timeout_s": 120,
        },
        # SessionStart ordering: category weight x quality (outcome, recency, frequency,
        # confidence).
        "category_weights": {
            "gotcha": 1.3,
            "convention": 1.25,
            "command": 1.2,
            "decision": 1.15,
            "troubleshooting": 1.1,
            "preference": 1.1,
            "tool_preference": 1.1,
            "coding_style": 1.1,
            "architecture": 1.05,
            "pattern": 1.05,
            "workaround": 1.0,
            "dependency": 1.0,
            "environment": 1.0,
            "context": 0.9,
            "general": 0.9,
            "todo": 0.7,
        },
    },
    # The warm per-user engine (memory_layer/engine/): model, vectors and DB in one process.
    "engine": {
        "enabled": True,
        "idle_timeout_s": 900,
        # How long a UserPromptSubmit/SessionStart hook waits for the engine before it
        # answers keyword-only in its own process.
        "prompt_deadline_ms": 150,
        # How long capture hooks wait for the engine to accept their event.
        "deadline_ms": 300,
        # ONNX threads for the engine's model (0: embedding.threads). One prompt is a
        # single short text: one thread embedded it in 9 ms where two took 21 ms on a
        # busy 2-CPU machine (thread hand-offs cost more than they save).
        "embed_threads": 1,
    },
    "remember": {
        "max_chars": 10000,
        # Cosine (or identical normalised text) at which a new memory reinforces an old one.
        "duplicate_threshold": 0.93,
        "default_confidence": 0.8,
    },
    # Outcome learning (memory_layer/outcomes/, docs/outcomes.md).
    "outcomes": {
        # Added to outcome_score per credited task: weight × delta, clamped to -1..1.
        "success_delta": 0.2,
        "failure_delta": -0.3,
        # At or below this score a memory is withheld from automatic injection.
        "floor": -0.5,
        # Credit weight of a memory that was surfaced but not acted on (evidence exists
        # for the session and none of it points at the memory).
        "shown_weight": 0.0,
        # Credit weight when the session left no tool or assistant events to judge by.
        "unobserved_weight": 0.5,
        # Proven: at least this many successes, this score, and twice as many
        # successes as failures.
        "proven_min_successes": 2,
        "proven_min_score": 0.3,
        # Seconds before a task opened that still count as its opening turn, when no
        # prompt event says when the turn began.
        "lead_seconds": 300,
        # Hours of work assumed before a Beads close whose start is unknown.
        "fallback_window_hours": 8.0,
        # Where Claude Code keeps task lists (~/.claude/tasks/<list>/<id>.json).
        "tasks_dir": "~/.claude/tasks",
        # Exploration (benchmarks/learning.py): among memories of comparable relevance,
        # a rarely tried one that is not failing goes first when its optimistic success
        # rate, (w+1)/(n+2) + explore × sqrt(ln(1 + tries of the band) / (1 + n)),
        # beats the leader's (w+1)/(n+2). 0 = off.
        "explore": 0.2,
        # Probation: a sinking memory is shown again (marked) when no memory that is not
        # sinking answers as well, unless its record is conclusive or a person failed it.
        "probation": True,
    },
    # Review gate, checksums and conflicts (memory_layer/trust/, docs/sharing.md).
    "trust": {
        # Sources (or source prefixes before ':') whose writes are active at once.
        "trusted_sources": ["user", "cli", "slash", "import"],
        # Hook extractions come from the user's own session: active by default (see
        # docs/sharing.md); set to "pending" to review every captured memory first.
        "hook_writes": "active",
        # Captured words that came from tool output, a file or page the agent read, or
        # the assistant relaying one (memories.origin): held for a person by default.
        "external_writes": "pending",
        # Any other source (mcp:* always) goes to the review inbox as pending.
        "other_writes": "pending",
        # Records past their review-by date: "withhold" from agents or "flag" them.
        "overdue": "withhold",
        # Conflicting values of one fact: "show" each candidate with its source, or "hide".
        "conflicts": "show",
        # Proposals one client (mcp:<name>) may leave waiting for review; agents together
        # may leave 500 (trust/limits.py).
        "max_open_proposals": 50,
        # Days from approval to the review-by date, per category (0 = never due).
        "review_days": {
            "troubleshooting": 180,
            "gotcha": 180,
            "decision": 365,
            "pattern": 365,
            "convention": 365,
            "architecture": 365,
            "command": 180,
            "workaround": 90,
            "preference": 365,
            "dependency": 90,
            "environment": 90,
            "coding_style": 365,
            "tool_preference": 365,
            "context": 90,
            "todo": 30,
            "general": 180,
        },
    },
}


def _lookup(tree: Mapping[str, Any], key: str) -> Any:
    node: Any = tree
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(key)
        node = node[part]
    return node


def all_keys(tree: Mapping[str, Any] = DEFAULTS, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for name, value in tree.items():
        full = f"{prefix}{name}"
        if isinstance(value, Mapping):
            keys.extend(all_keys(value, full + "."))
        else:
            keys.append(full)
    return keys


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in over.items():
        if isinstance(value, Mapping) and isinstance(base.get(name), dict):
            _merge(base[name], value)
        else:
            base[name] = value
    return base


def _cache_key(text: str) -> dict[str, str]:
    # The defaults are part of the key: validation (types, known keys) depends on them,
    # so a new version of memory-layer never trusts values checked by an older one.
    return {"text": text, "defaults": repr(DEFAULTS)}


def _cached_overrides(text: str) -> dict[str, Any] | None:
    from memory_layer.engine.guard import is_own_file

    path = run_dir() / CACHE_NAME
    if not is_own_file(str(path)):
        return None  # absent, or planted by someone else: parse config.yaml itself
    try:
        with open(path, encoding="utf-8") as f:
            cached = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("key") != _cache_key(text):
        return None
    values = cached.get("values")
    return values if isinstance(values, dict) else None


def _store_overrides(text: str, values: dict[str, Any]) -> None:
    """Best effort: a cache that cannot be written only costs the next process a parse."""
    try:
        path = run_dir() / CACHE_NAME
        tmp = path.with_name(f"{CACHE_NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": _cache_key(text), "values": values}), encoding="utf-8")
        tmp.replace(path)  # atomic: readers see the old cache or the new one
    except (OSError, TypeError, ValueError):
        pass


def read_user_config() -> dict[str, Any]:
    """The user's overrides only, validated."""
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}). Fix or delete it.") from None
    cached = _cached_overrides(text)
    if cached is not None:
        return cached
    import yaml

    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML ({exc}). Fix or delete it.") from None
    from memory_layer.config.validation import validate_tree

    values = {} if raw is None else validate_tree(raw)
    _store_overrides(text, values)
    return values


_cache: dict[str, Any] = {}


def load_config() -> dict[str, Any]:
    """Defaults merged with config.yaml. Cached per process, invalidated by mtime."""
    path = config_path()
    stamp = (str(path), path.stat().st_mtime_ns if path.exists() else None)
    if _cache.get("stamp") == stamp:
        return _cache["config"]
    config = _merge(copy.deepcopy(DEFAULTS), read_user_config())
    _cache.update(stamp=stamp, config=config)
    return config


def get_value(key: str, config: Mapping[str, Any] | None = None) -> Any:
    try:
        return _lookup(config or load_config(), key)
    except KeyError:
        from memory_layer.config.validation import unknown_key

        raise unknown_key(key) from None


def _write(tree: Mapping[str, Any]) -> None:
    import yaml

    path = config_path()
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(dict(tree), sort_keys=True), encoding="utf-8")
    tmp.replace(path)  # atomic: a crash never leaves half a config
    _cache.clear()


def set_value(key: str, value: Any) -> Any:
    from memory_layer.config.validation import coerce

    typed = coerce(key, value)
    tree = read_user_config()
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = typed
    _write(tree)
    return typed


def unset_value(key: str) -> None:
    get_value(key, DEFAULTS)  # raises on an unknown key
    tree = read_user_config()
    node: Any = tree
    parts = key.split(".")
    for part in parts[:-1]:
        node = node.get(part, {})
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    _write(tree)


# Validation's names, for callers that import them from here. Looked up on first use
# (PEP 562): a hook whose config.yaml is unchanged reads the validated values from
# run/config-cache.json and never loads the validation code.
_VALIDATION = frozenset(
    {"CHOICES", "KIND_NAMES", "RANGES", "coerce", "unknown_key", "validate_tree", "value_range"}
)


def __getattr__(name: str) -> object:
    if name in _VALIDATION:
        from memory_layer.config import validation

        return getattr(validation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
