"""The configured order store for a command (`opened_store`) or a runtime (`LazyStore`,
opened at the first lookup); a serving process on a team's PostgreSQL reuses its connections
(`StorePool`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from agent_cli.config import Settings
from agent_cli.dates import system_today
from agent_cli.store.configured import configured_path, open_configured
from agent_cli.store.sqlite import OrderStore


class StorePool:
    """A serving process's open connections to a team's PostgreSQL, handed to one request at a
    time and kept for the next: opening one costs about 4 ms (a connection, the schema's version
    read), and one message opened five or six (its turn, its lease's heartbeat, its run's
    lookups, the event streams' polls). A connection is kept only when it is idle and whole (no
    transaction left open, not closed): one an error left behind is closed instead."""

    def __init__(self, url: str, *, keep: int = 8) -> None:
        self.url = url
        self.keep = keep
        self._idle: list[OrderStore] = []
        self._lock = threading.Lock()
        self._closed = False

    def take(self) -> OrderStore:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return open_configured(None, self.url)

    def give(self, store: OrderStore, *, whole: bool = True) -> None:
        if whole and store.reusable():
            with self._lock:
                if not self._closed and len(self._idle) < self.keep:
                    self._idle.append(store)
                    return
        store.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for store in idle:
            store.close()


_POOL: list[StorePool | None] = [None]  # the serving process's, while it serves


def use_pool(pool: StorePool | None) -> None:
    """Reuse `pool`'s connections for every store of its URL from now on (None: stop)."""
    _POOL[0] = pool


def _pool_for(settings: Settings) -> StorePool | None:
    pool = _POOL[0]
    return pool if pool is not None and settings.store.url == pool.url else None


@contextmanager
def opened_store(settings: Settings) -> Iterator[OrderStore]:
    """The configured order store (a SQLite file or a PostgreSQL server), closed after use (or
    given back to the serving process's pool)."""
    pool = _pool_for(settings)
    if pool is not None:
        store = pool.take()
        whole = False
        try:
            yield store
            whole = True
        finally:
            pool.give(store, whole=whole)
        return
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
        self._pool = _pool_for(settings) if opened is None else None
        self._store: OrderStore | None = opened  # a store made already (an eval case's)
        self._dry_run = dry_run  # no database is created: the samples in memory instead

    def get(self) -> OrderStore:
        if self._store is None:
            never_made = self._configured is None and not configured_path(None).exists()
            if self._dry_run and self._url is None and never_made:
                self._store = OrderStore.in_memory(as_of=system_today())
            elif self._pool is not None:
                self._store = self._pool.take()
            else:
                self._store = open_configured(self._configured, self._url)
        return self._store

    def close(self) -> None:
        if self._store is not None and self._pool is not None:
            self._pool.give(self._store)  # kept only when no transaction was left open
            self._store = None
        elif self._store is not None:
            self._store.close()
