"""Every schema change, as named migrations applied in order when the database opens.

Never edit a migration that has shipped; add a new one at the end of ``NAMES``, its
function (named as the migration) in the area module it belongs to:
``migrations_memories`` (memories, FTS, the vector change log, conversation order),
``migrations_sessions`` (sessions, usage, hook offsets, LLM calls, outcome tasks) or
``migrations_trust`` (review, conflicts, proposals, instruction files, team sync).

This module holds only the names, because every process opening the store (each hook
among them) checks them against the database; the functions, 600 lines of DDL, are
imported only when one is pending.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # no typing import at run time (~3 ms on the hook path)
if TYPE_CHECKING:
    from sqlite_utils import Database, Migrations

SET_NAME = "memory_layer"

# The migrations in the order they are applied: the order of this list, not of the
# numbers in the names. The numbers were reserved per area (m01x hooks, m02x outcomes,
# m03x trust...) while the areas were built in parallel; the names are stored in every
# database, so they stay as they are, and a new migration always goes at the end.
# The sqlite-utils Migrations set is built only when something is pending: importing
# sqlite-utils costs ~0.2 s, which the hook path cannot afford on every call, while
# checking the applied names is one query.
NAMES: tuple[str, ...] = (
    "m001_memories",
    "m002_operations_log",
    "m003_fts_and_proven",
    "m004_generation",
    "m010_usage_and_sessions",
    "m030_trust_review_and_conflicts",
    "m020_outcomes_tasks_and_credits",
    "m011_hooks_pending_and_offsets",
    "m050_memory_changes",
    "m012_hooks_unembedded_index",
    "m013_hooks_llm_calls",
    "m060_review_restored_records_unverified",
    "m070_fts_indexes_fact_subject_and_key",
    "m080_proposals_base_text",
    "m090_seed_instruction_items",
    "m091_capture_origin",
    "m900_team_sync",
    "m095_capture_relay_window",
    "m100_memory_thread_position",
    "m101_thread_places_per_project",
)

def steps() -> list[tuple[str, Callable[[Database], None]]]:
    """(name, function) for every migration, in order."""
    from memory_layer.storage import migrations_memories, migrations_sessions, migrations_trust

    areas = (migrations_memories, migrations_sessions, migrations_trust)
    found: list[tuple[str, Callable[[Database], None]]] = []
    for name in NAMES:
        homes = [getattr(area, name) for area in areas if hasattr(area, name)]
        if len(homes) != 1:
            raise RuntimeError(f"Migration {name} is defined {len(homes)} times, not once")
        found.append((name, homes[0]))
    return found


def migration_set() -> Migrations:
    """The one sqlite_utils.Migrations set holding every schema change, in order."""
    from sqlite_utils import Migrations

    mset = Migrations(SET_NAME)
    for name, fn in steps():
        mset(name=name)(fn)
    return mset


def __getattr__(name: str) -> object:
    """``MIGRATIONS`` (what ``steps`` returns) and each migration's function by its name,
    for callers that import them from here; loaded on first use (PEP 562)."""
    if name == "MIGRATIONS":
        globals()["MIGRATIONS"] = found = steps()
        return found
    if name in NAMES:
        return dict(steps())[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
