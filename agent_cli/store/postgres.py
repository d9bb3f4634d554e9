"""The order store on PostgreSQL, for a team: the same contract as the SQLite file (sqlite.py),
over psycopg 3, imported only when `store.url` (or AGENT_DB_URL) names a server.

What differs is only how: statements are written once with `?` and sent with `%s`; ids come from
`RETURNING id`; the schema version is a table, migrated under an advisory lock, so two agents
starting at once migrate once; a refund locks its order's row (`SELECT ... FOR UPDATE`) before
it reads anything, so refunds of one order from many processes commit one at a time, each on the
order as the one before left it; an approval queue item is locked the same way. A password is
taken from the URL's `${NAME}` references, PGPASSWORD or ~/.pgpass, and never printed: errors
show the URL with it masked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from agent_cli.domain.orders import Order
from agent_cli.errors import StoreBusy, StoreError, StoreFull, StoreReadOnly
from agent_cli.store.sqlite import (
    UPSERT_ORDERS,
    OrderStore,
    Seed,
    busy_wait_seconds,
    order_row,
)
from agent_cli.store.tables import (
    APPROVAL_COLUMNS_NAMED,
    ARTICLES_TABLE,
    CONVERSATION_ADDRESS,
    CONVERSATION_INDEXES,
    CONVERSATION_OPENER,
    CONVERSATIONS_TABLE,
    DESK_TABLES,
    ORDER_COLUMNS,
    OUTBOX_INDEXES,
    RUN_LOG_TABLES,
    STATUS_CHECK,
    TABLES,
    TOKENS_TABLE,
    approvals_table,
    conversation_messages_table,
    order_changes_table,
    outbox_table,
    refunds_table,
    shop_rules_table,
    tickets_table,
)
from agent_cli.store.upgrades import amounts_to_minor_units
from agent_cli.text import mask_secrets

T = TypeVar("T")

CONNECT_TIMEOUT_S = 10
_ADVISORY_KEY = 0x61676E74  # "agnt": the lock migrations hold
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PASSWORD = re.compile(r"(://[^:/@]*:)([^@]*)(@)")

_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE orders (
            code TEXT PRIMARY KEY,
            status TEXT NOT NULL
                CHECK (status IN ('PENDING','SHIPPING','DELIVERED','CANCELLED','REFUNDED')),
            total BIGINT NOT NULL CHECK (total >= 0),
            currency TEXT NOT NULL DEFAULT 'JPY',
            delivered_at TEXT,
            customer TEXT,
            note TEXT
        )""",
        refunds_table("BIGSERIAL PRIMARY KEY"),
        "CREATE INDEX refunds_by_order ON refunds (order_code)",
        approvals_table("BIGSERIAL PRIMARY KEY"),
        "CREATE INDEX approvals_by_order ON approvals (order_code)",
        "CREATE INDEX approvals_by_status ON approvals (status)",
    ),
    # The desk (sqlite.py's migrations 4 and 5): amounts in minor units (upgrades.py moves the
    # data), the desk's statuses and columns on orders, its tables.
    (
        "ALTER TABLE orders DROP CONSTRAINT orders_status_check",
        f"ALTER TABLE orders ADD CONSTRAINT orders_status_check {STATUS_CHECK}",
        *(f"ALTER TABLE orders ADD COLUMN {column}" for column in ORDER_COLUMNS),
        *TABLES,
    ),
    (
        tickets_table("BIGSERIAL PRIMARY KEY"),
        "CREATE INDEX tickets_by_status ON tickets (status)",
    ),
    (
        order_changes_table("BIGSERIAL PRIMARY KEY"),
        "CREATE INDEX order_changes_by_order ON order_changes (order_code)",
        "ALTER TABLE approvals ALTER COLUMN order_code DROP NOT NULL",
        "ALTER TABLE approvals DROP CONSTRAINT approvals_amount_check",
        "ALTER TABLE approvals ADD CONSTRAINT approvals_amount_check CHECK (amount >= 0)",
    ),
    (
        ARTICLES_TABLE,
        "CREATE INDEX articles_search ON articles USING GIN (to_tsvector('simple', words))",
    ),
    (
        CONVERSATIONS_TABLE,
        conversation_messages_table("BIGSERIAL PRIMARY KEY"),
        *CONVERSATION_INDEXES,
    ),
    (TOKENS_TABLE,),
    (*CONVERSATION_ADDRESS, outbox_table("BIGSERIAL PRIMARY KEY"), *OUTBOX_INDEXES),
    CONVERSATION_OPENER,
    (shop_rules_table("BIGSERIAL PRIMARY KEY"),),
    (*RUN_LOG_TABLES,),  # a team's run log (record/team_log.py)
    APPROVAL_COLUMNS_NAMED,
)
SCHEMA_VERSION = len(_MIGRATIONS)
MINOR_UNITS_VERSION = 2  # a store older than this keeps whole units (upgrades.py)
_WRITTEN = ("SELECT", "INSERT", "UPDATE", "DELETE")
_NEEDED = {  # what the agent does to each table
    "agent_schema": ("SELECT",),
    "orders": ("SELECT", "INSERT", "UPDATE"),
    "refunds": ("SELECT", "INSERT"),
    "approvals": ("SELECT", "INSERT", "UPDATE"),
    **dict.fromkeys(DESK_TABLES, _WRITTEN),
    "tickets": ("SELECT", "INSERT", "UPDATE"),
    "order_changes": ("SELECT", "INSERT"),
    "articles": ("SELECT", "INSERT", "DELETE"),
    "conversations": ("SELECT", "INSERT", "UPDATE"),
    "conversation_messages": ("SELECT", "INSERT", "UPDATE"),
    "api_tokens": ("SELECT", "INSERT", "UPDATE"),
    "outbox": ("SELECT", "INSERT", "UPDATE"),
    "shop_rules": ("SELECT",),  # INSERT: only whoever may push the shop's rules
    "runs": _WRITTEN,
    "traces": _WRITTEN,
}


def masked(url: str) -> str:
    """The URL as it may be shown: any password in it replaced by ***."""
    return mask_secrets(_PASSWORD.sub(r"\1***\3", url))


def expanded(url: str) -> str:
    """`${NAME}` in the URL from the environment (a password kept out of the config file)."""

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in os.environ:
            raise StoreError(f"store.url names ${{{name}}}, which is not set in the environment")
        return os.environ[name]

    return _REFERENCE.sub(value, url)


class PostgresStore(OrderStore):
    """Orders, refunds and the approval queue in a PostgreSQL database."""

    FOR_UPDATE = " FOR UPDATE"
    FULL_TEXT = "tsvector"

    def __init__(self, connection: psycopg.Connection[Any], url: str) -> None:
        super().__init__(connection, Path(masked(url)))  # type: ignore[arg-type]
        self._pg = connection
        self.url = masked(url)

    @classmethod
    def connect(
        cls, url: str, *, seed: Seed | None = None, schema: str | None = None
    ) -> PostgresStore:
        """Connect and migrate; a new database gets `seed` (default: none, a team's data is
        its own); `schema`: everything in that schema (an eval's scratch copy, scratch.py).
        StoreError, naming the URL without its password, when the server cannot be reached
        or the login is refused."""
        try:
            connection = psycopg.connect(
                expanded(url),
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                options=f"-c search_path={schema}" if schema else "",
            )
        except psycopg.Error as exc:
            raise StoreError(
                f"Cannot connect to the order database {masked(url)}: {_first_line(exc)}; check "
                "store.url / AGENT_DB_URL, that the server is up, and PGPASSWORD or ~/.pgpass"
            ) from None
        store = cls(connection, url)
        store._migrate(() if seed is None else seed)
        return store

    def close(self) -> None:
        self._pg.close()

    def reusable(self) -> bool:
        """Open and idle: no transaction left open by an error (StorePool keeps only these)."""
        idle = psycopg.pq.TransactionStatus.IDLE
        return not self._pg.closed and self._pg.info.transaction_status == idle

    @property
    def where(self) -> str:
        return self.url

    def checkup(self) -> tuple[bool, str]:
        """For `agent doctor`: the server's version, the schema's, and any privilege the agent
        needs and lacks (False then, naming them)."""
        version = self._query("SHOW server_version")[0][0]
        schema = self._query("SELECT MAX(version) FROM agent_schema")[0][0]
        missing = [
            f"{privilege} on {table}"
            for table, privileges in _NEEDED.items()
            for privilege in privileges
            if not self._query(
                "SELECT has_table_privilege(current_user, ?, ?)", (table, privilege)
            )[0][0]
        ]
        detail = f"PostgreSQL {version}, schema version {schema}"
        if missing:
            return (
                False,
                f"{detail}; missing: {', '.join(missing)} (GRANT them to the agent's user)",
            )
        return True, detail

    def _migrate(self, seed: Seed = ()) -> None:
        if self._version() == SCHEMA_VERSION:  # the common case: a read, no lock, no DDL
            return
        with self._transaction(), _errors(self.url):
            self._pg.execute("SELECT pg_advisory_xact_lock(%s)", (_ADVISORY_KEY,))
            self._pg.execute("CREATE TABLE IF NOT EXISTS agent_schema (version INT NOT NULL)")
            row = self._pg.execute("SELECT MAX(version) FROM agent_schema").fetchone()
            version = int(row[0]) if row and row[0] is not None else 0
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"The order database {self.url} has schema version {version}, newer than "
                    f"this agent-cli knows ({SCHEMA_VERSION}): upgrade agent-cli"
                )
            for statements in _MIGRATIONS[version:]:
                for statement in statements:
                    self._pg.execute(statement)
            if version < SCHEMA_VERSION:
                self._pg.execute("INSERT INTO agent_schema VALUES (%s)", (SCHEMA_VERSION,))
                if version == 0:
                    self._seed(seed)
                elif version < MINOR_UNITS_VERSION:
                    amounts_to_minor_units(self)

    def _version(self) -> int | None:
        """The schema version, or None before the first migration (no lock taken)."""
        if self._query("SELECT to_regclass('agent_schema')")[0][0] is None:
            return None
        found = self._query("SELECT MAX(version) FROM agent_schema")[0][0]
        return None if found is None else int(found)

    def atomically(self, work: Callable[[], T]) -> T:
        """`work` in one transaction. PostgreSQL ends a deadlock or a serialization failure by
        rolling one transaction back: that one runs again, once, from the start, so every rule
        is checked again on the rows as they are then; a second conflict is a StoreError."""
        try:
            return super().atomically(work)
        except StoreConflict:
            return super().atomically(work)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with _errors(self.url):
            self._pg.execute("BEGIN")
            self._bound_waits()
        try:
            yield
            with _errors(self.url):
                self._pg.execute("COMMIT")
        except BaseException:
            if not self._pg.closed:
                self._pg.execute("ROLLBACK")
            raise

    def _bound_waits(self) -> None:
        """A lock is waited for at most the run's time left, as SQLite's busy timeout."""
        wait_ms = int(busy_wait_seconds() * 1000)
        self._pg.execute(f"SET LOCAL lock_timeout = {wait_ms}")
        self._pg.execute(f"SET LOCAL statement_timeout = {wait_ms + 5_000}")

    def _query(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]:
        with _errors(self.url):
            return self._pg.execute(_dialect(sql), params).fetchall()

    def execute(self, sql: str, params: tuple[object, ...] = ()) -> None:
        with _errors(self.url):
            self._pg.execute(_dialect(sql), params)

    def execute_many(self, sql: str, rows: Iterable[tuple[object, ...]]) -> None:
        rows = list(rows)
        if rows:
            with _errors(self.url), self._pg.cursor() as cursor:
                cursor.executemany(_dialect(sql), rows)

    def insert(self, sql: str, params: tuple[object, ...] = ()) -> int:
        with _errors(self.url):
            row = self._pg.execute(_dialect(sql) + " RETURNING id", params).fetchone()
        assert row is not None
        return int(row[0])

    def number_after(self, table: str) -> None:
        """After rows were written with their ids (a store moved in): the table's sequence
        moves past the largest, so the next row the store numbers is new."""
        self.query(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1,"
            f" false) FROM {table}"
        )

    def _lock_order(self, code: str) -> None:
        self._query("SELECT code FROM orders WHERE code = ? FOR UPDATE", (code,))

    def _upsert(self, orders: Iterable[Order]) -> None:
        rows = [order_row(order) for order in orders]
        if not rows:
            return
        with _errors(self.url), self._pg.cursor() as cursor:
            cursor.executemany(_dialect(UPSERT_ORDERS), rows)


class StoreConflict(StoreError):
    """The server rolled a transaction back to resolve a conflict with another one."""


def _dialect(sql: str) -> str:
    """Our statements are written with `?`; psycopg takes `%s` (and a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


def _first_line(exc: BaseException) -> str:
    return mask_secrets(
        str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    )


@contextmanager
def _errors(url: str) -> Iterator[None]:
    """psycopg's errors as ours: a lock not granted in time is StoreBusy (the run goes on);
    a lost connection or any other server error is a StoreError naming the database."""
    try:
        yield
    except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
        raise StoreConflict(
            f"The order database {url} rolled the change back: {_first_line(exc)}; "
            "nothing was written, try again"
        ) from None
    except psycopg.errors.DiskFull:
        raise StoreFull(
            f"The order database {url} could not be written: the server's disk is full. Nothing "
            "was changed; what the store held before is kept: free space on the server and try "
            "again"
        ) from None
    except psycopg.errors.ReadOnlySqlTransaction:
        raise StoreReadOnly(
            f"The order database {url} is read-only (a standby, or a read-only user): nothing "
            "was changed; point store.url at the primary, or a user who may write"
        ) from None
    except (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled):
        raise StoreBusy(
            "the order database is busy: another process holds a lock on an order; "
            "try again in a moment"
        ) from None
    except psycopg.OperationalError as exc:
        raise StoreError(
            f"The order database {url} failed: {_first_line(exc)}; check that the server is up"
        ) from None
    except (psycopg.errors.IntegrityError, psycopg.errors.DataError) as exc:  # a row it refuses
        raise StoreError(f"The order database {url} refused a row: {_first_line(exc)}") from None
    except psycopg.errors.InsufficientPrivilege as exc:
        first_line = _first_line(exc)
        if (
            "schema" in first_line
        ):  # making the tables: PostgreSQL 15 no longer lets everyone CREATE
            hint = (
                "the agent's user needs USAGE and CREATE on the schema to make its tables the "
                "first time (GRANT USAGE, CREATE ON SCHEMA public TO the user), or let the "
                "schema's owner run 'agent orders init' once"
            )
        else:
            hint = (
                "grant the agent's user the privileges on each table that docs/orders.md lists "
                "('agent doctor' names those it lacks)"
            )
        raise StoreError(f"The order database {url} refused: {first_line}; {hint}") from None


def scratch_schema(url: str, name: str, *, drop: bool = False) -> None:
    """Make (or drop, with everything in it) the schema `name` on the server at `url`: an eval
    case's scratch copy (scratch.py). `name` is ours: letters, digits and underscores."""
    statement = f"DROP SCHEMA IF EXISTS {name} CASCADE" if drop else f"CREATE SCHEMA {name}"
    try:
        with psycopg.connect(
            expanded(url), autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        ) as db:
            db.execute(statement)  # a name we made: letters, digits, _
    except psycopg.Error as exc:
        what = "drop" if drop else "make"
        raise StoreError(
            f"--store-url {masked(url)}: cannot {what} a schema: {_first_line(exc)}"
        ) from None
