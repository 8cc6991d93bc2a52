"""One line about every setting, for the dashboard's Settings page.

``DEFAULTS`` in memory_layer/config says what each value is; this says what it does, in the
words a person changing it needs. Keys of the per-category groups share one line with
the category filled in. tests/test_settings_help.py fails when a setting has no line.
"""

from __future__ import annotations

# Keys of a group: "{name}" is the last part of the key (a category, a signal).
GROUPS: dict[str, str] = {
    "weights.": "Share of {name} in the ranking blend of recall, the hooks and MCP search.",
    "boosts.": (
        "Multiplies the score of a {name} memory when the query's intent is {name} "
        "(1.0 = no boost)."
    ),
    "hooks.category_weights.": (
        "How strongly {name} memories are preferred for the session-start block "
        "(1.0 = neutral)."
    ),
    "trust.review_days.": (
        "Days from approval until a {name} memory is due for review again (0 = never due)."
    ),
}

LINES: dict[str, str] = {
    "recency.half_life_days": "Days after which the recency signal of an unused memory halves.",
    "frequency.saturation_uses": "Uses at which the frequency signal reaches its maximum.",
    "retrieval.keyword_weight": "Weight of keyword (full-text) evidence in similarity; 0 = vectors only.",
    "retrieval.vector_weight": "Weight of embedding (vector) evidence in similarity; 0 = keywords only.",
    "retrieval.candidates": "How many keyword and vector candidates each search scores.",
    "retrieval.min_similarity": "Results with less similarity than this are dropped.",
    "retrieval.relative_floor": (
        "Results under this share of the best match's similarity are listed after the "
        "closer matches, whatever their score."
    ),
    "retrieval.relevance_band": (
        "Matches within this much similarity of each other are ordered by score; "
        "1 or more: plain score order."
    ),
    "retrieval.vector_common_share": (
        "Query words found in more than this share of memories are left out of the "
        "embedded query (keywords still use them)."
    ),
    "retrieval.thread_share": (
        "A turn of a conversation gets this share of the similarity of the turn before "
        "it, when that is more than its own (the reply to a matching question); 0 = off."
    ),
    "retrieval.default_limit": "How many results recall returns when no limit is given.",
    "embedding.enabled": "Use the embedding model; off: keyword-only search everywhere.",
    "embedding.model": (
        "minilm (English), multilingual (Chinese <-> English, the best measured; the "
        "multilingual extra) or use-multilingual (16 languages, pure numpy); "
        "run `memory-layer index --force` after a change."
    ),
    "embedding.model_path": "A fastembed model id to use instead of the selected model's packaged files.",
    "embedding.threads": (
        "CPU threads the embedding model may use in a CLI or dashboard process "
        "(multilingual and use-multilingual: one per model, always)."
    ),
    "hooks.enabled": "Claude Code hooks do their work; off: every hook returns at once.",
    "hooks.inject_limit": "At most this many memories are added to each prompt; 0 turns it off.",
    "hooks.min_cosine": "With embeddings: the least cosine to the prompt a memory needs to be injected.",
    "hooks.min_keyword": "Keyword-only: the least keyword evidence a memory needs to be injected.",
    "hooks.min_terms": "Keyword-only: distinct prompt words a memory must contain to be injected.",
    "hooks.min_score": "The least blended score a memory needs to be injected into a prompt.",
    "hooks.min_answer": (
        "How sure the nothing-matches verifier must be that the store answers a prompt before "
        "the hook injects anything (stricter than retrieval.min_answer)."
    ),
    "retrieval.min_answer": (
        "Below this value of the nothing-matches verifier (read on the evidence, not the "
        "score), recall and MCP search return nothing; 0 always answers."
    ),
    "hooks.max_prompt_chars": "Only the prompt's first this-many characters are the query.",
    "hooks.session_start_tokens": "Token budget of the session-start block (4 characters a token).",
    "hooks.session_start_limit": "At most this many memories in the session-start block.",
    "hooks.session_start_min_confidence": (
        "Confidence an automatic capture nobody vouched for needs to be shown at session start."
    ),
    "hooks.session_start_min_quality": (
        "Quality (the blend without similarity) such a capture needs to be shown at session start."
    ),
    "hooks.item_chars": "Longer memories are cut to this many characters when injected.",
    "hooks.capture": "Learn from tool results, failures and transcripts without being asked.",
    "hooks.min_capture_confidence": "Captured candidates below this confidence are not stored.",
    "hooks.capture_classifier": (
        "Let the learned classifier judge transcript captures with the engine's model "
        "(costs seconds of CPU per Stop; off by default)."
    ),
    "hooks.transcript_max_bytes": "Bytes of transcript the engine reads per hook; the rest waits.",
    "hooks.in_process_transcript_max_bytes": (
        "The same, when a hook reads the transcript in its own process (no engine)."
    ),
    "hooks.ignore_projects": (
        "Projects (ids, directories or patterns, comma-separated) where the hooks do nothing."
    ),
    "hooks.llm.enabled": "At session end, send the new transcript prose to `claude -p` to extract memories.",
    "hooks.llm.command": "The command run for LLM extraction.",
    "hooks.llm.model": "The model LLM extraction asks for.",
    "hooks.llm.max_calls_per_day": "At most this many LLM extraction calls a day.",
    "hooks.llm.max_input_chars": "At most this many characters of prose per LLM call.",
    "hooks.llm.min_input_chars": "Sessions with less new prose than this are not sent.",
    "hooks.llm.timeout_s": "Seconds an LLM extraction call may take before it is stopped.",
    "engine.enabled": "Hooks and the CLI use the warm background engine (model loaded once).",
    "engine.idle_timeout_s": "The engine stops after this many seconds without a request.",
    "engine.prompt_deadline_ms": (
        "How long a prompt hook waits for the engine before answering keyword-only itself."
    ),
    "engine.deadline_ms": "How long a capture hook waits for the engine to accept its event.",
    "engine.embed_threads": "CPU threads of the engine's model (0: embedding.threads).",
    "remember.max_chars": "Longest memory text accepted, in characters.",
    "remember.duplicate_threshold": (
        "Cosine at which a new memory reinforces an existing one instead of being added."
    ),
    "remember.default_confidence": "Confidence of a memory written without one.",
    "outcomes.success_delta": "Added to a credited memory's outcome score when its task succeeds.",
    "outcomes.failure_delta": "Added (negative) to a credited memory's outcome score when its task fails.",
    "outcomes.floor": "At or below this outcome score a memory is withheld from injection (sinking).",
    "outcomes.shown_weight": "Credit weight of a memory that was shown but not acted on.",
    "outcomes.unobserved_weight": (
        "Credit weight when the session that was shown the memory closed the task and left "
        "no events to judge by."
    ),
    "outcomes.proven_min_successes": "Successes a memory needs to count as proven.",
    "outcomes.proven_min_score": "Outcome score a memory needs to count as proven.",
    "outcomes.lead_seconds": "Seconds before a task opened that still count as its opening turn.",
    "outcomes.fallback_window_hours": "Hours of work assumed before a Beads close whose start is unknown.",
    "outcomes.tasks_dir": "Where Claude Code keeps its task lists.",
    "outcomes.explore": (
        "How strongly a rarely tried memory is tried before a rival of comparable relevance "
        "with a mediocre record (0 = never)."
    ),
    "outcomes.probation": (
        "Show a sinking memory again, flagged, when nothing that is not sinking answers as "
        "well (unless a person marked it failed)."
    ),
    "trust.trusted_sources": "Sources (comma-separated) whose writes are active at once.",
    "trust.hook_writes": "Memories captured by the hooks: active at once, or pending review.",
    "trust.external_writes": (
        "Captured words from tool output, a file or page read, or the assistant relaying one: "
        "pending review, or active."
    ),
    "trust.other_writes": "Writes from any other source (agents over MCP always): pending or active.",
    "trust.overdue": "Records past their review date: withhold them from agents, or only flag them.",
    "trust.conflicts": "Competing values of one fact: show each with its source, or hide them.",
    "trust.max_open_proposals": "Proposals one agent client may leave waiting for review; "
    "past that its proposals are refused until a person reviews.",
}


def describe(key: str) -> str:
    """The one line about ``key`` ("" for an unknown key)."""
    if key in LINES:
        return LINES[key]
    for prefix, line in GROUPS.items():
        if key.startswith(prefix):
            return line.format(name=key.removeprefix(prefix).replace("_", " "))
    return ""


def accepted(key: str, default: object) -> str:
    """What values ``key`` accepts, as ``config.coerce`` checks them."""
    from memory_layer.config import CHOICES, value_range

    if key in CHOICES:
        return " or ".join(CHOICES[key])
    if key == "embedding.model":
        from memory_layer.embedders import MODELS

        return " or ".join(MODELS)
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, list):
        return "a comma-separated list"
    if isinstance(default, str):
        return "text"
    kind = "a whole number" if isinstance(default, int) else "a number"
    bounds = value_range(key)
    if bounds is not None and isinstance(default, (int, float)):
        # A setting whose default is not negative never takes a negative value.
        low = bounds[0] if default < 0 else max(bounds[0], 0.0)
        return f"{kind} from {low:g} to {bounds[1]:g}"
    if isinstance(default, (int, float)) and default < 0:
        return f"{kind}, may be negative"
    if key.startswith("boosts.") or key == "recency.half_life_days":
        return f"{kind} above 0"
    return f"{kind}, 0 or more"
