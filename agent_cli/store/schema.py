"""Schema versions of our SQLite files (the order store, the run log): `PRAGMA user_version`
counts the migrations applied; each migration is a tuple of statements; stdlib only."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


def schema_version(db: sqlite3.Connection, latest: int) -> int:
    """The file's version; a DatabaseError for one newer than this agent-cli knows."""
    (version,) = db.execute("PRAGMA user_version").fetchone()
    if version > latest:
        raise sqlite3.DatabaseError(
            f"schema version {version} is newer than this agent-cli knows ({latest})"
        )
    return int(version)


def migrate(db: sqlite3.Connection, migrations: Sequence[Sequence[str]]) -> int:
    """Apply the missing migrations; call it inside a write transaction, so the version read
    here is current (another process may have migrated the file meanwhile). Returns the
    version the file had."""
    version = schema_version(db, len(migrations))
    for statements in migrations[version:]:
        for statement in statements:
            db.execute(statement)
    if version < len(migrations):
        db.execute(f"PRAGMA user_version = {len(migrations)}")
    return version
