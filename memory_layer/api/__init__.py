"""The use cases: the one place every door gets them from.

The CLI, the hooks, the MCP server, the dashboard, the warm engine, the Markdown
mirror and import parse their input, call a function here and format the result.
None of them writes SQL or restates a rule: what an agent may see, how a write is
trusted, what counts as a surfacing and how often an agent may report are decided
here (or in the layer this delegates to), once. A layer test (tests/test_layers.py)
holds the doors to importing use cases from this package only.

Importing it costs little: the hook path imports it, so every use case imports its
layers when it runs.
"""

from __future__ import annotations

import importlib

# Every name, and the module it lives in: this package's own use cases, and those that
# live whole in one layer module, re-exported as they are (or, as "module:attr", under
# a name that says what they do here). Resolved on first use (module ``__getattr__``),
# so a hook process, which imports this package, loads only the use cases it calls
# (a tool event: session activity, and remember when it captures something).
_HOMES = {
    # the use cases defined in this package
    **dict.fromkeys(["check_agent_report", "report_outcome"], "memory_layer.api.outcomes"),
    **dict.fromkeys(
        [
            "AGENT",
            "AUDIENCES",
            "PERSON",
            "SURFACE_KINDS",
            "agent_flags",
            "agent_record",
            "agent_rankable",
            "agent_scope",
            "agent_statuses",
            "agent_withheld_reason",
            "check_query",
            "parse_query",
            "probation_filter",
            "recall",
            "recall_records",
            "record_surfacing",
            "scope_for",
        ],
        "memory_layer.api.reading",
    ),
    **dict.fromkeys(["decide", "dispute", "inbox", "verify"], "memory_layer.api.review"),
    "session_start_withheld": "memory_layer.api.session_start",
    **dict.fromkeys(
        ["FileImport", "import_instructions", "instruction_files"], "memory_layer.api.instructions"
    ),
    **dict.fromkeys(
        [
            "Remembered",
            "check_memory_input",
            "check_reason",
            "edit",
            "forget",
            "is_proposal",
            "purge",
            "remember",
            "remember_record",
            "restore",
            "supersede_mentions",
            "risky_hold",
        ],
        "memory_layer.api.writing",
    ),
    # the store itself
    "open_db": "memory_layer.storage.db",
    "explain_error": "memory_layer.storage.db",
    "store_trouble": "memory_layer.storage.db",
    "is_locked": "memory_layer.storage.db",
    "transaction": "memory_layer.storage.transaction",
    "brief_wait": "memory_layer.storage.db",
    # reading records
    "Filters": "memory_layer.listing",
    "SORTS": "memory_layer.listing",
    "count_memories": "memory_layer.listing",
    "details": "memory_layer.listing",
    "list_memories": "memory_layer.listing",
    "stats": "memory_layer.listing",
    "summarise": "memory_layer.listing",
    "activity_in_words": "memory_layer.activity_words:fold",
    "get_memory": "memory_layer.storage.records",
    "history": "memory_layer.storage.records",
    "all_memories": "memory_layer.storage.records",
    "memories_by_id": "memory_layer.storage.records",
    "recent_operations": "memory_layer.storage.records",
    "judged_outcome_scores": "memory_layer.storage.records",
    "usage_history": "memory_layer.storage.usage",
    "Scope": "memory_layer.retrieval.search",
    "above_floor": "memory_layer.retrieval.relevance",
    "within_project": "memory_layer.retrieval.query",
    "quality": "memory_layer.retrieval.scoring",
    "session_start_pool": "memory_layer.storage.memory_lists",
    "require_text": "memory_layer.memories",
    "counted": "memory_layer.text",
    "describe_setting": "memory_layer.settings_help:describe",
    "accepted_values": "memory_layer.settings_help:accepted",
    "foreign_modules": "memory_layer.install",
    "DISTRIBUTION": "memory_layer.install",
    "Scored": "memory_layer.retrieval.scoring",
    "clean_tags": "memory_layer.memories",
    "get_embedder": "memory_layer.embed",
    "embedder_status": "memory_layer.embed",
    "embedding_model_id": "memory_layer.embed:model_id_for",
    "check_draft": "memory_layer.trust.quality",
    "agent_provenance": "memory_layer.trust.views",
    "agent_review": "memory_layer.trust.views",
    "reviewed_by": "memory_layer.trust.views",
    "trust_notes": "memory_layer.trust.views",
    "clean_scene": "memory_layer.trust.facts",
    "clean_field": "memory_layer.trust.fields",
    "health": "memory_layer.storage.db",
    "describe_store_files": "memory_layer.storage.db",
    "write_lock_free": "memory_layer.storage.db",
    "fts5_available": "memory_layer.storage.db",
    "set_busy_timeout": "memory_layer.storage.db",
    "total_memories": "memory_layer.storage.records",
    "unembedded_count": "memory_layer.storage.records",
    "has_unembedded": "memory_layer.storage.records",
    "other_model_count": "memory_layer.storage.records",
    "operations": "memory_layer.storage.records",
    "Conn": "memory_layer.storage.conn",
    "project_for": "memory_layer.project",
    "normalise_remote": "memory_layer.project",
    "vector_index": "memory_layer.retrieval.vectors",
    "check_text": "memory_layer.memories",
    "parse_since": "memory_layer.trust.verify",
    "stamp_trusted_writes": "memory_layer.trust.verify",
    # stored text made inert on its way out (hook context, MCP, the terminal)
    "model_text": "memory_layer.inert:for_model",
    "model_data": "memory_layer.inert:data_for_model",
    "terminal_text": "memory_layer.inert:for_terminal",
    "json_escapes": "memory_layer.inert",
    # moving data in and out
    "import_records": "memory_layer.transfer",
    "read_lines": "memory_layer.transfer",
    "export_records": "memory_layer.transfer",
    "backfill": "memory_layer.indexing",
    "backup": "memory_layer.backup",
    "restore_backup": "memory_layer.backup:restore",
    # capture: the extractors the hooks feed, and the session activity they record
    "Candidate": "memory_layer.capture.candidate",
    "clean": "memory_layer.capture.privacy",
    "event_from_hook": "memory_layer.capture.signals",
    "events_from_entries": "memory_layer.capture.signals",
    "text_stored": "memory_layer.storage.records",
    "ToolEvent": "memory_layer.capture.signals",
    "command_candidates": "memory_layer.capture.signals",
    "signal_candidates": "memory_layer.capture.signals",
    "extract_from_entries": "memory_layer.capture.extract",
    "observe_tool_text": "memory_layer.capture.extract",
    "capture_judge": "memory_layer.capture.learned:judge_for",
    "Entry": "memory_layer.capture.transcript",
    "read_new_entries": "memory_layer.capture.transcript",
    "clear_pending": "memory_layer.activity",
    "end_session": "memory_layer.activity",
    "get_session": "memory_layer.activity",
    "pending_sessions": "memory_layer.activity",
    "recent_tool_events": "memory_layer.activity",
    "record_event": "memory_layer.activity",
    "record_usage": "memory_layer.activity",
    "reset_context": "memory_layer.activity",
    "set_transcript_offset": "memory_layer.activity",
    "shown_in_context": "memory_layer.activity",
    "touch_session": "memory_layer.activity",
    "transcript_offset": "memory_layer.activity",
    "transcript_tool_text": "memory_layer.activity",
    "LlmCall": "memory_layer.storage.llm_calls",
    "llm_calls_since": "memory_layer.storage.llm_calls:calls_since",
    "record_llm_call": "memory_layer.storage.llm_calls:record_call",
    # outcomes
    "describe_change": "memory_layer.outcomes.credit",
    "on_task_signal": "memory_layer.outcomes.claude",
    "reconcile_tasks": "memory_layer.outcomes.claude:reconcile",
    "find_beads_repo": "memory_layer.outcomes.beads",
    "install_beads_hook": "memory_layer.outcomes.beads:install",
    "sync_beads": "memory_layer.outcomes.beads:sync",
    "on_beads_hook": "memory_layer.outcomes.beads",
    "OutcomeResult": "memory_layer.outcomes.lifecycle",
    "correct_outcome": "memory_layer.outcomes.manual",
    "memory_feedback": "memory_layer.outcomes.manual",
    "record_outcome": "memory_layer.outcomes.manual",
    "restore_sinking": "memory_layer.outcomes.manual",
    "undo_credit": "memory_layer.outcomes.manual",
    "undo_outcome": "memory_layer.outcomes.manual",
    "is_proven": "memory_layer.outcomes.rules",
    "is_sinking": "memory_layer.outcomes.rules",
    "UnknownTask": "memory_layer.outcomes.store",
    "credit_notes": "memory_layer.outcomes.views",
    "learning_series": "memory_layer.outcomes.views",
    "list_tasks": "memory_layer.outcomes.views",
    "memory_outcomes": "memory_layer.outcomes.views",
    "task_detail": "memory_layer.outcomes.views",
    # the team client's use cases
    "team_login": "memory_layer.api.team:login",
    "team_logged_in": "memory_layer.api.team:logged_in",
    "team_share": "memory_layer.api.team:share",
    "team_propose_change": "memory_layer.api.team:propose_change",
    "team_propose_edit": "memory_layer.api.team:propose_edit",
    "team_join": "memory_layer.api.team:join",
    "team_role_actions": "memory_layer.api.team:role_actions",
    "team_sync": "memory_layer.api.team:sync",
    "team_status": "memory_layer.api.team:status",
    "team_call": "memory_layer.api.team:server_call",
    "team_new_client_key": "memory_layer.api.team:new_client_key",
    "is_team_memory": "memory_layer.api.team:is_team_memory",
    "team_sync_soon": "memory_layer.api.team_soon:sync_soon",
    # the team server's use cases (PostgreSQL), named team_* here
    "team_init_server": "memory_layer.api.team_server:init_server",
    "team_authenticate": "memory_layer.api.team_server:authenticate",
    "team_me": "memory_layer.api.team_server:me",
    "team_invite": "memory_layer.api.team_server:invite",
    "team_create_token": "memory_layer.api.team_server:create_token",
    "team_revoke_token": "memory_layer.api.team_server:revoke_token",
    "team_propose": "memory_layer.api.team_server:propose",
    "team_inbox": "memory_layer.api.team_server:inbox",
    "team_decide": "memory_layer.api.team_server:decide",
    "team_withdraw": "memory_layer.api.team_server:withdraw",
    "team_dispute": "memory_layer.api.team_server:dispute",
    "team_resolve": "memory_layer.api.team_server:resolve",
    "team_report_outcome": "memory_layer.api.team_server:report_outcome",
    "team_pull": "memory_layer.api.team_server:pull",
    "team_search": "memory_layer.api.team_server:search",
    "team_ask_to_join": "memory_layer.api.team_members:ask",
    "team_join_requests": "memory_layer.api.team_members:listing",
    "team_decide_join": "memory_layer.api.team_members:decide",
    "team_connect": "memory_layer.api.team_server:connect",
    "team_check_database": "memory_layer.api.team_server:check_database",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = home.partition(":")  # "module:attr" re-exports under another name
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


__all__ = sorted(_HOMES)
