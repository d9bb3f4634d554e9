"""Moving a store whole into another (`agent orders import --from-sqlite FILE`): a SQLite
file into the team's PostgreSQL, or back into a SQLite file. Every table the store holds is
copied (orders and the desk's customers, payment methods, products, variants, items,
shipments, payments; refunds, the approval queue, tickets, the changes the desk made, the help
centre's articles), ids as they are, in one transaction of the target, so a failure leaves it
as it was. The target must be empty, or emptied first (`replace`, in the same transaction).

Every value read is checked before anything is written (a number where one belongs, a date that
is a date, no NUL, which PostgreSQL cannot hold; an approval item as the queue reads one): a bad
one is one line naming the file, the table, the row and the column, and nothing is copied. When
the rows are in, the target is counted and its money summed, table by table, and must match
what was read, or the transaction is rolled back.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from agent_cli.domain.currencies import money
from agent_cli.domain.records import Article
from agent_cli.errors import (
    OrderFileError,
    StoreBusy,
    StoreError,
    StoreFull,
    StoreReadOnly,
)
from agent_cli.store.approval_items import ITEM_COLUMNS, MAX_ID, Unreadable, read_item
from agent_cli.store.help_articles import listed, write_articles
from agent_cli.store.sqlite import OrderStore


@dataclass(frozen=True, slots=True)
class Table:
    """A table as a move copies it: its columns, which hold whole numbers (money among them,
    summed on both sides), yes/no values and dates; `serial`: ids the store numbers itself."""

    name: str
    columns: tuple[str, ...]
    whole: tuple[str, ...] = ()
    money: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    dates: tuple[str, ...] = ()
    serial: bool = False


def _table(name: str, columns: str, **kinds: Any) -> Table:
    return Table(name, tuple(columns.split()), **kinds)


# Parents first: copied in this order, emptied in the reverse.
TABLES = (
    _table(
        "customers",
        "id position first_name last_name email address1 address2 city state country zip",
        whole=("position",),
    ),
    _table(
        "payment_methods",
        "customer_id id position source brand last_four balance currency",
        whole=("position",),
        money=("balance",),
    ),
    _table("products", "id position name", whole=("position",)),
    _table(
        "variants",
        "product_id id position options available price currency",
        whole=("position",),
        money=("price",),
        flags=("available",),
    ),
    _table(
        "orders",
        "code status total currency delivered_at customer note position customer_id address1 "
        "address2 city state country zip placed_at cancel_reason exchange_request return_request",
        whole=("position",),
        money=("total",),
        dates=("delivered_at",),
    ),
    _table(
        "order_items",
        "order_code position item_id product_id name price options",
        whole=("position",),
        money=("price",),
    ),
    _table(
        "shipments",
        "order_code position tracking_ids item_ids carrier estimated_delivery",
        whole=("position",),
    ),
    _table(
        "shipment_events",
        "order_code shipment position happened_at place description",
        whole=("shipment", "position"),
    ),
    _table(
        "payments",
        "order_code position kind amount payment_method_id paid_at",
        whole=("position",),
        money=("amount",),
    ),
    _table(
        "refunds",
        "id order_code amount reason created_at idempotency_key",
        whole=("id",),
        money=("amount",),
        dates=("created_at",),
        serial=True,
    ),
    _table(
        "approvals",
        ITEM_COLUMNS.replace(",", " "),
        whole=("id", "refund_id"),
        money=("amount",),
        serial=True,
    ),
    _table(
        "tickets",
        "id status customer_id order_code summary question run_id opened_at claimed_by "
        "claimed_at closed_by closed_at note",
        whole=("id",),
        dates=("opened_at", "claimed_at", "closed_at"),
        serial=True,
    ),
    _table(
        "conversations",
        "id channel status customer_id asserted_by state created_at updated_at closed_by "
        "lease_owner lease_until external_id address opened_by",
        dates=("created_at", "updated_at", "lease_until"),
    ),
    _table(
        "conversation_messages",
        "id conversation_id role kind text at run_id message_key reply",
        whole=("id",),
        dates=("at",),
        serial=True,
    ),
    _table(
        "outbox",
        "id conversation_id message_id kind key status attempts next_at claimed_by "
        "claimed_until last_error created_at sent_at",
        whole=("id", "message_id", "attempts"),
        dates=("next_at", "claimed_until", "created_at", "sent_at"),
        serial=True,
    ),
    _table(
        "shop_rules",
        "id body pushed_by pushed_at",
        whole=("id",),
        dates=("pushed_at",),
        serial=True,
    ),
    _table(
        "api_tokens",
        "name scope digest created_at created_by revoked_at revoked_by",
        dates=("created_at", "revoked_at"),
    ),
    _table(
        "order_changes",
        "id order_code customer_id tool summary amount currency made_by run_id made_at",
        whole=("id",),
        money=("amount",),
        dates=("made_at",),
        serial=True,
    ),
)
ARTICLES = "articles"  # copied through help_articles.py, which keeps the search index


@dataclass(frozen=True, slots=True)
class Read:
    """A store as read: each table's rows, and its articles."""

    rows: dict[str, list[tuple[Any, ...]]]
    articles: list[Article]

    def counts(self) -> dict[str, int]:
        counted = {name: len(rows) for name, rows in self.rows.items()}
        return {**counted, ARTICLES: len(self.articles)}

    def sums(self) -> dict[str, int]:
        """Each money column's sum, as `table.column`."""
        found = {}
        for table in TABLES:
            for column in table.money:
                at = table.columns.index(column)
                found[f"{table.name}.{column}"] = sum(row[at] or 0 for row in self.rows[table.name])
        return found


@dataclass(frozen=True, slots=True)
class Moved:
    """What a move copied: rows by table, money sums by column, and what the target held and
    lost first (`replace`), by table."""

    counts: dict[str, int]
    sums: dict[str, int]
    replaced: dict[str, int]


class StoreNotEmpty(OrderFileError):
    """The target holds rows and `replace` was not given: nothing was copied."""


def read_store(origin: OrderStore, *, source: str) -> Read:
    """Every table of `origin` (named `source` in messages), as it stood at one moment, every
    value checked."""

    def read() -> Read:
        rows = {}
        for table in TABLES:
            found = origin.query(f"SELECT {', '.join(table.columns)} FROM {table.name} ORDER BY 1")
            rows[table.name] = [_checked(table, row, n, source) for n, row in enumerate(found, 1)]
        return Read(rows, listed(origin))

    return origin.atomically(read)


def move_store(
    origin: OrderStore, target: OrderStore, *, source: str, replace: bool = False
) -> Moved:
    """Copy `origin` into `target`, all or nothing."""
    read = read_store(origin, source=source)

    def copy() -> Moved:
        held = held_rows(target)
        if any(held.values()) and not replace:
            raise StoreNotEmpty(_not_empty(held))
        if replace:
            _empty(target)
        for table in TABLES:
            _insert(target, table, read.rows[table.name], source)
            if table.serial:
                target.number_after(table.name)  # a new row gets an id after those copied
        write_articles(target, read.articles)
        _verify(target, read)
        _within_totals(target, source)
        return Moved(read.counts(), read.sums(), {k: v for k, v in held.items() if v})

    return target.atomically(copy)


def held_rows(store: OrderStore) -> dict[str, int]:
    """How many rows each table of `store` holds."""
    names = [table.name for table in TABLES] + [ARTICLES]
    return {name: int(store.query(f"SELECT COUNT(*) FROM {name}")[0][0]) for name in names}


def _checked(table: Table, row: tuple[Any, ...], number: int, source: str) -> tuple[Any, ...]:
    values = dict(zip(table.columns, row, strict=True))
    where = f"{source}: table {table.name}, row {number} ({table.columns[0]} {row[0]!r})"
    for column, value in values.items():
        if problem := _problem(table, column, value):
            raise OrderFileError(f"{where}: {problem}; nothing copied")
    if table.name == "approvals" and isinstance(item := read_item(row), Unreadable):
        raise OrderFileError(f"{where}: {item.problem}; nothing copied")
    return tuple(bool(v) if c in table.flags else v for c, v in values.items())


def _problem(table: Table, column: str, value: Any) -> str | None:
    if value is None:
        return None  # the target's NOT NULL says whether it may be missing
    if column in table.whole or column in table.money:
        whole = isinstance(value, int) and not isinstance(value, bool)
        return None if whole and abs(value) <= MAX_ID else f"{column} {value!r} is not a number"
    if column in table.flags:
        return None if value in (0, 1) else f"{column} {value!r} is not yes or no"
    return _text_problem(column, value, is_date=column in table.dates)


def _text_problem(column: str, value: Any, *, is_date: bool) -> str | None:
    if not isinstance(value, str):
        return f"{column} {value!r} is not text"
    if "\x00" in value:
        return f"{column} holds a NUL character, which PostgreSQL cannot store"
    if is_date and not _is_date(value):
        return f"{column} {value!r} is not a date or a timestamp"
    return None


def _is_date(value: str) -> bool:
    try:
        (date if len(value) == 10 else datetime).fromisoformat(value)
    except ValueError:
        return False
    return True


def _insert(target: OrderStore, table: Table, rows: list[tuple[Any, ...]], source: str) -> None:
    marks = ", ".join("?" * len(table.columns))
    sql = f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES ({marks})"
    for number, row in enumerate(rows, start=1):
        try:
            target.execute(sql, row)
        except (StoreBusy, StoreFull, StoreReadOnly):
            raise
        except (StoreError, sqlite3.IntegrityError) as exc:  # a constraint of the target's
            raise _refused(source, table, number, row, str(exc)) from None


def _refused(source: str, table: Table, number: int, row: tuple[Any, ...], why: str) -> Exception:
    where = f"{source}: table {table.name}, row {number} ({table.columns[0]} {row[0]!r})"
    return OrderFileError(f"{where}: the store refused it ({why}); nothing copied")


def _empty(target: OrderStore) -> None:
    for table in reversed(TABLES):
        target.execute(f"DELETE FROM {table.name}")
    target.execute(f"DELETE FROM {ARTICLES}")
    if target.FULL_TEXT == "fts5":
        target.execute("DELETE FROM articles_fts")


def _verify(target: OrderStore, read: Read) -> None:
    """The target counted and summed after the copy, against what was read."""
    there = held_rows(target)
    sums = {
        f"{table.name}.{column}": int(
            target.query(f"SELECT COALESCE(SUM({column}), 0) FROM {table.name}")[0][0]
        )
        for table in TABLES
        for column in table.money
    }
    for name, count in read.counts().items():
        if there[name] != count:
            raise StoreError(
                f"the copy does not add up: {name} has {there[name]} rows, {count} were read; "
                "nothing copied (the target was rolled back): report this"
            )
    for name, total in read.sums().items():
        if sums[name] != total:
            raise StoreError(
                f"the copy does not add up: {name} sums to {sums[name]}, {total} was read; "
                "nothing copied (the target was rolled back): report this"
            )


def _within_totals(target: OrderStore, source: str) -> None:
    """No order's refunds come to more than its total (the ledger's first rule)."""
    over = target.query(
        "SELECT o.code, o.total, o.currency, SUM(r.amount) FROM orders o JOIN refunds r"
        " ON r.order_code = o.code GROUP BY o.code, o.total, o.currency"
        " HAVING SUM(r.amount) > o.total ORDER BY o.code LIMIT 1"
    )
    if over:
        code, total, currency, refunded = over[0]
        raise OrderFileError(
            f"{source}: the refunds of order {code} come to {money(int(refunded), currency)}, "
            f"more than its total of {money(int(total), currency)}; nothing copied"
        )


def _not_empty(held: dict[str, int]) -> str:
    listed_rows = ", ".join(f"{name} {count:,}" for name, count in held.items() if count)
    return (
        f"the target store is not empty ({listed_rows}); a move copies a store whole into an "
        "empty one: add --replace to empty the target first (everything it holds goes, in the "
        "same transaction), or move it into an empty store"
    )
