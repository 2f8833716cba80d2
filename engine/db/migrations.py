"""Versioned schema migrations, shared by every database this package keeps (the results
store and the response cache).

A schema is a numbered list of migrations; the version a database is at is kept in the
database itself (SQLite's `PRAGMA user_version` for a file of its own, a version table in
PostgreSQL, one per schema since several may share a database). Opening applies, in one
transaction, the migrations above that version, so a file or database written by an older
release is upgraded in place and one written by a newer release is refused instead of being
misread.

Migrations are never edited once released: a change to the schema is one more migration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Migration:
    """One step of a schema: the statements that take it from `version - 1` to `version`, then
    `convert` (given the connection, in the same transaction) for what SQL alone cannot do,
    such as re-encoding the rows already stored. `shrinks`: it frees much of the database's
    space, which a file of its own gives back to the disk once the migration is committed."""

    version: int
    description: str
    statements: tuple[str, ...]
    convert: Callable[[Any], None] | None = None
    shrinks: bool = False


def check_sequence(migrations: Sequence[Migration]) -> None:
    """Versions must run 1, 2, 3, ...: a gap or a repeat is a programming error caught at import."""
    versions = [migration.version for migration in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must be numbered 1..n without gaps, got {versions}")


def latest_version(migrations: Sequence[Migration]) -> int:
    return migrations[-1].version if migrations else 0


def pending(migrations: Sequence[Migration], current: int, where: str) -> list[Migration]:
    """The migrations a database at version `current` still needs, in order; a database
    written by a newer release (a version above the latest known) is refused."""
    latest = latest_version(migrations)
    if current > latest:
        raise ConfigError(
            f"{where} was written by a newer version of llm-scorers (store schema {current}, this release knows "
            f"up to {latest}); upgrade llm-scorers to read it"
        )
    return [migration for migration in migrations if migration.version > current]


def split_statements(script: str) -> tuple[str, ...]:
    """The statements of a DDL script (no semicolons inside statements, as in ours)."""
    return tuple(statement.strip() for statement in script.split(";") if statement.strip())
