"""The desk's data in the order store, on either backend: written whole (an import, the sample
shop) in the caller's transaction, read back record by record for the tools and whole for an
export. Every statement is the store's (`?` placeholders, `execute`/`query`), so SQLite and
PostgreSQL run the same code."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any

from agent_cli.store.desk import (
    Address,
    Customer,
    DeskData,
    DeskOrder,
    ExchangeRequest,
    OrderItem,
    Payment,
    PaymentMethod,
    Product,
    ReturnRequest,
    Shipment,
    ShipmentEvent,
    Variant,
)
from agent_cli.store.desk_schema import DESK_TABLES
from agent_cli.store.sqlite import OrderStore

Progress = Callable[[int], None]  # told how many records were written since it was last told


def save_desk(
    store: OrderStore, data: DeskData, *, replace: bool = False, progress: Progress | None = None
) -> None:
    """Write the desk data in one transaction: all of it, or nothing. Records with an id the
    store holds replace it (an order's items, shipments and payments with it); `replace`
    empties the desk's tables and the orders first (refunds and the approval queue stay)."""

    def work() -> None:
        if replace:
            for table in DESK_TABLES:
                store.execute(f"DELETE FROM {table}")
            store.execute("DELETE FROM orders")
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

    store.atomically(work)


def _next_position(store: OrderStore, table: str) -> int:
    """Where written records start: after what the table holds, so a second import lists
    after the first."""
    ((last,),) = store.query(f"SELECT MAX(position) FROM {table}")
    return 0 if last is None else int(last) + 1


def _customers(store: OrderStore, customers: tuple[Customer, ...], first: int) -> None:
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


def _products(store: OrderStore, products: tuple[Product, ...], first: int) -> None:
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
            (p.id, v.item_id, n, _json(v.options), v.available, v.price, v.currency)
            for p in products
            for n, v in enumerate(p.variants)
        ],
    )


_CHILDREN = ("order_items", "shipments", "shipment_events", "payments")


def _orders(store: OrderStore, orders: tuple[DeskOrder, ...], first: int) -> None:
    store.upsert_locked(o.order for o in orders)
    codes = [(o.code,) for o in orders]
    for table in _CHILDREN:
        store.execute_many(f"DELETE FROM {table} WHERE order_code = ?", codes)
    store.execute_many(
        "UPDATE orders SET position = ?, customer_id = ?, address1 = ?, address2 = ?, city = ?,"
        " state = ?, country = ?, zip = ?, placed_at = ?, cancel_reason = ?,"
        " exchange_request = ?, return_request = ? WHERE code = ?",
        [_desk_columns(o, first + n) for n, o in enumerate(orders)],
    )
    store.execute_many(
        "INSERT INTO order_items (order_code, position, item_id, product_id, name, price,"
        " options) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (o.code, n, i.item_id, i.product_id, i.name, i.price, _json(i.options))
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


def _shipments(store: OrderStore, orders: tuple[DeskOrder, ...]) -> None:
    store.execute_many(
        "INSERT INTO shipments (order_code, position, tracking_ids, item_ids, carrier,"
        " estimated_delivery) VALUES (?, ?, ?, ?, ?, ?)",
        [
            (o.code, n, _json(s.tracking_ids), _json(s.item_ids), s.carrier, _day(s))
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


def _desk_columns(o: DeskOrder, position: int) -> tuple[object, ...]:
    exchange = None
    if o.exchange is not None:
        exchange = _json(
            {
                "items": o.exchange.items,
                "new_items": o.exchange.new_items,
                "payment_method_id": o.exchange.payment_method_id,
                "price_difference": o.exchange.price_difference,
            }
        )
    returned = None
    if o.returned is not None:
        returned = _json(
            {"items": o.returned.items, "payment_method_id": o.returned.payment_method_id}
        )
    address = _address(o.address) if o.address else (None,) * 6
    placed = o.placed_at.isoformat() if o.placed_at else None
    return (position, o.customer_id, *address, placed, o.cancel_reason, exchange, returned, o.code)


def _address(a: Address) -> tuple[str, ...]:
    return (a.address1, a.address2, a.city, a.state, a.country, a.zip)


def _day(s: Shipment) -> str | None:
    return s.estimated_delivery.isoformat() if s.estimated_delivery else None


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


# Reads -------------------------------------------------------------------------------------

_CUSTOMER = (
    "SELECT id, first_name, last_name, email, address1, address2, city, state, country, zip"
    " FROM customers"
)
_METHODS = (
    "SELECT customer_id, id, source, brand, last_four, balance, currency FROM payment_methods"
)


def customer(store: OrderStore, customer_id: str) -> Customer | None:
    rows = store.query(_CUSTOMER + " WHERE id = ?", (customer_id,))
    if not rows:
        return None
    methods = store.query(_METHODS + " WHERE customer_id = ? ORDER BY position", (customer_id,))
    return _customer(rows[0], methods)


def customer_by_email(store: OrderStore, email: str) -> str | None:
    rows = store.query(
        "SELECT id FROM customers WHERE LOWER(email) = LOWER(?) ORDER BY position, id", (email,)
    )
    return str(rows[0][0]) if rows else None


def customer_by_name_zip(store: OrderStore, first: str, last: str, zip_code: str) -> str | None:
    rows = store.query(
        "SELECT id FROM customers WHERE LOWER(first_name) = LOWER(?)"
        " AND LOWER(last_name) = LOWER(?) AND zip = ? ORDER BY position, id",
        (first, last, zip_code),
    )
    return str(rows[0][0]) if rows else None


def customer_orders(store: OrderStore, customer_id: str) -> list[str]:
    rows = store.query(
        "SELECT code FROM orders WHERE customer_id = ? ORDER BY position, code", (customer_id,)
    )
    return [str(code) for (code,) in rows]


def desk_order(store: OrderStore, code: str) -> DeskOrder | None:
    """The order with its items, shipments and payments; None when there is none."""
    order = store.get(code)
    if order is None:
        return None
    (row,) = store.query(_ORDER_DESK + " WHERE code = ?", (code,))
    children = _children(store, " WHERE order_code = ?", (code,))
    return _desk_order(order, row, children)


def product(store: OrderStore, product_id: str) -> Product | None:
    rows = store.query("SELECT id, name FROM products WHERE id = ?", (product_id,))
    if not rows:
        return None
    variants = store.query(_VARIANTS + " WHERE product_id = ? ORDER BY position", (product_id,))
    return Product(str(rows[0][0]), str(rows[0][1]), tuple(_variant(v) for v in variants))


def variant(store: OrderStore, item_id: str) -> tuple[str, Variant] | None:
    """The variant with this item id and its product's id; None when there is none."""
    rows = store.query(_VARIANTS + " WHERE id = ? ORDER BY product_id", (item_id,))
    return (str(rows[0][0]), _variant(rows[0])) if rows else None


def product_types(store: OrderStore) -> dict[str, str]:
    """Product name -> product id, by name."""
    rows = store.query("SELECT name, id FROM products ORDER BY name, id")
    return {str(name): str(pid) for name, pid in rows}


def load_desk(store: OrderStore) -> DeskData:
    """Everything the desk holds, in the order it was written (for an export)."""
    methods: dict[str, list[Any]] = defaultdict(list)
    for row in store.query(_METHODS + " ORDER BY customer_id, position"):
        methods[str(row[0])].append(row)
    customers = tuple(
        _customer(row, methods[str(row[0])])
        for row in store.query(_CUSTOMER + " ORDER BY position, id")
    )
    variants: dict[str, list[Variant]] = defaultdict(list)
    for row in store.query(_VARIANTS + " ORDER BY product_id, position"):
        variants[str(row[0])].append(_variant(row))
    products = tuple(
        Product(str(pid), str(name), tuple(variants[str(pid)]))
        for pid, name in store.query("SELECT id, name FROM products ORDER BY position, id")
    )
    children = _children(store, "", ())
    desk_rows = {str(row[0]): row for row in store.query(_ORDER_DESK)}
    orders = tuple(
        _desk_order(order, desk_rows[order.code], children) for order in _orders_in_order(store)
    )
    return DeskData(customers, products, orders)


def _orders_in_order(store: OrderStore) -> list[Any]:
    codes = [str(c) for (c,) in store.query("SELECT code FROM orders ORDER BY position, code")]
    by_code = {order.code: order for order in store.all()}
    return [by_code[code] for code in codes]


_ORDER_DESK = (
    "SELECT code, customer_id, address1, address2, city, state, country, zip, placed_at,"
    " cancel_reason, exchange_request, return_request FROM orders"
)
_VARIANTS = "SELECT product_id, id, options, available, price, currency FROM variants"


def _customer(row: Any, methods: Iterable[Any]) -> Customer:
    return Customer(
        str(row[0]),
        str(row[1]),
        str(row[2]),
        str(row[3]),
        Address(*(str(v) for v in row[4:10])),
        tuple(
            PaymentMethod(str(m[1]), m[2], m[3], m[4], None if m[5] is None else int(m[5]), m[6])
            for m in methods
        ),
    )


def _variant(row: Any) -> Variant:
    return Variant(str(row[1]), json.loads(row[2]), bool(row[3]), int(row[4]), str(row[5]))


class _Children:
    def __init__(self) -> None:
        self.items: dict[str, list[OrderItem]] = defaultdict(list)
        self.shipments: dict[str, list[Any]] = defaultdict(list)
        self.events: dict[tuple[str, int], list[ShipmentEvent]] = defaultdict(list)
        self.payments: dict[str, list[Payment]] = defaultdict(list)


def _children(store: OrderStore, where: str, params: tuple[object, ...]) -> _Children:
    found = _Children()
    for code, item_id, product_id, name, price, options in store.query(
        "SELECT order_code, item_id, product_id, name, price, options FROM order_items"
        + where
        + " ORDER BY order_code, position",
        params,
    ):
        found.items[code].append(
            OrderItem(item_id, product_id, name, int(price), json.loads(options))
        )
    for row in store.query(
        "SELECT order_code, position, tracking_ids, item_ids, carrier, estimated_delivery"
        " FROM shipments" + where + " ORDER BY order_code, position",
        params,
    ):
        found.shipments[str(row[0])].append(row)
    for code, shipment, at, place, description in store.query(
        "SELECT order_code, shipment, happened_at, place, description FROM shipment_events"
        + where
        + " ORDER BY order_code, shipment, position",
        params,
    ):
        found.events[(code, int(shipment))].append(ShipmentEvent(at, place, description))
    for code, kind, amount, method, paid_at in store.query(
        "SELECT order_code, kind, amount, payment_method_id, paid_at FROM payments"
        + where
        + " ORDER BY order_code, position",
        params,
    ):
        found.payments[code].append(Payment(kind, int(amount), method, paid_at))
    return found


def _desk_order(order: Any, row: Any, children: _Children) -> DeskOrder:
    code = order.code
    address = Address(*(str(v) for v in row[2:8])) if row[2] is not None else None
    shipments = tuple(
        Shipment(
            tuple(json.loads(s[2])),
            tuple(json.loads(s[3])),
            s[4],
            date.fromisoformat(s[5]) if s[5] else None,
            tuple(children.events[(code, int(s[1]))]),
        )
        for s in children.shipments[code]
    )
    return DeskOrder(
        order,
        row[1],
        address,
        tuple(children.items[code]),
        shipments,
        tuple(children.payments[code]),
        date.fromisoformat(row[8]) if row[8] else None,
        row[9],
        _exchange(row[10]),
        _returned(row[11]),
    )


def _exchange(text: str | None) -> ExchangeRequest | None:
    if text is None:
        return None
    fields = json.loads(text)
    return ExchangeRequest(
        tuple(fields["items"]),
        tuple(fields["new_items"]),
        fields["payment_method_id"],
        int(fields["price_difference"]),
    )


def _returned(text: str | None) -> ReturnRequest | None:
    if text is None:
        return None
    fields = json.loads(text)
    return ReturnRequest(tuple(fields["items"]), fields["payment_method_id"])
