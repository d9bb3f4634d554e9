"""The desk's data read back from either store: record by record for the tools (a customer by
id, email, or name and zip; a customer's orders; an order with its items, shipments and
payments; a product, a variant, the product types), and whole for an export (`load_desk`, in
the order it was written)."""

from __future__ import annotations

import dataclasses
import json
from collections import defaultdict
from collections.abc import Iterable
from datetime import date
from typing import Any

from agent_cli.domain.orders import (
    Address,
    ExchangeRequest,
    Order,
    OrderItem,
    Payment,
    ReturnRequest,
    Shipment,
    ShipmentEvent,
)
from agent_cli.domain.records import (
    Customer,
    DeskData,
    OrderChange,
    PaymentMethod,
    Product,
    Variant,
)
from agent_cli.store.bulk_writes import DeskStore

_CUSTOMER = (
    "SELECT id, first_name, last_name, email, address1, address2, city, state, country, zip"
    " FROM customers"
)
_METHODS = (
    "SELECT customer_id, id, source, brand, last_four, balance, currency FROM payment_methods"
)


def customer(store: DeskStore, customer_id: str) -> Customer | None:
    rows = store.query(_CUSTOMER + " WHERE id = ?", (customer_id,))
    if not rows:
        return None
    methods = store.query(_METHODS + " WHERE customer_id = ? ORDER BY position", (customer_id,))
    return _customer(rows[0], methods)


def customer_by_email(store: DeskStore, email: str) -> str | None:
    rows = store.query(
        "SELECT id FROM customers WHERE LOWER(email) = LOWER(?) ORDER BY position, id", (email,)
    )
    return str(rows[0][0]) if rows else None


def customer_by_name_zip(store: DeskStore, first: str, last: str, zip_code: str) -> str | None:
    rows = store.query(
        "SELECT id FROM customers WHERE LOWER(first_name) = LOWER(?)"
        " AND LOWER(last_name) = LOWER(?) AND zip = ? ORDER BY position, id",
        (first, last, zip_code),
    )
    return str(rows[0][0]) if rows else None


def customer_orders(store: DeskStore, customer_id: str) -> list[str]:
    rows = store.query(
        "SELECT code FROM orders WHERE customer_id = ? ORDER BY position, code", (customer_id,)
    )
    return [str(code) for (code,) in rows]


def desk_order(store: DeskStore, code: str) -> Order | None:
    """The order with its items, shipments and payments; None when there is none."""
    order = store.get(code)
    if order is None:
        return None
    (row,) = store.query(_ORDER_DESK + " WHERE code = ?", (code,))
    children = _children(store, " WHERE order_code = ?", (code,))
    return _desk_order(order, row, children)


def order_named(store: DeskStore, order_id: str) -> Order | None:
    """The order a customer or a model names, as written, in capitals, or with or without
    τ²-bench's `#` (`W2611340` is `#W2611340`; `#B200` is `B200`)."""
    bare = order_id.removeprefix("#")
    for code in dict.fromkeys((order_id, order_id.upper(), f"#{bare.upper()}", bare.upper())):
        if (found := desk_order(store, code)) is not None:
            return found
    return None


def changes(
    store: DeskStore, *, order: str | None = None, run_id: str | None = None
) -> list[OrderChange]:
    """The desk's committed writes, oldest first: of one order, or made by one run."""
    column, value = ("order_code", order) if order is not None else ("run_id", run_id)
    rows = store.query(
        "SELECT id, order_code, customer_id, tool, summary, made_by, run_id, made_at"
        f" FROM order_changes WHERE {column} = ? ORDER BY id",
        (value,),
    )
    return [
        OrderChange(int(r[0]), None if r[1] is None else str(r[1]), *(str(v) for v in r[2:]))
        for r in rows
    ]


def product(store: DeskStore, product_id: str) -> Product | None:
    rows = store.query("SELECT id, name FROM products WHERE id = ?", (product_id,))
    if not rows:
        return None
    variants = store.query(_VARIANTS + " WHERE product_id = ? ORDER BY position", (product_id,))
    return Product(str(rows[0][0]), str(rows[0][1]), tuple(_variant(v) for v in variants))


def variant(store: DeskStore, item_id: str) -> tuple[str, Variant] | None:
    """The variant with this item id and its product's id; None when there is none."""
    rows = store.query(_VARIANTS + " WHERE id = ? ORDER BY product_id", (item_id,))
    return (str(rows[0][0]), _variant(rows[0])) if rows else None


def product_types(store: DeskStore) -> dict[str, str]:
    """Product name -> product id, by name."""
    rows = store.query("SELECT name, id FROM products ORDER BY name, id")
    return {str(name): str(pid) for name, pid in rows}


def load_desk(store: DeskStore) -> DeskData:
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


def _orders_in_order(store: DeskStore) -> list[Any]:
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
            PaymentMethod(
                str(m[1]),
                m[2],
                m[3],
                m[4],
                None if m[5] is None else _int(m[5], f"payment_methods: {m[1]}: balance"),
                m[6],
            )
            for m in methods
        ),
    )


def _variant(row: Any) -> Variant:
    options = _loads(row[2], dict, f"variants: item {row[1]}: options")
    price = _int(row[4], f"variants: item {row[1]}: price")
    return Variant(str(row[1]), options, bool(row[3]), price, str(row[5]))


class _Children:
    def __init__(self) -> None:
        self.items: dict[str, list[OrderItem]] = defaultdict(list)
        self.shipments: dict[str, list[Any]] = defaultdict(list)
        self.events: dict[tuple[str, int], list[ShipmentEvent]] = defaultdict(list)
        self.payments: dict[str, list[Payment]] = defaultdict(list)


def _children(store: DeskStore, where: str, params: tuple[object, ...]) -> _Children:
    found = _Children()
    for code, item_id, product_id, name, price, options in store.query(
        "SELECT order_code, item_id, product_id, name, price, options FROM order_items"
        + where
        + " ORDER BY order_code, position",
        params,
    ):
        found.items[code].append(
            OrderItem(
                item_id,
                product_id,
                name,
                _int(price, f"order_items: order {code}: price"),
                _loads(options, dict, f"order_items: order {code}: options"),
            )
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
        paid = _int(amount, f"payments: order {code}: amount")
        found.payments[code].append(Payment(kind, paid, method, paid_at))
    return found


def _desk_order(order: Order, row: Any, children: _Children) -> Order:
    code = order.code
    address = Address(*(str(v) for v in row[2:8])) if row[2] is not None else None
    shipments = tuple(
        Shipment(
            tuple(_loads(s[2], list, f"shipments: order {code}: tracking_ids")),
            tuple(_loads(s[3], list, f"shipments: order {code}: item_ids")),
            s[4],
            date.fromisoformat(s[5]) if s[5] else None,
            tuple(children.events[(code, int(s[1]))]),
        )
        for s in children.shipments[code]
    )
    return dataclasses.replace(
        order,
        customer_id=row[1],
        address=address,
        items=tuple(children.items[code]),
        shipments=shipments,
        payments=tuple(children.payments[code]),
        placed_at=date.fromisoformat(row[8]) if row[8] else None,
        cancel_reason=row[9],
        exchange=_exchange(row[10]),
        returned=_returned(row[11]),
    )


def _exchange(text: str | None) -> ExchangeRequest | None:
    if text is None:
        return None
    fields = _loads(text, dict, "orders: exchange_request")
    try:
        return ExchangeRequest(
            tuple(fields["items"]),
            tuple(fields["new_items"]),
            str(fields["payment_method_id"]),
            int(fields["price_difference"]),
        )
    except (KeyError, TypeError, ValueError):
        raise UnreadableRecord("the order store's orders: exchange_request lacks a field") from None


def _returned(text: str | None) -> ReturnRequest | None:
    if text is None:
        return None
    fields = _loads(text, dict, "orders: return_request")
    try:
        return ReturnRequest(tuple(fields["items"]), str(fields["payment_method_id"]))
    except (KeyError, TypeError):
        raise UnreadableRecord("the order store's orders: return_request lacks a field") from None


class UnreadableRecord(ValueError):
    """A desk row whose JSON text was changed by hand into something else: named, one line."""


def _loads(text: object, kind: type, where: str) -> Any:
    """A JSON column's value, of the kind it must be; UnreadableRecord naming the row."""
    try:
        value = json.loads(str(text))
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, kind):
        raise UnreadableRecord(f"the order store's {where} is not a JSON {kind.__name__}")
    return value


def _int(value: object, where: str) -> int:
    """A money column's value; UnreadableRecord naming the row when it holds something else
    (SQLite keeps whatever text a hand-made UPDATE put there)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UnreadableRecord(f"the order store's {where} is not a whole amount: {value!r:.40}")
    return value
