"""The order store: a real SQLite database, created, migrated and seeded on first use. Every
query is parameterised; a write is one transaction (a failed import leaves the database as it
was); a refund has an idempotency key (never recorded twice) and what is still refundable is
checked again inside the transaction that records one."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypeVar

from agent_cli.dates import system_today
from agent_cli.domain import ledger
from agent_cli.domain.currencies import money
from agent_cli.domain.orders import (
    STATUSES,
    ImportResult,
    Order,
    Refund,
    RefundRecorded,
    RefundRefused,
)
from agent_cli.domain.records import DeskData
from agent_cli.errors import StoreError
from agent_cli.store import memory_copies
from agent_cli.store import tables as ddl  # the tables' text, shared with PostgreSQL
from agent_cli.store.bulk_writes import write_desk
from agent_cli.store.help_articles import write_articles
from agent_cli.store.samples import SAMPLE_SHOP, sample_shop
from agent_cli.store.schema import migrate, schema_version
from agent_cli.store.sqlite_errors import busy_as_error, unwritable
from agent_cli.store.upgrades import amounts_to_minor_units

T = TypeVar("T")
Seed = Iterable[Order] | DeskData  # what a new database starts with
MEMORY = Path(":memory:")


# Each entry moves the schema one version up; a new database runs them all, then is seeded.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"""CREATE TABLE orders (
            code TEXT PRIMARY KEY,
            status TEXT NOT NULL CHECK (status IN ({", ".join(repr(s) for s in STATUSES)})),
            total INTEGER NOT NULL CHECK (total >= 0),
            currency TEXT NOT NULL DEFAULT 'JPY',
            delivered_at TEXT,
            customer TEXT
        )""",
    ),
    (
        "ALTER TABLE orders ADD COLUMN note TEXT",
        ddl.refunds_table("INTEGER PRIMARY KEY"),
        "CREATE INDEX refunds_by_order ON refunds (order_code)",
    ),
    (
        # The approval queue: actions that wait for a person elsewhere (approval_queue.py).
        ddl.approvals_table("INTEGER PRIMARY KEY"),
        "CREATE INDEX approvals_by_order ON approvals (order_code)",
        "CREATE INDEX approvals_by_status ON approvals (status)",
    ),
    # Amounts in minor units: no statement, upgrades.amounts_to_minor_units moves the data.
    (),
    # The desk: the orders table again with the desk's statuses (SQLite cannot alter a check)
    # and columns, then its tables.
    (
        f"""CREATE TABLE orders_v5 (
            code TEXT PRIMARY KEY,
            status TEXT NOT NULL {ddl.STATUS_CHECK},
            total INTEGER NOT NULL CHECK (total >= 0),
            currency TEXT NOT NULL DEFAULT 'JPY',
            delivered_at TEXT,
            customer TEXT,
            note TEXT,
            {", ".join(ddl.ORDER_COLUMNS)}
        )""",
        "INSERT INTO orders_v5 (code, status, total, currency, delivered_at, customer, note)"
        " SELECT code, status, total, currency, delivered_at, customer, note FROM orders",
        "DROP TABLE orders",
        "ALTER TABLE orders_v5 RENAME TO orders",
        *ddl.TABLES,
    ),
    # Hand-over tickets (tickets.py).
    (
        ddl.tickets_table("INTEGER PRIMARY KEY"),
        "CREATE INDEX tickets_by_status ON tickets (status)",
    ),
    # The desk's writes: each committed change (write_commits.py), and the approval queue
    # holding them too (the table again: SQLite cannot alter a check or a NOT NULL).
    (
        ddl.order_changes_table("INTEGER PRIMARY KEY"),
        "CREATE INDEX order_changes_by_order ON order_changes (order_code)",
        ddl.approvals_table("INTEGER PRIMARY KEY", "approvals_v7"),
        "INSERT INTO approvals_v7 SELECT * FROM approvals",
        "DROP TABLE approvals",
        "ALTER TABLE approvals_v7 RENAME TO approvals",
        "CREATE INDEX approvals_by_order ON approvals (order_code)",
        "CREATE INDEX approvals_by_status ON approvals (status)",
    ),
    # The help centre (help_articles.py), searched with FTS5.
    (ddl.ARTICLES_TABLE, "CREATE VIRTUAL TABLE articles_fts USING fts5(id UNINDEXED, words)"),
    # Conversations that outlive a process (conversations.py).
    (
        ddl.CONVERSATIONS_TABLE,
        ddl.conversation_messages_table("INTEGER PRIMARY KEY"),
        *ddl.CONVERSATION_INDEXES,
    ),
    # `agent serve`'s bearer tokens (tokens.py).
    (ddl.TOKENS_TABLE,),
    # Channels: a conversation's address, and the outbox that delivers to it (outbox.py).
    (
        *ddl.CONVERSATION_ADDRESS,
        ddl.outbox_table("INTEGER PRIMARY KEY"),
        *ddl.OUTBOX_INDEXES,
    ),
    # Who opened a conversation over the API (a token speaks only in its own).
    ddl.CONVERSATION_OPENER,
    # The shop's rules a team pushed (shop_rules.py; read only from a team's PostgreSQL).
    (ddl.shop_rules_table("INTEGER PRIMARY KEY"),),
    ddl.APPROVAL_COLUMNS_NAMED,
)
SCHEMA_VERSION = len(_MIGRATIONS)
MINOR_UNITS_VERSION = 4  # a store older than this keeps whole units (upgrades.py)
BUSY_TIMEOUT_S = 10.0  # the longest wait for another process's lock, when the run has longer

# How long a query may wait for a lock: the run's time left, while a tool runs (see
# busy_wait_at_most); a context variable, so the loop's deadline reaches SQLite without every
# tool passing it down.
_busy_wait: ContextVar[float] = ContextVar("busy_wait", default=BUSY_TIMEOUT_S)


@contextmanager
def busy_wait_at_most(seconds: float) -> Iterator[None]:
    token = _busy_wait.set(max(0.0, min(seconds, BUSY_TIMEOUT_S)))
    try:
        yield
    finally:
        _busy_wait.reset(token)


def busy_wait_seconds() -> float:
    """How long a query may wait for another process's lock now (see busy_wait_at_most)."""
    return _busy_wait.get()


class OrderStore:
    """Orders in SQLite. `OrderStore.open(path)` creates a missing database (0600), seeded with
    the sample orders, unless told not to; `open_configured` applies the rule for user paths."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path
        self._wait_ms: int | None = None  # the busy timeout last set on the connection

    @classmethod
    def open(cls, path: Path, *, create: bool = True, seed: Seed | None = None) -> OrderStore:
        """Open (and migrate) the database at `path`. A missing file is created (owner-only: it
        holds customer names and notes) when `create`, else a StoreError. A new database gets
        `seed`, by default the sample orders dated as of today; an existing file never does."""
        if not create and not path.exists():
            raise StoreError(
                f"No order database at {path}; check AGENT_DB / store.path, or create it with "
                "'agent orders init' (add --sample for the sample orders)"
            )
        try:
            if create and not path.exists():  # a folder made here is the owner's alone
                path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                with contextlib.suppress(FileExistsError):  # another process was first
                    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            connection = sqlite3.connect(path, isolation_level=None, timeout=_busy_wait.get())
            store = cls(connection, path)
            if seed is None:
                seed = sample_shop(system_today()) if create else ()
            with busy_as_error():
                store._migrate(seed)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"Cannot open the order database {path}: {exc}; "
                "set AGENT_DB (or store.path in the config) to a writable SQLite file"
            ) from None
        return store

    @classmethod
    def in_memory(
        cls, orders: Iterable[Order] = (), as_of: date | None = None, shop: DeskData | None = None
    ) -> OrderStore:
        """A throwaway database (a copy of a template: memory_copies.py) holding `shop`, else the
        sample orders (at the dates eval cases are written for, or as of `as_of`), then `orders`
        (replacing those of the same code): for evals and dry runs. Use it from one thread."""
        seed = shop or (SAMPLE_SHOP if as_of is None else sample_shop(as_of))
        key = ("shop", id(shop)) if shop is not None else ("sample", as_of)
        store = cls(
            memory_copies.copied(key, shop, lambda db: cls(db, MEMORY)._migrate(seed)), MEMORY
        )
        if orders := list(orders):
            store.import_orders(orders)
        return store

    def reusable(self) -> bool:
        """Whether a pool may hand this connection to the next request (a team's PostgreSQL
        only: a SQLite connection belongs to the thread that opened it)."""
        return False

    def close(self) -> None:
        self._db.close()

    @property
    def where(self) -> str:
        """The database, as it may be shown (a file's path; a server's URL, password masked)."""
        return str(self.path)

    def _migrate(self, seed: Seed = ()) -> None:
        if schema_version(self._db, SCHEMA_VERSION) == SCHEMA_VERSION:
            return
        with self._transaction():
            # migrate reads the version again under the write lock: another process may have
            # migrated (or seeded a new file) between the first read and this one.
            before = migrate(self._db, _MIGRATIONS)
            if before == 0:
                self._seed(seed)
            elif before < MINOR_UNITS_VERSION:
                amounts_to_minor_units(self)

    def _seed(self, seed: Seed) -> None:
        """A new database's first rows: orders, or a shop with its desk data."""
        if isinstance(seed, DeskData):
            write_desk(self, seed)
            write_articles(self, seed.articles)
        else:
            self._upsert(seed)

    def _wait_for_locks(self) -> None:
        wait_ms = int(_busy_wait.get() * 1000)
        if wait_ms != self._wait_ms:  # a PRAGMA per query only when the bound changed
            self._db.execute(f"PRAGMA busy_timeout = {wait_ms}")
            self._wait_ms = wait_ms

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with unwritable(self.path), busy_as_error():
            self._wait_for_locks()
            self._db.execute("BEGIN IMMEDIATE")
        try:
            with unwritable(self.path):
                yield
                with busy_as_error():
                    self._db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # a full disk may refuse that too
                self._db.execute("ROLLBACK")
            raise

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
        """Rows of a read, waiting for another process's lock only as long as there is time."""
        with busy_as_error(self.path):
            self._wait_for_locks()
            return self._db.execute(sql, params).fetchall()

    def get(self, code: str) -> Order | None:
        rows = self._query(_SELECT + " WHERE code = ?", (code,))
        return _order(rows[0]) if rows else None

    def all(self) -> list[Order]:
        return [_order(row) for row in self._query(_SELECT + " ORDER BY code")]

    def orders(self, *, status: str | None = None, limit: int | None = None) -> list[Order]:
        """Orders by code, of one status if given, at most `limit` (the database does the
        cutting: listing 50 of 20,000 orders reads 50)."""
        where, params = (" WHERE status = ?", (status,)) if status else ("", ())
        cap = f" LIMIT {int(limit)}" if limit is not None else ""
        return [
            _order(row) for row in self._query(_SELECT + where + " ORDER BY code" + cap, params)
        ]

    def count(self, *, status: str | None = None) -> int:
        where, params = (" WHERE status = ?", (status,)) if status else ("", ())
        ((total,),) = self._query("SELECT COUNT(*) FROM orders" + where, params)
        return int(total)

    def import_orders(self, orders: Iterable[Order]) -> ImportResult:
        """Insert or replace every order, all or nothing. Recorded refunds are kept."""
        orders = list(orders)
        codes = {order.code for order in orders}
        with self._transaction():
            updated = sum(1 for (code,) in self._query("SELECT code FROM orders") if code in codes)
            self._upsert(orders)
        return ImportResult(added=len(orders) - updated, updated=updated)

    def refunds(self, code: str) -> list[Refund]:
        rows = self._query(_SELECT_REFUNDS + " WHERE order_code = ? ORDER BY id", (code,))
        return [Refund(*row) for row in rows]

    def refunded_total(self, code: str) -> int:
        """What has gone back of the order, by any path (its ledger: `domain/ledger.py`)."""
        return ledger.refunded(self, code)

    def refunds_since(self, order: Order, since: datetime) -> tuple[int, int]:
        """The refunds recorded since `since` (UTC) for the order's customer's orders, or for
        the order itself when it has no customer: how many, and their sum in its currency."""
        if order.customer is None:
            where, param = "refunds.order_code = ?", order.code
        else:
            where, param = "orders.customer = ?", order.customer
        rows = self._query(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN orders.currency = ? THEN refunds.amount"
            " ELSE 0 END), 0) FROM refunds JOIN orders ON orders.code = refunds.order_code"
            f" WHERE {where} AND refunds.created_at >= ?",
            (order.currency, param, since.isoformat(timespec="seconds")),
        )
        return int(rows[0][0]), int(rows[0][1])

    def find_refund(self, key: str) -> Refund | None:
        rows = self._query(_SELECT_REFUNDS + " WHERE idempotency_key = ?", (key,))
        return Refund(*rows[0]) if rows else None

    def record_refund(
        self,
        code: str,
        amount: int,
        reason: str,
        *,
        key: str,
        check: Callable[[Order, int], None] | None = None,
    ) -> RefundRecorded:
        """Record a refund once per key; refuse more than is still refundable. `check(order,
        refunded so far)` runs inside the transaction on the order as it is now and may raise
        RefundRefused. An order refunded in full becomes REFUNDED, in the same transaction."""
        return self.atomically(
            lambda: self.record_refund_locked(code, amount, reason, key=key, check=check)
        )

    def record_refund_locked(
        self,
        code: str,
        amount: int,
        reason: str,
        *,
        key: str,
        check: Callable[[Order, int], None] | None = None,
    ) -> RefundRecorded:
        """`record_refund`, inside a transaction the caller holds (`transaction()`)."""
        self._lock_order(code)  # one refund of an order at a time, whatever the backend
        if (existing := self.find_refund(key)) is not None:
            return RefundRecorded(existing, created=False)
        order = self.get(code)
        if order is None:
            raise RefundRefused(f"no order with code {code}")
        refunded = ledger.spent(self, code)  # by any path: money goes back once
        if check is not None:
            check(order, refunded)
        remaining = order.total - refunded
        if amount > remaining:
            raise RefundRefused(f"only {money(remaining, order.currency)} of {code} is refundable")
        now = datetime.now(UTC).isoformat(timespec="seconds")
        refund_id = self.insert(
            "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
            " VALUES (?, ?, ?, ?, ?)",
            (code, amount, reason, now, key),
        )
        if amount == remaining:
            self.execute("UPDATE orders SET status = 'REFUNDED' WHERE code = ?", (code,))
        self._refund_entry(code, amount, now)
        return RefundRecorded(Refund(refund_id, code, amount, reason, now), created=True)

    def _refund_entry(self, code: str, amount: int, now: str) -> None:
        """The refund in the order's payment history too (the desk's), back to the method that
        paid first; an order with no history (the seed's rows) has none to add to."""
        paid = self.query(
            "SELECT payment_method_id, (SELECT MAX(position) FROM payments WHERE order_code = ?)"
            " FROM payments WHERE order_code = ? AND kind = 'payment' ORDER BY position LIMIT 1",
            (code, code),
        )
        if paid:
            self.execute(
                "INSERT INTO payments (order_code, position, kind, amount, payment_method_id,"
                " paid_at) VALUES (?, ?, 'refund', ?, ?, ?)",
                (code, int(paid[0][1]) + 1, amount, paid[0][0], now),
            )

    def upsert_locked(self, orders: Iterable[Order]) -> None:
        """Insert or replace orders inside a transaction the caller holds."""
        self._upsert(orders)

    def _lock_order(self, code: str) -> None:
        """SQLite: nothing to do, `BEGIN IMMEDIATE` holds the only write lock."""

    # For approval_queue.py, which keeps its table in this database and its writes in this
    # store's transactions (a refund and its approval commit together).
    def atomically(self, work: Callable[[], T]) -> T:
        """`work` in one transaction: all of it commits, or none (PostgreSQL may run it twice)."""
        with self._transaction():
            return work()

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
        return self._query(sql, params)

    def number_after(self, table: str) -> None:
        """After rows were written with their ids (a store moved in): SQLite numbers the next
        row after the largest id by itself."""

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> None:
        """A write inside `transaction()`."""
        self._db.execute(sql, params)

    def execute_many(self, sql: str, rows: Iterable[tuple[object, ...]]) -> None:
        """One write for many rows inside `transaction()` (an import's thousands)."""
        self._db.executemany(sql, rows)

    def insert(self, sql: str, params: tuple[object, ...] = ()) -> int:
        """An INSERT inside `transaction()`; the new row's id."""
        return int(self._db.execute(sql, params).lastrowid or 0)

    # Appended to a SELECT inside `transaction()` to hold its rows until the commit; SQLite's
    # BEGIN IMMEDIATE already holds the whole database.
    FOR_UPDATE = ""
    FULL_TEXT = "fts5"  # how help_articles.py searches: SQLite's FTS5

    def _upsert(self, orders: Iterable[Order]) -> None:
        self._db.executemany(UPSERT_ORDERS, [order_row(order) for order in orders])


# Shared with postgres.py. An existing order keeps its other columns (the desk's), as a new
# row of the seed's columns would not.
UPSERT_ORDERS = (
    "INSERT INTO orders (code, status, total, currency, delivered_at, customer, note)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (code) DO UPDATE SET"
    " status = excluded.status, total = excluded.total, currency = excluded.currency,"
    " delivered_at = excluded.delivered_at, customer = excluded.customer, note = excluded.note"
)


def order_row(order: Order) -> tuple[str, str, int, str, str | None, str | None, str | None]:
    """An order as the columns of its row, in the order the upserts name them."""
    delivered = order.delivered_at.isoformat() if order.delivered_at else None
    return (
        order.code,
        order.status,
        order.total,
        order.currency,
        delivered,
        order.customer,
        order.note,
    )


_SELECT = "SELECT code, status, total, currency, delivered_at, customer, note FROM orders"
_SELECT_REFUNDS = "SELECT id, order_code, amount, reason, created_at FROM refunds"


def _order(row: tuple[str, str, int, str, str | None, str | None, str | None]) -> Order:
    code, status, total, currency, delivered_at, customer, note = row
    delivered = date.fromisoformat(delivered_at) if delivered_at else None
    return Order(code, status, total, delivered, currency, customer, note)
