"""The store the settings name: where its file lives, and opening it (a SQLite file or a
PostgreSQL server, imported only when a URL is set)."""

from __future__ import annotations

import os
from pathlib import Path

from agent_cli.errors import UsageError
from agent_cli.store.sqlite import OrderStore


def default_db_path() -> Path:
    """`$AGENT_DB`, else the user's data directory (XDG), where the database lives by default."""
    if explicit := os.environ.get("AGENT_DB"):
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "agent-cli" / "orders.db"


def configured_path(configured: Path | None) -> Path:
    """The database file in use: the one the settings name (store.path, which AGENT_DB sets),
    else the default location."""
    return configured.expanduser() if configured is not None else default_db_path()


def open_configured(configured: Path | None, url: str | None = None) -> OrderStore:
    """The database the settings name: a PostgreSQL server (`url`), or a SQLite file never
    created (a misspelled path is an error, not a fresh sample database); else the default
    location, created and seeded on first use."""
    if url is not None:
        try:
            from agent_cli.store.postgres import PostgresStore  # noqa: PLC0415 - only when configured
        except ImportError:
            raise UsageError(
                "store.url (or AGENT_DB_URL) names a PostgreSQL server, and psycopg is not "
                "installed: "
                "pip install 'agent-cli[postgres]' (in a checkout: pip install -e '.[postgres]')"
            ) from None
        return PostgresStore.connect(url)
    return OrderStore.open(configured_path(configured), create=configured is None)
