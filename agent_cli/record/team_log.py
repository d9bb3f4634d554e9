"""The run log of a team on one PostgreSQL (issue 52, point 5): every run of every machine whose
store is the team's is logged in that store, so `agent logs` and `agent logs report` show the
team's conversations from any machine. The same queries as the SQLite log (record/runlog.py)
over the store's connection; words are found by ILIKE (no FTS5 on PostgreSQL: a team's log is
searched by a scan, fine for the tens of thousands of runs `keep_runs` keeps)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from agent_cli.record.runlog import RunLog
from agent_cli.store.postgres import PostgresStore

T = TypeVar("T")


class TeamRunLog(RunLog):
    INDEXED = False
    LIKE = "ILIKE"

    def __init__(self, store: PostgresStore, keep_runs: int) -> None:
        # No sqlite3 connection: every query goes through the store (its errors are StoreError).
        self._store = store
        self._lock = threading.RLock()  # a write reads inside its transaction
        self.keep_runs = keep_runs

    @classmethod
    def connect(cls, url: str, *, keep_runs: int = 10_000) -> TeamRunLog:
        """The log in the team's store at `url` (its tables made or upgraded as the store's)."""
        return cls(PostgresStore.connect(url), keep_runs)

    def close(self) -> None:
        self._store.close()

    def _rows(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> list[Any]:
        with self._lock:
            return self._store.query(sql, tuple(params))

    def _exec(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        self._store.execute(sql, params)

    def _insert(self, sql: str, params: tuple[Any, ...]) -> int:
        return self._store.insert(sql, params)

    def _atomically(self, work: Callable[[], T]) -> T:
        with self._lock:
            return self._store.atomically(work)

    def _prune(self, last: int) -> None:
        self._exec("DELETE FROM traces WHERE id <= ?", (last,))  # no trigger here
        self._exec("DELETE FROM runs WHERE id <= ?", (last,))

    def _limit(self, limit: int | None) -> int | None:
        return limit  # LIMIT NULL: all of them
