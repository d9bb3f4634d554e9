"""The configured order store for a command (`opened_store`) or a runtime (`LazyStore`,
opened at the first lookup)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from agent_cli.config import Settings
from agent_cli.dates import system_today
from agent_cli.store.configured import configured_path, open_configured
from agent_cli.store.sqlite import OrderStore


@contextmanager
def opened_store(settings: Settings) -> Iterator[OrderStore]:
    """The configured order store (a SQLite file or a PostgreSQL server), closed after use."""
    store = open_configured(settings.store.path, settings.store.url)
    try:
        yield store
    finally:
        store.close()


class LazyStore:
    """Opens the order database on first use, so runs that never look up an order never open it."""

    def __init__(
        self, settings: Settings, *, opened: OrderStore | None = None, dry_run: bool = False
    ) -> None:
        self._configured = settings.store.path
        self._url = settings.store.url
        self._store: OrderStore | None = opened  # a store made already (an eval case's)
        self._dry_run = dry_run  # no database is created: the samples in memory instead

    def get(self) -> OrderStore:
        if self._store is None:
            never_made = self._configured is None and not configured_path(None).exists()
            if self._dry_run and self._url is None and never_made:
                self._store = OrderStore.in_memory(as_of=system_today())
            else:
                self._store = open_configured(self._configured, self._url)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
