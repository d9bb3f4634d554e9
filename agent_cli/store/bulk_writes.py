"""The desk's data written into the order store, on either backend: whole (an import, the
sample shop), all or nothing (record_reads.py reads it back). Every statement is the store's (`?`
placeholders, `execute`/`query`), so SQLite and PostgreSQL run the same code."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from agent_cli.domain.orders import Address, Order, Refund, Shipment, refund_key
from agent_cli.domain.records import Customer, DeskData, Product
from agent_cli.store.tables import DESK_TABLES

Progress = Callable[[int], None]  # told how many records were written since it was last told
T = TypeVar("T")


class DeskStore(Protocol):
    """What this module needs of a store (sqlite.py's `OrderStore`, postgres.py's subclass);
    a protocol, so the store can seed a new database with the sample shop through this module
    without the two importing each other."""

    FOR_UPDATE: str  # appended to a SELECT to hold its rows until the commit (PostgreSQL)
    FULL_TEXT: str  # how the help centre is searched: "fts5" (SQLite) or "tsvector"

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[Any]: ...
    def execute(self, sql: str, params: tuple[object, ...] = ()) -> None: ...
    def execute_many(self, sql: str, rows: Iterable[tuple[object, ...]]) -> None: ...
    def insert(self, sql: str, params: tuple[object, ...] = ()) -> int: ...
    def upsert_locked(self, orders: Iterable[Order]) -> None: ...
    def atomically(self, work: Callable[[], T]) -> T: ...
    def get(self, code: str) -> Order | None: ...
    def all(self) -> list[Order]: ...


def save_desk(
    store: DeskStore, data: DeskData, *, replace: bool = False, progress: Progress | None = None
) -> None:
    """Write the desk data in one transaction: all of it, or nothing. Records with an id the
    store holds replace it (an order's items, shipments and payments with it); `replace`
    empties the desk's tables and the orders first (refunds and the approval queue stay)."""

    def work() -> None:
        if replace:
            for table in DESK_TABLES:
                store.execute(f"DELETE FROM {table}")
            store.execute("DELETE FROM orders")
        write_desk(store, data, progress)

    store.atomically(work)


def write_desk(store: DeskStore, data: DeskData, progress: Progress | None = None) -> None:
    """`save_desk`'s writes, in a transaction the caller holds (a new store's seed)."""
    _customers(store, data.customers, _next_position(store, "customers"))
    _products(store, data.products, _next_position(store, "products"))
    if progress is not None:
        progress(len(data.customers) + len(data.products))
    first = _next_position(store, "orders")
    for start in range(0, len(data.orders), 100):
        batch = data.orders[start : start + 100]
        _orders(store, batch, first + start)
        if progress is not None:
            progress(len(batch))
    _refunds(store, data.refunds)


def _refunds(store: DeskStore, refunds: tuple[Refund, ...]) -> None:
    for r in refunds:
        key = refund_key(r.order_code, r.amount, r.reason)
        if not store.query("SELECT id FROM refunds WHERE idempotency_key = ?", (key,)):
            store.execute(
                "INSERT INTO refunds (order_code, amount, reason, created_at, idempotency_key)"
                " VALUES (?, ?, ?, ?, ?)",
                (r.order_code, r.amount, r.reason, r.created_at, key),
            )


def _next_position(store: DeskStore, table: str) -> int:
    """Where written records start: after what the table holds, so a second import lists
    after the first."""
    ((last,),) = store.query(f"SELECT MAX(position) FROM {table}")
    return 0 if last is None else int(last) + 1


def _customers(store: DeskStore, customers: tuple[Customer, ...], first: int) -> None:
    ids = [(c.id,) for c in customers]
    store.execute_many("DELETE FROM payment_methods WHERE customer_id = ?", ids)
    store.execute_many("DELETE FROM customers WHERE id = ?", ids)
    store.execute_many(
        "INSERT INTO customers (id, position, first_name, last_name, email, address1, address2,"
        " city, state, country, zip) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (c.id, first + n, c.first_name, c.last_name, c.email, *_address(c.address))
            for n, c in enumerate(customers)
        ],
    )
    store.execute_many(
        "INSERT INTO payment_methods (customer_id, id, position, source, brand, last_four,"
        " balance, currency) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (c.id, m.id, n, m.source, m.brand, m.last_four, m.balance, m.currency)
            for c in customers
            for n, m in enumerate(c.payment_methods)
        ],
    )


def _products(store: DeskStore, products: tuple[Product, ...], first: int) -> None:
    ids = [(p.id,) for p in products]
    store.execute_many("DELETE FROM variants WHERE product_id = ?", ids)
    store.execute_many("DELETE FROM products WHERE id = ?", ids)
    store.execute_many(
        "INSERT INTO products (id, position, name) VALUES (?, ?, ?)",
        [(p.id, first + n, p.name) for n, p in enumerate(products)],
    )
    store.execute_many(
        "INSERT INTO variants (product_id, id, position, options, available, price, currency)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (p.id, v.item_id, n, json_text(v.options), v.available, v.price, v.currency)
            for p in products
            for n, v in enumerate(p.variants)
        ],
    )


_CHILDREN = ("order_items", "shipments", "shipment_events", "payments")


def _orders(store: DeskStore, orders: tuple[Order, ...], first: int) -> None:
    store.upsert_locked(o for o in orders)
    codes = [(o.code,) for o in orders]
    for table in _CHILDREN:
        store.execute_many(f"DELETE FROM {table} WHERE order_code = ?", codes)
    store.execute_many(
        "UPDATE orders SET position = ?, customer_id = ?, address1 = ?, address2 = ?, city = ?,"
        " state = ?, country = ?, zip = ?, placed_at = ?, cancel_reason = ?,"
        " exchange_request = ?, return_request = ? WHERE code = ?",
        [(first + n, *desk_columns(o)) for n, o in enumerate(orders)],
    )
    store.execute_many(
        "INSERT INTO order_items (order_code, position, item_id, product_id, name, price,"
        " options) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (o.code, n, i.item_id, i.product_id, i.name, i.price, json_text(i.options))
            for o in orders
            for n, i in enumerate(o.items)
        ],
    )
    _shipments(store, orders)
    store.execute_many(
        "INSERT INTO payments (order_code, position, kind, amount, payment_method_id, paid_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (o.code, n, p.kind, p.amount, p.payment_method_id, p.paid_at)
            for o in orders
            for n, p in enumerate(o.payments)
        ],
    )


def _shipments(store: DeskStore, orders: tuple[Order, ...]) -> None:
    store.execute_many(
        "INSERT INTO shipments (order_code, position, tracking_ids, item_ids, carrier,"
        " estimated_delivery) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (o.code, n, json_text(s.tracking_ids), json_text(s.item_ids), s.carrier, _day(s))
            for o in orders
            for n, s in enumerate(o.shipments)
        ],
    )
    store.execute_many(
        "INSERT INTO shipment_events (order_code, shipment, position, happened_at, place,"
        " description) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (o.code, n, m, e.happened_at, e.place, e.description)
            for o in orders
            for n, s in enumerate(o.shipments)
            for m, e in enumerate(s.events)
        ],
    )


def desk_columns(o: Order) -> tuple[object, ...]:
    """The desk's columns of an order row, in the order the UPDATEs here name them, then its
    code (the WHERE's)."""
    exchange = None
    if o.exchange is not None:
        exchange = json_text(
            {
                "items": o.exchange.items,
                "new_items": o.exchange.new_items,
                "payment_method_id": o.exchange.payment_method_id,
                "price_difference": o.exchange.price_difference,
            }
        )
    returned = None
    if o.returned is not None:
        returned = json_text(
            {"items": o.returned.items, "payment_method_id": o.returned.payment_method_id}
        )
    address = _address(o.address) if o.address else (None,) * 6
    placed = o.placed_at.isoformat() if o.placed_at else None
    return (o.customer_id, *address, placed, o.cancel_reason, exchange, returned, o.code)


def _address(a: Address) -> tuple[str, ...]:
    return (a.address1, a.address2, a.city, a.state, a.country, a.zip)


def _day(s: Shipment) -> str | None:
    return s.estimated_delivery.isoformat() if s.estimated_delivery else None


def json_text(value: object) -> str:
    """A JSON column's text (kept as written: not ASCII-escaped)."""
    return json.dumps(value, ensure_ascii=False)
