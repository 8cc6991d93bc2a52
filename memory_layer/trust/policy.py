"""The trust policy: which sources write active records and which go to the inbox.

Sources are strings like ``cli``, ``slash``, ``hook:extract`` or ``mcp:cursor``;
the part before ``:`` is the kind of door. Agents over MCP can only propose: their
writes are pending whatever the configuration says, so no agent can make its own
proposal true.
"""

from __future__ import annotations

from memory_layer.errors import ConfigError
from memory_layer.trust.visibility import ACTIVE, PENDING

# typing costs ~3 ms to import and is needed here only by type checkers (annotations
# are strings at run time), so the hook path never imports it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WRITE_STATUSES = (ACTIVE, PENDING)


def source_kind(source: str) -> str:
    return (source or "").strip().lower().split(":", 1)[0]


# Kinds of source that write without a person deciding each record: hook captures, the
# optional model pass, agents over MCP, issue-tracker syncs. A record such a source wrote
# active (hook_writes: active) is trusted by configuration, never reviewed.
AUTOMATIC_KINDS = frozenset({"hook", "llm", "mcp", "sync", "beads", "bd"})


def is_automatic(source: str) -> bool:
    """Whether ``source`` writes or approves without a person (see AUTOMATIC_KINDS)."""
    return source_kind(source) in AUTOMATIC_KINDS


def _setting(config: dict[str, Any], key: str) -> str:
    value = str(config["trust"][key]).strip().lower()
    if value not in WRITE_STATUSES:
        raise ConfigError(
            f"trust.{key} must be 'active' or 'pending', got {value!r}. "
            f"Run `memory-layer config set trust.{key} pending`."
        )
    return value


# Where a record's words came from when they are not its writer's own (see
# capture.provenance): text printed by a tool, a file or page the agent read, or the
# assistant repeating one of those. A third party wrote them, whoever stores them.
ORIGINS = ("tool_output", "file", "web", "relayed")


def initial_status(source: str, config: dict[str, Any], origin: str | None = None) -> str:
    """``active`` or ``pending`` for a new record written by ``source``.

    ``origin`` (one of ``ORIGINS``) says the words came from outside the conversation:
    such a record follows ``trust.external_writes`` (pending by default), whichever door
    stores it, because trusting "your own sessions" does not extend to what a test log
    or a fetched README told the agent."""
    kind = source_kind(source)
    if kind == "mcp":
        return PENDING
    if origin:
        return _setting(config, "external_writes")
    trusted = {str(s).strip().lower() for s in config["trust"]["trusted_sources"]}
    if (source or "").strip().lower() in trusted or kind in trusted:
        return ACTIVE
    if kind == "hook":
        return _setting(config, "hook_writes")
    return _setting(config, "other_writes")
