"""The migration names and their functions agree: ``storage.migrations`` lists the names
(the order they are applied in), the area modules define the functions. A function
missing from the list would never run; a name without one fails every first open."""

from __future__ import annotations

import pytest

from memory_layer.storage import (
    migrations,
    migrations_memories,
    migrations_sessions,
    migrations_trust,
)

AREAS = (migrations_memories, migrations_sessions, migrations_trust)


def defined(module: object) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if callable(value) and getattr(value, "__module__", "") == module.__name__
    }


def test_every_migration_function_is_listed_once_and_every_name_has_one() -> None:
    functions = [name for area in AREAS for name in sorted(defined(area))]
    assert len(functions) == len(set(functions))  # no name in two area modules
    assert sorted(functions) == sorted(migrations.NAMES)
    assert len(set(migrations.NAMES)) == len(migrations.NAMES)
    assert [name for name, _ in migrations.MIGRATIONS] == list(migrations.NAMES)


def test_a_listed_name_without_a_function_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(migrations, "NAMES", (*migrations.NAMES, "m999_not_written"))
    with pytest.raises(RuntimeError, match="m999_not_written is defined 0 times"):
        migrations.steps()


def test_opening_an_up_to_date_store_loads_no_migration_function(tmp_path) -> None:
    """Every hook opens the store: it checks the applied names against ``NAMES`` alone,
    and the area modules (the DDL) load only when a migration is pending."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from memory_layer.storage.db import open_db\n"
        "open_db().close()\n"
        "print(sorted(m for m in sys.modules if m.startswith('memory_layer.storage.migrations')))"
    )
    env = {**os.environ, "MEMORY_LAYER_HOME": str(tmp_path / "home")}

    def loaded() -> str:
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    first = loaded()  # a new store: every migration runs
    assert "migrations_memories" in first and "migrations_trust" in first
    assert loaded() == "['memory_layer.storage.migrations']"
