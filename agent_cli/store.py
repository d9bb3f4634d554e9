"""The order store: a real SQLite database, created and seeded on first use.

Every query is parameterised; order codes reach it only after validation. Writes happen in one
transaction, so a failed import leaves the database exactly as it was.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from agent_cli.errors import StoreError

STATUSES = ("PENDING", "SHIPPING", "DELIVERED", "CANCELLED", "REFUNDED")
SCHEMA_VERSION = 1

_SCHEMA = f"""
CREATE TABLE orders (
    code TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ({", ".join(repr(s) for s in STATUSES)})),
    total INTEGER NOT NULL CHECK (total >= 0),
    currency TEXT NOT NULL DEFAULT 'JPY',
    delivered_at TEXT,
    customer TEXT
);
"""


@dataclass(frozen=True, slots=True)
class Order:
    """One customer order. `total` is in whole units of `currency`."""

    code: str
    status: str
    total: int
    delivered_at: date | None = None
    currency: str = "JPY"
    customer: str | None = None


@dataclass(frozen=True, slots=True)
class ImportResult:
    added: int
    updated: int


SAMPLE_ORDERS = (
    Order("A100", "DELIVERED", 250_000, date(2026, 10, 1), customer="Sato Haruki"),
    Order("A101", "SHIPPING", 480_000, customer="Suzuki Aoi"),
    Order("A102", "CANCELLED", 12_800, customer="Takahashi Ren"),
    Order("A103", "DELIVERED", 89_000, date(2026, 6, 15), customer="Tanaka Yui"),
    Order("A104", "REFUNDED", 32_000, date(2026, 9, 20), customer="Ito Sora"),
    Order("A105", "DELIVERED", 15_800, date(2026, 10, 20), customer="Watanabe Mei"),
    Order("B200", "PENDING", 5_400, customer="Yamamoto Kaito"),
    Order("C300", "DELIVERED", 129, date(2026, 9, 28), "USD", "Alex Morgan"),
)


def default_db_path() -> Path:
    """`$AGENT_DB`, else the user's data directory (XDG), where the database lives by default."""
    if explicit := os.environ.get("AGENT_DB"):
        return Path(explicit).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "agent-cli" / "orders.db"


class OrderStore:
    """Orders in SQLite. Open with `OrderStore.open(path)`; the first open seeds sample orders."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path

    @classmethod
    def open(cls, path: Path) -> OrderStore:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(path, isolation_level=None)
            store = cls(connection, path)
            store._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"Cannot open the order database {path}: {exc}; "
                "set AGENT_DB (or store.path in the config) to a writable SQLite file"
            ) from None
        return store

    def close(self) -> None:
        self._db.close()

    def _migrate(self) -> None:
        (version,) = self._db.execute("PRAGMA user_version").fetchone()
        if version == SCHEMA_VERSION:
            return
        if version != 0:
            raise sqlite3.DatabaseError(f"unknown schema version {version}")
        with self._transaction():
            self._db.execute(_SCHEMA)
            self._upsert(SAMPLE_ORDERS)
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get(self, code: str) -> Order | None:
        row = self._db.execute(_SELECT + " WHERE code = ?", (code,)).fetchone()
        return _order(row) if row else None

    def all(self) -> list[Order]:
        return [_order(row) for row in self._db.execute(_SELECT + " ORDER BY code")]

    def import_orders(self, orders: Iterable[Order]) -> ImportResult:
        """Insert or replace every order, all or nothing."""
        orders = list(orders)
        codes = {order.code for order in orders}
        with self._transaction():
            updated = sum(
                1 for (code,) in self._db.execute("SELECT code FROM orders") if code in codes
            )
            self._upsert(orders)
        return ImportResult(added=len(orders) - updated, updated=updated)

    def _upsert(self, orders: Iterable[Order]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO orders (code, status, total, currency, delivered_at, customer)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    o.code,
                    o.status,
                    o.total,
                    o.currency,
                    o.delivered_at.isoformat() if o.delivered_at else None,
                    o.customer,
                )
                for o in orders
            ],
        )


_SELECT = "SELECT code, status, total, currency, delivered_at, customer FROM orders"


def _order(row: tuple[str, str, int, str, str | None, str | None]) -> Order:
    code, status, total, currency, delivered_at, customer = row
    delivered = date.fromisoformat(delivered_at) if delivered_at else None
    return Order(code, status, total, delivered, currency, customer)
